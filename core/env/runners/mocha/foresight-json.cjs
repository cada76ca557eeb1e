'use strict';
/**
 * mocha --reporter <this file>: mocha's own json reporter, its report appended to $FORESIGHT_MOCHA_REPORT
 * as one line of JSON, each entry of tests/pending/failures/passes with what mocha's json leaves out:
 * `titlePath` (the describe titles and the title apart; `fullTitle` joins them with spaces), `state`,
 * `type` (`test`, or `hook` for a failed hook) and `file` where mocha's omits it. It creates
 * $FORESIGHT_MOCHA_STARTED when mocha constructs it, which mocha does after it has loaded every spec
 * file: the run script's sign that no file failed to load. Works with mocha 2 and later.
 */
const fs = require('fs');

function mochaModule() {
  // The repository's mocha, the one running this reporter.
  try {
    return require(require.resolve('mocha', { paths: [process.cwd()] }));
  } catch (err) {
    return require.main.require('mocha');
  }
}

function titlePath(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  const titles = [];
  for (let r = runnable; r && r.parent; r = r.parent) titles.unshift(r.title);
  return titles;
}

function fileOf(runnable) {
  for (let r = runnable; r; r = r.parent) if (r.file) return r.file;
  return undefined;
}

function ForesightJSON(runner, options) {
  fs.writeFileSync(process.env.FORESIGHT_MOCHA_STARTED, 'started\n');
  // mocha >= 9.1 writes its json to reporterOption.output instead of standard output: nowhere, since
  // this reporter writes the report (older ones print it, which only lengthens the log).
  const opts = Object.assign({}, options, { reporterOption: Object.assign({}, options && options.reporterOption, { output: '/dev/null' }) });
  const base = new (mochaModule().reporters.JSON)(runner, opts);
  // Listeners added after the json reporter's own: the same events in the same order as its lists.
  const seen = { tests: [], pending: [], failures: [], passes: [] };
  runner.on('test end', (t) => seen.tests.push(t));
  runner.on('pending', (t) => seen.pending.push(t));
  runner.on('fail', (t) => seen.failures.push(t));
  runner.on('pass', (t) => seen.passes.push(t));
  runner.once('end', () => {
    const report = runner.testResults;
    for (const list of Object.keys(seen)) {
      (report[list] || []).forEach((entry, i) => {
        const r = seen[list][i];
        if (!r) return;
        entry.titlePath = titlePath(r);
        entry.state = r.state || (r.pending ? 'pending' : undefined);
        entry.type = r.type;
        if (!entry.file) entry.file = fileOf(r);
      });
    }
    fs.appendFileSync(process.env.FORESIGHT_MOCHA_REPORT, JSON.stringify(report) + '\n');
  });
  return base;
}

module.exports = ForesightJSON;
