import { constants, existsSync } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { connectDocker } from '../../core/env/index.ts';
import { repoDataDir } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import type { Command, Flags } from '../../core/foundation/settings.ts';
import type { StageName } from '../../core/foundation/stage.ts';
import { ensureClone } from '../clone.ts';
import { runPipeline } from '../pipeline.ts';
import { pushImages } from '../push-images.ts';
import { abortOnSignals } from '../signals.ts';
import { summarize } from '../summary.ts';
import { dataRootOf, exitState, removeEmpty, repoName, settings, type CommonOpts } from './shared.ts';

/** `foresight run` (and each stage's command, demo and push-images): the pipeline on one repository. */
export async function execute(command: Command, opts: CommonOpts, part: { from?: StageName; only?: StageName; push?: true }, forced: Flags = {}): Promise<void> {
  const { config, secrets } = settings(command, opts, forced);
  const log = createLogger(config.log);
  const dataRoot = dataRootOf(config);
  const name = repoName(opts.repo);
  const existed = { root: existsSync(dataRoot), repo: existsSync(repoDataDir(dataRoot, name)) };
  await assertWritable(dataRoot);
  const owner = abortOnSignals({ docker: connectDocker(config.docker.host), log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished items are kept`) });
  try {
    const clone = await ensureClone({ repo: name, dataRoot, explicit: opts.clone, log, gitUrl: config.clone.gitUrl, credentials: secrets.gitUrlCredentials, offline: config.discover.offline });
    const repo = { name, clone };
    const run = { dataRoot, repo, config, secrets, log, signal: owner.signal };
    const results = part.push ? [await pushImages(run)] : await runPipeline({ ...run, ...part, force: opts.force });
    if (results.every((r) => r.outcome === 'up-to-date')) log.info('nothing to do: every stage is up to date');
    if (results.some((r) => r.stage === 'emit')) process.stdout.write((await summarize(dataRoot, repo.name)) + '\n');
  } catch (err) {
    if (!existed.repo) await removeEmpty(repoDataDir(dataRoot, name), existed.root ? repoDataDir(dataRoot, name) : dataRoot);
    exitState.signal = owner.exitCode();
    // Whatever the unwinding threw, an interrupted run says so (and how to resume).
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}

/** The errors that mean the data root is not a place to write, rather than a bug. */
const NOT_WRITABLE = new Set(['ENOENT', 'EACCES', 'EPERM', 'EROFS', 'ENOTDIR']);

/** Once, before any stage: an unwritable data root is the user's to fix, not a raw mkdir error mid-run. */
async function assertWritable(dataRoot: string): Promise<void> {
  try {
    // One level at a time: Node's recursive mkdir never returns on some paths (/proc/nope). mkdir alone
    // passes on an existing read-only folder; access catches that. What the probe made is removed again:
    // a run that fails later leaves no empty folder.
    const missing: string[] = [];
    const exists = (d: string): Promise<boolean> => stat(d).then(() => true, () => false);
    for (let d = dataRoot; dirname(d) !== d && !(await exists(d)); d = dirname(d)) missing.unshift(d);
    for (const d of missing) {
      await mkdir(d).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
    await access(dataRoot, constants.W_OK);
    if (missing[0]) await removeEmpty(dataRoot, missing[0]);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!code || !NOT_WRITABLE.has(code)) throw err;
    throw new ForesightError(`the data directory ${dataRoot} cannot be written (${code})`, {
      remedy: 'pass --data DIR with a writable directory (or set FORESIGHT_DATA)',
      cause: err,
    });
  }
}
