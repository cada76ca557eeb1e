import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { formatDuration, formatRate, MIN_LINE_INTERVAL_MS, stopProgressBars } from '../../core/foundation/progress.ts';
import { clearSecrets, redact } from '../../core/foundation/secrets.ts';

// Fake values, built so no scanner mistakes this file for one holding a real token.
const SECRETS = {
  GITHUB_TOKEN: ['ghp', 'Gh1TokenValue0123456789'].join('_'),
  FORESIGHT_LLM_API_KEY: 'sk-llm-Key-9876543210',
  HF_TOKEN: 'hf_HuggingFaceTok3n42',
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'foresight-log-'));
});
afterEach(async () => {
  clearSecrets();
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('redact', () => {
  it('replaces the value of every secret variable with its name', () => {
    const text = `gh=${SECRETS.GITHUB_TOKEN} llm=${SECRETS.FORESIGHT_LLM_API_KEY} hf=${SECRETS.HF_TOKEN} again=${SECRETS.GITHUB_TOKEN}`;
    loadSecrets(SECRETS);
    const out = redact(text);
    for (const v of Object.values(SECRETS)) expect(out).not.toContain(v);
    expect(out).toBe('gh=<GITHUB_TOKEN> llm=<FORESIGHT_LLM_API_KEY> hf=<HF_TOKEN> again=<GITHUB_TOKEN>');
  });

  it('the credentials of a URL are secrets too, even URL-encoded', () => {
    loadSecrets({ FORESIGHT_GIT_URL: 'https://bot:s3cr3t%2Fpass@git.example.org' });
    expect(redact('fatal: could not read https://bot:s3cr3t%2Fpass@git.example.org/a/b.git')).not.toContain('s3cr3t');
    expect(redact('password s3cr3t/pass')).toBe('password <FORESIGHT_GIT_URL credentials>');
  });

  it('leaves text alone when no secret is set', () => {
    expect(redact(`gh=${SECRETS.GITHUB_TOKEN}`)).toBe(`gh=${SECRETS.GITHUB_TOKEN}`);
  });
});

describe('logger', () => {
  it('a logger writing to a file never writes a secret from the environment', async () => {
    loadSecrets(SECRETS);
    const file = join(dir, 'foresight.log.jsonl');
    const log = createLogger({ quiet: true, file, level: 'debug' });
    const child = log.child({ stage: 'judge', endpoint: `https://x:${SECRETS.FORESIGHT_LLM_API_KEY}@127.0.0.1/v1` });

    log.info(`cloning with token ${SECRETS.GITHUB_TOKEN}`);
    log.debug('request', { headers: { authorization: `Bearer ${SECRETS.FORESIGHT_LLM_API_KEY}` } });
    child.warn(`upload to hub with ${SECRETS.HF_TOKEN} failed`);
    child.error('request failed');
    child.progress(`pushing with ${SECRETS.HF_TOKEN}`, 1, 2);

    const text = await readFile(file, 'utf8');
    for (const v of Object.values(SECRETS)) expect(text).not.toContain(v);
    // The lines are still there, with the secret replaced by its name.
    expect(text).toContain('cloning with token <GITHUB_TOKEN>');
    expect(text).toContain('Bearer <FORESIGHT_LLM_API_KEY>');
    expect(text).toContain('<HF_TOKEN> failed');
    // Every line stays valid JSON after redaction.
    for (const line of text.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('a secret with characters JSON escapes (quote, backslash) is still redacted in the file', async () => {
    const key = 'pa"ss\\word-123';
    loadSecrets({ FORESIGHT_LLM_API_KEY: key });
    const file = join(dir, 'log.jsonl');
    createLogger({ quiet: true, file }).info(`using key ${key}`);
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text.trim()).msg).toBe('using key <FORESIGHT_LLM_API_KEY>');
  });

  it('each line carries time (ISO), level (its name), msg and the fields, and nothing else', async () => {
    const file = join(dir, 'foresight.log.jsonl');
    const log = createLogger({ quiet: true, file }).child({ stage: 'szz' });
    log.debug('blamed', { change: '8', lines: 3 });
    log.warn('slow');
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0]!).sort()).toEqual(['change', 'level', 'lines', 'msg', 'stage', 'time']);
    expect(lines[0]).toMatchObject({ level: 'debug', msg: 'blamed', stage: 'szz', change: '8', lines: 3 });
    expect(new Date(lines[0]!.time as string).toISOString()).toBe(lines[0]!.time);
    expect(lines[1]).toMatchObject({ level: 'warn', msg: 'slow', stage: 'szz' });
  });

  it('toFile moves the structured log to the new file', async () => {
    const [a, b] = [join(dir, 'a', 'log.jsonl'), join(dir, 'b', 'log.jsonl')];
    const log = createLogger({ quiet: true, file: a });
    log.info('first');
    log.toFile(b);
    log.info('second');
    expect((await readFile(a, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['first']);
    expect((await readFile(b, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['second']);
  });

  it('a process that exits right after logging, or dies of an error, keeps every line', async () => {
    const script = join(dir, 'exits.ts');
    const logTs = join(import.meta.dirname, '../../core/foundation/log.ts');
    await writeFile(
      script,
      [
        `import { createLogger } from ${JSON.stringify(logTs)};`,
        `const log = createLogger({ quiet: true, file: process.argv[2] });`,
        `for (let i = 0; i < 500; i++) log.info('line ' + i, { pad: 'x'.repeat(200) });`,
        `if (process.argv[3] === 'exit') { log.error('last words'); process.exit(3); }`,
        `log.error('last words');`,
        `throw new Error('crash');`,
      ].join('\n'),
    );
    const tsx = join(import.meta.dirname, '../../node_modules/.bin/tsx');
    for (const how of ['exit', 'throw']) {
      const file = join(dir, `${how}.jsonl`);
      const code = await new Promise<number | null>((resolve) => execFile(tsx, [script, file, how], (err) => resolve(err ? (err as { code?: number }).code ?? -1 : 0)));
      expect(code, how).toBe(how === 'exit' ? 3 : 1);
      const lines = (await readFile(file, 'utf8')).trim().split('\n');
      expect(lines, how).toHaveLength(501);
      expect(JSON.parse(lines.at(-1)!), how).toMatchObject({ level: 'error', msg: 'last words' });
    }
  }, 30_000);

  it('the terminal line is redacted too', () => {
    loadSecrets({ GITHUB_TOKEN: SECRETS.GITHUB_TOKEN });
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    createLogger().warn(`bad token ${SECRETS.GITHUB_TOKEN}`);
    expect(written.join('')).toContain('bad token <GITHUB_TOKEN>');
    expect(written.join('')).not.toContain(SECRETS.GITHUB_TOKEN);
  });
});

/** What the logger writes on stderr, with stderr a terminal or not; the clock is ours. */
function captureStderr(tty: boolean): { lines: () => string[]; raw: () => string } {
  const written: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const had = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
  Object.defineProperty(process.stderr, 'isTTY', { value: tty, configurable: true });
  onTestFinished(() => {
    if (had) Object.defineProperty(process.stderr, 'isTTY', had);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  });
  return { raw: () => written.join(''), lines: () => written.join('').split('\n').filter(Boolean) };
}

describe('progress', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    vi.setSystemTime(0);
  });
  afterEach(() => {
    stopProgressBars();
    vi.useRealTimers();
  });

  it('off a terminal, a line carries the rate and the ETA: [validate] validating chains 12/30 (0.4/s, ETA 45s)', () => {
    const out = captureStderr(false);
    const log = createLogger().child({ stage: 'validate' });
    log.progress('validating chains', 0, 30);
    vi.setSystemTime(30_000);
    log.progress('validating chains', 12, 30);
    vi.setSystemTime(75_000);
    log.progress('validating chains', 30, 30);
    expect(out.lines()).toEqual([
      '[validate] validating chains 0/30 (starting)',
      '[validate] validating chains 12/30 (0.4/s, ETA 45s)',
      '[validate] validating chains 30/30 (0.4/s, took 1m15s)',
    ]);
  });

  it('off a terminal, lines come at most every few seconds, except the first item and the last', () => {
    const out = captureStderr(false);
    const log = createLogger();
    const at: number[] = [];
    const total = 200;
    log.progress('blaming', 0, total);
    at.push(0);
    // One item every 100 ms for 20 s: 200 updates.
    for (let done = 1; done <= total; done++) {
      vi.setSystemTime(done * 100);
      const before = out.lines().length;
      log.progress('blaming', done, total);
      if (out.lines().length > before) at.push(done * 100);
    }
    expect(at[1], 'the first computed item shows the rate at once').toBe(100);
    expect(at.at(-1), 'the last item always prints').toBe(20_000);
    // Between those, the periodic lines: at least MIN_LINE_INTERVAL_MS apart.
    expect(at.length).toBeGreaterThan(3);
    for (let i = 2; i < at.length - 1; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(MIN_LINE_INTERVAL_MS);
    expect(out.lines().length).toBeLessThanOrEqual(2 + 20_000 / MIN_LINE_INTERVAL_MS + 1);
    for (const line of out.lines().slice(1, -1)) expect(line).toMatch(/^blaming \d+\/200 \(10\/s, ETA \d+s\)$/);
  });

  it('items reused from a checkpoint are left out of the rate (an instant resume promises no instant end)', () => {
    const out = captureStderr(false);
    const log = createLogger();
    log.progress('grading', 0, 10);
    for (let i = 1; i <= 5; i++) log.progress('grading', i, 10, { reused: i });
    vi.setSystemTime(10_000);
    log.progress('grading', 6, 10, { reused: 5 });
    // 1 computed item in 10 s: 0.1/s, 4 left: 40 s; not 6 items in 10 s (0.6/s, 7 s).
    expect(out.lines().at(-1)).toBe('grading 6/10 (5 reused, 0.1/s, ETA 40s)');
  });

  it('the file log keeps one line per update, with the rate and ETA as numbers', async () => {
    captureStderr(false);
    const file = join(dir, 'log.jsonl');
    const log = createLogger({ file });
    log.progress('judging chains', 0, 4);
    for (let i = 1; i <= 4; i++) {
      vi.setSystemTime(i * 2000);
      log.progress('judging chains', i, 4);
    }
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.done)).toEqual([0, 1, 2, 3, 4]);
    expect(lines[2]).toMatchObject({ msg: 'progress', label: 'judging chains', done: 2, total: 4, rate_per_s: 0.5, eta_s: 4 });
    expect(lines[4]).not.toHaveProperty('eta_s');
  });

  it('a new loop under the same label starts its own clock', () => {
    const out = captureStderr(false);
    const log = createLogger();
    log.progress('b-szz', 0, 2);
    vi.setSystemTime(100_000);
    log.progress('b-szz', 2, 2);
    log.progress('foresight', 0, 2);
    log.progress('b-szz', 0, 2);
    vi.setSystemTime(110_000);
    log.progress('b-szz', 1, 2);
    expect(out.lines().at(-1)).toBe('b-szz 1/2 (0.1/s, ETA 10s)');
  });

  it('on a terminal, a cli-progress bar is drawn, log lines print above it, and the finished loop leaves one line', () => {
    const out = captureStderr(true);
    const log = createLogger().child({ stage: 'judge' });
    log.progress('judging chains', 0, 4);
    vi.setSystemTime(1000);
    log.progress('judging chains', 1, 4);
    vi.advanceTimersByTime(500);
    log.warn('chain 7: provider timed out, retrying');
    vi.setSystemTime(4000);
    for (let i = 2; i <= 4; i++) log.progress('judging chains', i, 4);
    const raw = out.raw();
    // The bar: cli-progress's complete/incomplete characters, with our counts, rate and ETA beside it.
    expect(raw).toMatch(/\[judge\] judging chains =+-+ 1\/4 \(1\.0\/s, ETA 3s\)/);
    expect(raw).toContain('[judge] warning: chain 7: provider timed out, retrying\n');
    expect(raw).toContain('[judge] judging chains 4/4 (1.0/s, took 4s)\n');
    // The warning comes after the bar was drawn, and the final line after the warning.
    expect(raw.indexOf('provider timed out')).toBeGreaterThan(raw.indexOf('1/4'));
    expect(raw.indexOf('4/4 (')).toBeGreaterThan(raw.indexOf('provider timed out'));
    // No terminal mode is changed (line wrapping, cursor visibility): a killed run must leave the terminal as it was.
    expect(raw).not.toMatch(/\x1b\[\?(7|25)[lh]/);
  });

  it('quiet: nothing on the terminal, the file still gets the updates', async () => {
    const out = captureStderr(true);
    const file = join(dir, 'q.jsonl');
    const log = createLogger({ quiet: true, file });
    log.progress('x', 0, 2);
    log.progress('x', 2, 2);
    expect(out.raw()).toBe('');
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('rates and durations read as numbers a person compares at a glance', () => {
    expect([formatRate(25), formatRate(2.34), formatRate(0.4), formatRate(0.05), formatRate(1 / 3600)]).toEqual(['25/s', '2.3/s', '0.4/s', '3.0/min', '1.0/h']);
    expect([formatDuration(0), formatDuration(45_000), formatDuration(185_000), formatDuration(7_620_000)]).toEqual(['0s', '45s', '3m05s', '2h07m']);
  });
});

describe('fields, level and format', () => {
  afterEach(() => stopProgressBars());

  it("trial: foresight.log.jsonl carried the chain id only in the message text → stage, instance_id, state and run are fields", async () => {
    const out = captureStderr(false);
    const file = join(dir, 'foresight.log.jsonl');
    const stage = createLogger({ file, level: 'debug' }).child({ stage: 'validate' });
    const chain = stage.child({ instance_id: 'minilib__1-9' });
    chain.info('PR1 moved');
    chain.child({ state: 'S3', run: 2 }).debug('S3 run 2: exit 1 in 1.2 s');
    chain.child({ state: 'S3', run: 2 }).note('S3 run 2/3');
    chain.note(null);
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map(({ time: _t, ...rest }) => rest)).toEqual([
      { level: 'info', msg: 'PR1 moved', stage: 'validate', instance_id: 'minilib__1-9' },
      { level: 'debug', msg: 'S3 run 2: exit 1 in 1.2 s', stage: 'validate', instance_id: 'minilib__1-9', state: 'S3', run: 2 },
      { level: 'debug', msg: 'S3 run 2/3', stage: 'validate', instance_id: 'minilib__1-9', state: 'S3', run: 2 },
    ]);
    // A person still reads which chain: the terminal puts the id before the message, once.
    expect(out.lines()).toEqual(['[validate] minilib__1-9: PR1 moved', '[validate] minilib__1-9: S3 run 2: exit 1 in 1.2 s', '[validate] minilib__1-9: S3 run 2/3']);
  });

  it('trial: there was no log level option → FORESIGHT_LOG_LEVEL / --log-level warn shows warnings and errors only; -v shows debug', async () => {
    const out = captureStderr(false);
    const file = join(dir, 'log.jsonl');
    expect(loadConfig({ FORESIGHT_LOG_LEVEL: 'warn' }).log).toMatchObject({ level: 'warn', verbose: false, format: 'text' });
    // The flag wins over the variable.
    const config = loadConfig({ FORESIGHT_LOG_LEVEL: 'debug' }, { logLevel: 'warn' });
    const log = createLogger({ ...config.log, file }).child({ stage: 'validate' });
    log.debug('d');
    log.info('i');
    log.progress('validating chains', 0, 2);
    log.child({ instance_id: 'c1' }).note('S1 run 1/3');
    log.warn('w');
    log.error('e');
    expect(out.lines()).toEqual(['[validate] warning: w', '[validate] error: e']);
    // The file still gets every level.
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(6);

    const verbose = captureStderr(false);
    createLogger(loadConfig({ FORESIGHT_LOG_LEVEL: 'error' }, { verbose: true }).log).debug('seen');
    expect(verbose.lines()).toContain('seen');
    expect(() => loadConfig({ FORESIGHT_LOG_LEVEL: 'loud' })).toThrow(/FORESIGHT_LOG_LEVEL/);
    expect(() => loadConfig({}, { logFormat: 'xml' })).toThrow(/--log-format/);
  });

  it('trial: there was no JSON output option → --log-format json: one JSON object a line on the terminal, with the fields of the file', async () => {
    loadSecrets({ GITHUB_TOKEN: SECRETS.GITHUB_TOKEN });
    // Even on a terminal: no bar, only JSON lines.
    const out = captureStderr(true);
    const file = join(dir, 'log.jsonl');
    const log = createLogger({ ...loadConfig({ FORESIGHT_LOG_FORMAT: 'json' }).log, file }).child({ stage: 'validate' });
    const chain = log.child({ instance_id: 'minilib__3-8' });
    log.progress('validating chains', 0, 2);
    chain.info(`cloned with ${SECRETS.GITHUB_TOKEN}`);
    chain.child({ state: 'S4', run: 1 }).note('S4 run 1/3');
    chain.debug('not shown at info');
    chain.warn('slow');
    chain.note(null);
    const terminal = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    const fileLines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const shape = ({ time: _t, level: _l, ...rest }: Record<string, unknown>) => rest;
    expect(terminal.map(shape)).toEqual([
      { msg: 'progress', label: 'validating chains', done: 0, total: 2, stage: 'validate' },
      { msg: 'cloned with <GITHUB_TOKEN>', stage: 'validate', instance_id: 'minilib__3-8' },
      { msg: 'S4 run 1/3', stage: 'validate', instance_id: 'minilib__3-8', state: 'S4', run: 1 },
      { msg: 'slow', stage: 'validate', instance_id: 'minilib__3-8' },
    ]);
    expect(terminal.map((l) => l.level)).toEqual(['info', 'info', 'info', 'warn']);
    // The same objects as the file's (which also has the debug line).
    expect(fileLines.filter((l) => l.level !== 'debug' || l.msg === 'progress' || l.msg === 'S4 run 1/3').map(shape)).toEqual(terminal.map(shape));
    for (const l of terminal) expect(new Date(l.time as string).toISOString()).toBe(l.time);
  });
});
