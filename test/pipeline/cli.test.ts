import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeClosure } from '../../core/foundation/code-closure.ts';
import { STAGES } from '../../core/foundation/stage.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import { buildCli } from '../../pipeline/commands/cli.ts';
import { STAGE_DEFS } from '../../pipeline/registry.ts';

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

  it('trial: every failure exited 1 → a usage error (here an unknown stage) exits 2 with a hint to --help, and names the stages', async () => {
    const r = await foresight(['run', '--repo', 'demo/minilib', '--from', 'validat']);
    expectCleanError(r, /'validat' is invalid\. Allowed choices are discover, szz, extract, validate, judge, emit/);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('(add --help for the options)');
    expectCleanError(await foresight(['run', '--repo', 'demo/minilib', '--only', 'Emit']), /'Emit' is invalid\. Allowed choices are discover, szz/);
  });

  it('a number flag that is not a whole number is refused when the flags are parsed, naming the flag', async () => {
    const data = join(root, 'd5');
    const cases: Array<[string[], RegExp]> = [
      [['run', '--repo', 'acme/widgets', '--data', data, '--jobs', 'abc'], /option '--jobs <n>' argument 'abc' is invalid\. expected a whole number ≥ 1/],
      [['run', '--repo', 'acme/widgets', '--data', data, '--jobs', '2.5'], /option '--jobs <n>' argument '2\.5' is invalid/],
      [['validate', '--repo', 'acme/widgets', '--data', data, '--runs', '0'], /option '--runs <n>' argument '0' is invalid\. expected a whole number ≥ 1/],
      [['eval', '--dataset', data, '--gold', '--jobs', 'four'], /option '--jobs <n>' argument 'four' is invalid/],
    ];
    for (const [args, message] of cases) {
      const r = await foresight(args);
      expectCleanError(r, message);
      expect(r.stderr).not.toContain('FORESIGHT_JOBS');
    }
    expect(existsSync(data)).toBe(false);
  });

  it('a bad flag value config checks names the flag, not an environment variable', async () => {
    const r = await foresight(['run', '--repo', 'acme/widgets', '--data', join(root, 'd2'), '--until', 'soon']);
    expectCleanError(r, /--until soon is not a date/);
    expect(r.stderr).not.toContain('FORESIGHT_UNTIL');
    expectCleanError(await foresight(['run', '--repo', 'acme/widgets', '--data', join(root, 'd2'), '--since', '2024-02-30']), /--since 2024-02-30 is not a date/);
    expect(existsSync(join(root, 'd2'))).toBe(false);
  });

  it('trial: under --log-format json the error that ends the command was plain text → it is one JSON line too', async () => {
    const r = await foresight(['run', '--repo', 'acme/widgets', '--offline', '--data', join(root, 'json-error'), '--log-format', 'json']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    const last = JSON.parse(lines.at(-1)!) as { level: string; msg: string };
    expect(last).toMatchObject({ level: 'error', msg: expect.stringMatching(/no clone of acme\/widgets .* pass --clone/) });
    for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow();
  });

  it('--data naming a file is refused', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    expectCleanError(await foresight(['run', '--repo', 'acme/widgets', '--data', file]), /--data .*a-file is a file, not a folder/);
  });

  it('trial: an unwritable --data gave `ENOENT: … mkdir` → it is refused in one line naming it, before any stage runs', async () => {
    const file = join(root, 'plain-file');
    await writeFile(file, 'x');
    const data = join(file, 'data');
    const r = await foresight(['run', '--repo', 'acme/widgets', '--data', data, '--offline']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expectCleanError(r, new RegExp(`the data directory ${data.replace(/[.]/g, '\\.')} cannot be written \\(ENOTDIR\\) — pass --data DIR with a writable directory`));
    // Root writes through a read-only mode, so only an unprivileged run can see this refusal.
    if (process.getuid?.() === 0) return;
    const ro = join(root, 'read-only');
    await mkdir(ro, { mode: 0o555 });
    const r2 = await foresight(['run', '--repo', 'acme/widgets', '--data', ro, '--offline']);
    expect(r2.code, r2.stderr).toBe(1);
    expectCleanError(r2, /the data directory .*read-only cannot be written \(EACCES\)/);
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

describe('foresight --help and stages', () => {
  it('--help gives examples and names every environment variable the configuration reads', async () => {
    const r = await foresight(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('$ foresight demo');
    // The names config.ts and its settings table read, from their text: a variable added there without a help line fails here.
    const sources = await Promise.all(['config.ts', 'settings.ts'].map((f) => readFile(join(PROJECT_ROOT, 'core/foundation', f), 'utf8')));
    const read = [...new Set([...sources.join('\n').matchAll(/'((?:FORESIGHT|HF|GITHUB|DOCKER)_[A-Z0-9_]+)'/g)].map((m) => m[1]!))];
    expect(read.length).toBeGreaterThan(30);
    const env = r.stdout.slice(r.stdout.indexOf('Environment'));
    expect(read.filter((name) => !new RegExp(`\\b${name}\\b`).test(env))).toEqual([]);
  });

  it('a command refuses a setting flag that does not apply to it', async () => {
    expectCleanError(await foresight(['summary', '--repo', 'acme/widgets', '--jobs', '2']), /unknown option '--jobs'/);
  });

  it('trial: `demo --repo foo/bar` was accepted silently → the demo takes no --repo or --clone, and its help lists neither', async () => {
    const data = join(tmpdir(), `foresight-demo-flags-${process.pid}`);
    for (const flag of [['--repo', 'foo/bar'], ['--clone', '/tmp']]) {
      const r = await foresight(['demo', ...flag, '--data', data]);
      expectCleanError(r, new RegExp(`unknown option '${flag[0]}'`));
      expect(r.code).toBe(2);
    }
    expect(existsSync(data)).toBe(false);
    const help = await foresight(['demo', '--help']);
    expect(help.stdout).toContain('demo/minilib');
    expect(help.stdout).not.toMatch(/--repo|--clone|--offline|--registry/);
  });

  it('trial: commands listed options that do not apply to them → each command shows only its own', () => {
    const cli = buildCli();
    const options = (cmd: string): string[] => cli.commands.find((c) => c.name() === cmd)!.options.map((o) => o.long!);
    expect(options('summary')).toEqual(['--repo', '--data']);
    expect(options('worker')).not.toContain('--repo');
    for (const cmd of ['summary', 'recheck', 'push-images', 'eval', 'publish', 'stages', 'report']) {
      expect(options(cmd), cmd).not.toContain('--queue');
      expect(options(cmd), cmd).not.toContain('--since');
      if (cmd !== 'recheck') expect(options(cmd), cmd).not.toContain('--runs');
    }
  });

  it('FORESIGHT_DEBUG prints the stack, read through the configuration even when another setting is bad', async () => {
    const stack = /\n\s+at .*\.(ts|js):\d+/;
    const bad = await foresight(['run', '--repo', 'acme/widgets', '--until', 'soon'], { FORESIGHT_DEBUG: '1' });
    expect(bad.stderr).toMatch(/--until soon is not a date/);
    expect(bad.stderr).toMatch(stack);
    const worse = await foresight(['summary', '--repo', 'acme/widgets'], { FORESIGHT_DEBUG: '1', FORESIGHT_JOBS: 'many' });
    expect(worse.stderr).toMatch(/FORESIGHT_JOBS=many is not a whole number/);
    expect(worse.stderr).toMatch(stack);
  });

  it('run --help shows the stage choices and examples', async () => {
    const r = await foresight(['run', '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('choices: "discover", "szz", "extract", "validate", "judge", "emit"');
    expect(r.stdout).toContain('$ foresight run --repo encode/starlette --from validate');
  });

  it('stages lists each stage with the fingerprint its cache key holds', async () => {
    const r = await foresight(['stages']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([...STAGES]);
    for (const [i, stage] of STAGES.entries()) {
      const closure = await codeClosure(STAGE_DEFS.get(stage)!.entry, PROJECT_ROOT);
      expect(lines[i]).toBe(`${stage.padEnd(9)} ${closure.fingerprint.slice(0, 16)}  ${closure.modules.length} modules, ${closure.runtimeFiles.length} runtime files, ${closure.packages.length} packages`);
    }
  });
});
