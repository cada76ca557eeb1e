/**
 * Run Python with Hugging Face `datasets` + `pyarrow` from the test venv, to check our output with
 * the real consumer library. The venv is created on first use by scripts/setup-python.sh (the same
 * script a developer can run by hand), so a fresh clone's `npx vitest run` needs no manual step;
 * the first run installs packages and can take minutes, so call `pythonWithDatasets()` from a
 * `beforeAll` (vitest.config.ts gives hooks 600 s).
 *
 * FORESIGHT_PY_VENV picks the venv directory (default .venv-test, relative to the repo root).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SETUP_SCRIPT = join(REPO_ROOT, 'scripts', 'setup-python.sh');

/** Absolute path of the venv's python (it may not exist yet). */
export function venvPython(): string {
  return join(resolve(REPO_ROOT, process.env.FORESIGHT_PY_VENV || '.venv-test'), 'bin', 'python');
}

interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

function run(
  file: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<ExecResult> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      {
        cwd: opts.cwd ?? REPO_ROOT,
        env: opts.env ?? process.env,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 0,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        done({ code, stdout, stderr, ...(error ? { error } : {}) });
      },
    );
  });
}

let ready: Promise<string> | undefined;

/**
 * The venv's python path, after making sure it imports `datasets` and `pyarrow` (runs
 * scripts/setup-python.sh, which is quiet and ~1 s when the venv is already good). Once per process.
 */
export function pythonWithDatasets(): Promise<string> {
  ready ??= (async () => {
    const res = await run('bash', [SETUP_SCRIPT], { timeoutMs: 15 * 60_000 });
    if (res.code !== 0) {
      ready = undefined;
      const detail = (res.stderr.trim() || res.error?.message || 'no output').split('\n').slice(-40).join('\n');
      throw new Error(`scripts/setup-python.sh failed (exit ${res.code ?? 'signal'}):\n${detail}`);
    }
    return venvPython();
  })();
  return ready;
}

let scratchHfHome: string | undefined;

/** A per-process empty HF_HOME, so no test reads or writes the user's Hugging Face cache. */
function defaultHfHome(): string {
  if (!scratchHfHome) {
    const dir = mkdtempSync(join(tmpdir(), 'foresight-hf-home-'));
    scratchHfHome = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return scratchHfHome;
}

export interface RunPythonOptions {
  /** Extra environment; wins over the defaults below. */
  env?: Record<string, string>;
  cwd?: string;
  /** Kill python after this long (default 5 min). */
  timeoutMs?: number;
}

/**
 * Run `code` as `python -c code ...args` with the datasets venv and return its stdout.
 * Offline and isolated by default: HF_HUB_OFFLINE=1, HF_DATASETS_OFFLINE=1, progress bars off,
 * and HF_HOME set to a scratch directory (override any of these through `opts.env`).
 * Throws with stderr when python exits non-zero.
 */
export async function runPython(code: string, args: string[] = [], opts: RunPythonOptions = {}): Promise<string> {
  const python = await pythonWithDatasets();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HF_HUB_OFFLINE: '1',
    HF_DATASETS_OFFLINE: '1',
    HF_HUB_DISABLE_TELEMETRY: '1',
    HF_DATASETS_DISABLE_PROGRESS_BARS: '1',
    HF_HUB_DISABLE_PROGRESS_BARS: '1',
    PYTHONIOENCODING: 'utf-8',
    PYTHONDONTWRITEBYTECODE: '1',
    HF_HOME: opts.env?.HF_HOME ?? defaultHfHome(),
    ...opts.env,
  };
  const res = await run(python, ['-c', code, ...args], {
    env,
    timeoutMs: opts.timeoutMs ?? 5 * 60_000,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  if (res.code !== 0) {
    const why = res.code === null ? `killed (${res.error?.message ?? 'signal'})` : `exit ${res.code}`;
    throw new Error(`python failed (${why}):\n${res.stderr.trim() || res.stdout.trim()}`);
  }
  return res.stdout;
}
