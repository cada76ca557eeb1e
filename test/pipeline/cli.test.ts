import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../core/version.ts';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real CLI, as a user types it, with a controlled environment. */
function foresight(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** One line naming the cause, no stack trace. */
function expectCleanError(r: Result, pattern: RegExp): void {
  expect(r.code, r.stderr).not.toBe(0);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at .*\.(ts|js):\d+/);
}

describe('foresight CLI: bad input gets a clear error', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-cli-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('--from with --only is refused instead of ignoring --from', async () => {
    expectCleanError(await foresight(['run', '--repo', 'demo/minilib', '--data', join(root, 'd1'), '--from', 'judge', '--only', 'emit']), /--from .* cannot be used with .*--only/);
  });

  it('an unknown stage names the stages', async () => {
    expectCleanError(await foresight(['run', '--repo', 'demo/minilib', '--from', 'validat']), /use one of: discover, szz, extract, validate, judge, emit/);
  });

  it('a bad flag value names the flag, not an environment variable', async () => {
    const r = await foresight(['run', '--repo', 'acme/widgets', '--data', join(root, 'd2'), '--jobs', 'abc']);
    expectCleanError(r, /--jobs abc is not a whole number/);
    expect(r.stderr).not.toContain('FORESIGHT_JOBS');
    expectCleanError(await foresight(['run', '--repo', 'acme/widgets', '--data', join(root, 'd2'), '--since', '2024-02-30']), /--since 2024-02-30 is not a date/);
    expect(existsSync(join(root, 'd2'))).toBe(false);
  });

  it('--data naming a file is refused', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    expectCleanError(await foresight(['run', '--repo', 'acme/widgets', '--data', file]), /--data .*a-file is a file, not a folder/);
  });

  it('szz-eval: --limit abc and --concurrency 0 are refused, not run as nothing', async () => {
    expectCleanError(await foresight(['szz-eval', '--clone', root, '--oracle', join(root, 'o.jsonl'), '--limit', 'abc']), /--limit.*abc.*whole number/);
    expectCleanError(await foresight(['szz-eval', '--clone', root, '--oracle', join(root, 'o.jsonl'), '--concurrency', '0']), /--concurrency.*0.*whole number/);
  });

  it('--offline never clones: it asks for a local clone, and leaves no folder behind', async () => {
    const data = join(root, 'd3');
    const r = await foresight(['run', '--repo', 'acme/widgets', '--data', data, '--offline'], { FORESIGHT_GIT_URL: `file://${join(root, 'remotes')}` });
    expectCleanError(r, /offline run does not clone/);
    expect(r.stderr).toContain('--clone');
    expect(existsSync(data)).toBe(false);
  });

  it('a failed clone leaves no empty folder and prints no credential of FORESIGHT_GIT_URL', async () => {
    const data = join(root, 'd4');
    const r = await foresight(['run', '--repo', 'acme/widgets', '--data', data], { FORESIGHT_GIT_URL: 'http://bot:cli-s3cret-pw@127.0.0.1:9' });
    expectCleanError(r, /could not clone http:\/\/127\.0\.0\.1:9\/acme\/widgets\.git/);
    expect(r.stderr + r.stdout).not.toContain('cli-s3cret-pw');
    expect(existsSync(data)).toBe(false);
  });
});
