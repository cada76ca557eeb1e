/**
 * One container per chain: every state of a chain (PR1 base, PR1 merge, PR2 …) runs in the same
 * locked-down container, switching commits with git inside /tmp/testbed (see the runner's script).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../../errors.ts';
import { absoluteGitDir } from '../../git.ts';
import type { ParsedRun, Runner } from '../runners/types.ts';
import { forceRemove, ownerLabels, removeOnAbort } from './cleanup.ts';
import { connectDocker } from '../connect.ts';
import { DROPPED, runExec } from './exec.ts';

export const DEFAULT_LIMITS = {
  memoryBytes: 2 * 1024 ** 3,
  pidsLimit: 512,
  nanoCpus: 1e9,
  runTimeoutSec: 600,
} as const;

/** Seconds `timeout` waits after SIGTERM before SIGKILL, and extra slack before the JS deadline. */
const KILL_GRACE_SEC = 5;
const DEADLINE_SLACK_SEC = 10;
const JUNIT_PATH = '/tmp/foresight-junit.xml';
/** Where the runner script keeps the chain's work tree inside the container (see run_state.sh). */
export const REPO_PATH = '/tmp/testbed';
const OUTPUT_TAIL_CHARS = 4000;
/** Separates the runner's output from its report in one exec's output. */
const REPORT_MARK = '\n@@foresight-report@@\n';

export interface ChainEnvOptions {
  /** Host path of a .git dir (a work tree whose .git is a directory is accepted too). */
  gitDir: string;
  image: string;
  runner: Runner;
  memoryBytes?: number;
  pidsLimit?: number;
  nanoCpus?: number;
  /** Per runState: the runner is sent SIGTERM after this, SIGKILL 5 s later. */
  runTimeoutSec?: number;
  docker?: Docker;
  /** Extra environment for the test runs (a recipe's `env`). */
  env?: Readonly<Record<string, string>>;
  /** The run's signal: once aborted no container is created, and a live one is removed at once. */
  signal?: AbortSignal;
}

export interface StateRequest {
  checkout: string;
  /** Commit whose versions of `testFiles` are laid over the checkout (files absent there are left alone). */
  overlay: string | null;
  /** Repo-relative test files; those absent after checkout+overlay are skipped. */
  testFiles: string[];
  /** Other test files (support modules, fixtures, conftest.py) laid over the checkout too, but not run. */
  overlayFiles?: string[];
}

/** What one run of a state produced, as a union: only a `report` can be evidence. */
export type StateRun = {
  exitCode: number | null;
  durationMs: number;
  /** What the runner's parser read (empty unless there was a report). */
  parsed: ParsedRun;
  /** Last ~4000 characters of the combined output. */
  outputTail: string;
} & (
  | { kind: 'report'; exitCode: number }
  | { kind: 'timeout' }
  | { kind: 'no_report'; why: 'missing' | 'unreadable' | 'killed' }
);

export interface ChainEnv {
  readonly containerId: string;
  runState(req: StateRequest): Promise<StateRun>;
  /** Remove the container (force). Idempotent. */
  close(): Promise<void>;
}

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

const REV = /^[^-\s][^\s]*$/;

function checkRequest(req: StateRequest): void {
  for (const [what, rev] of [['checkout', req.checkout], ['overlay', req.overlay]] as const) {
    if (rev !== null && (!REV.test(rev) || rev === '-')) {
      throw new ForesightError(`invalid ${what} revision "${rev}"`, { remedy: 'pass a commit sha' });
    }
  }
  for (const f of [...req.testFiles, ...(req.overlayFiles ?? [])]) {
    const bad =
      f === '' || path.posix.isAbsolute(f) || f.split('/').includes('..') || /[\0\n\r]/.test(f) || f.startsWith('-');
    if (bad) {
      throw new ForesightError(`invalid test file path ${JSON.stringify(f)}`, {
        remedy: 'pass repo-relative paths inside the repository',
      });
    }
  }
}

export async function resolveRunnerDir(runner: Runner): Promise<string> {
  const dir = runner.dir ?? fileURLToPath(new URL(`../runners/${runner.name}/`, import.meta.url));
  const script = path.join(dir, runner.script);
  if (!(await stat(script).catch(() => null))?.isFile()) {
    throw new ForesightError(`runner ${runner.name}: script ${script} is missing`, {
      remedy: `restore it, or fix the runner's dir/script fields`,
    });
  }
  return path.resolve(dir);
}

export async function openChainEnv(opts: ChainEnvOptions): Promise<ChainEnv> {
  opts.signal?.throwIfAborted();
  const docker = opts.docker ?? connectDocker();
  const gitDir = await absoluteGitDir(opts.gitDir);
  const runnerDir = await resolveRunnerDir(opts.runner);
  const memory = opts.memoryBytes ?? DEFAULT_LIMITS.memoryBytes;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: opts.image,
      Cmd: ['sleep', 'infinity'],
      User: '65534:65534',
      Env: ['HOME=/tmp', ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)],
      WorkingDir: '/tmp',
      Labels: ownerLabels(),
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: 'none',
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: opts.pidsLimit ?? DEFAULT_LIMITS.pidsLimit,
        NanoCpus: opts.nanoCpus ?? DEFAULT_LIMITS.nanoCpus,
        Binds: [`${gitDir}:/src:ro`, `${runnerDir}:/foresight:ro`],
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
        // docker-init as pid 1 reaps the orphans of killed test runs (they would hold pids).
        Init: true,
      },
    });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) {
      throw new ForesightError(`Docker image ${opts.image} is not present`, {
        remedy: 'call ensureImage() first, or build it with core/env/build-base-image.sh',
        external: true,
        cause: err,
      });
    }
    throw new ForesightError(`cannot create the chain container: ${(err as Error).message}`, {
      remedy: 'check `docker info` and the daemon log',
      external: true,
      cause: err,
    });
  }
  // Tied to the run from here on: an abort (SIGINT, SIGTERM) removes it even mid-exec.
  const dispose = removeOnAbort(docker, container.id, opts.signal);
  try {
    opts.signal?.throwIfAborted();
    await container.start();
  } catch (err) {
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw new ForesightError(`cannot start the chain container: ${(err as Error).message}`, {
      remedy: 'check `docker info` and the daemon log',
      external: true,
      cause: err,
    });
  }
  return new DockerChainEnv(docker, container, opts.runner, opts.runTimeoutSec ?? DEFAULT_LIMITS.runTimeoutSec, dispose);
}

class DockerChainEnv implements ChainEnv {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Set when the JS deadline killed the container: start it again before the next run. */
  private stopped = false;

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    private readonly runner: Runner,
    private readonly timeoutSec: number,
    private readonly dispose: () => void,
  ) {}

  get containerId(): string {
    return this.container.id;
  }

  runState(req: StateRequest): Promise<StateRun> {
    try {
      checkRequest(req);
    } catch (err) {
      return Promise.reject(err);
    }
    // States share /tmp/testbed: run them one at a time.
    const run = this.queue.then(() => this.run(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(req: StateRequest): Promise<StateRun> {
    if (this.closed) {
      throw new ForesightError('runState() on a closed chain env', { remedy: 'open a new env with openChainEnv()' });
    }
    const T = this.timeoutSec;
    const overlayFiles = req.overlay ? (req.overlayFiles ?? []).filter((f) => !req.testFiles.includes(f)) : [];
    // The runner, then its report after a marker, in one exec: one round trip per run instead of two.
    const shell = `timeout -k ${KILL_GRACE_SEC} ${T} "$@"; rc=$?; if [ -f ${JUNIT_PATH} ]; then printf '${REPORT_MARK.replace(/\n/g, '\\n')}'; cat ${JUNIT_PATH}; fi; exit $rc`;
    const cmd = ['sh', '-c', shell, 'sh', 'env', `FORESIGHT_OVERLAY_FILES=${overlayFiles.join('\n')}`, 'sh', `/foresight/${this.runner.script}`];
    cmd.push(req.checkout, req.overlay ?? '-', JUNIT_PATH, ...req.testFiles);
    const exec = (): ReturnType<typeof runExec> =>
      runExec(this.container, cmd, {
        capture: 'combined',
        deadlineMs: (T + KILL_GRACE_SEC + DEADLINE_SLACK_SEC) * 1000,
        onDeadline: async () => {
          this.stopped = true;
          await this.container.kill();
        },
      });
    const t0 = Date.now();
    let res: Awaited<ReturnType<typeof runExec>>;
    try {
      if (this.stopped) await this.start();
      res = await exec().catch(async (err: unknown) => {
        if (statusCode(err) !== 409 || this.closed) throw err;
        await this.start(); // stopped behind our back (killed, daemon restart): start it again
        return exec();
      });
    } catch (err) {
      throw new ForesightError(`docker exec in the chain container failed: ${(err as Error).message}`, {
        remedy: 'check `docker ps -a` and the daemon log',
        external: true,
        cause: err,
      });
    }
    const durationMs = Date.now() - t0;
    // 124: `timeout` sent SIGTERM; 137: SIGKILL — but an OOM kill is 137 too, so only after T.
    const timedOut = res.deadlineHit || res.exitCode === 124 || (res.exitCode === 137 && durationMs >= T * 1000);

    const notes: string[] = [];
    if (res.deadlineHit) notes.push(`[foresight] no exit ${T + KILL_GRACE_SEC + DEADLINE_SLACK_SEC} s after start: container killed`);
    else if (timedOut) notes.push(`[foresight] timed out after ${T} s`);

    let junitXml: string | null = null;
    let runnerText = res.text;
    const at = res.text.lastIndexOf(REPORT_MARK);
    const truncated = res.text.includes(DROPPED);
    if (at >= 0) {
      runnerText = res.text.slice(0, at);
      const report = res.text.slice(at + REPORT_MARK.length);
      if (!report.includes(DROPPED)) junitXml = report;
    }
    // Output too long for the capture: read the report on its own.
    if (junitXml === null && truncated && !res.deadlineHit && !this.closed) {
      const cat = await runExec(this.container, ['cat', JUNIT_PATH], { capture: 'stdout' }).catch(() => null);
      if (cat?.exitCode === 0 && !cat.overflow) junitXml = cat.text;
      else if (cat?.overflow) notes.push('[foresight] junit file too large, ignored');
    }

    let parsed: ParsedRun;
    let parseFailed = false;
    const input = { output: runnerText, testFiles: req.testFiles };
    try {
      parsed = this.runner.parse({ ...input, junitXml });
    } catch (err) {
      parseFailed = true;
      notes.push(`[foresight] ${err instanceof ForesightError ? err.oneLine() : String(err)}`);
      parsed = this.runner.parse({ ...input, junitXml: null });
    }
    const output = notes.length > 0 ? `${runnerText}\n${notes.join('\n')}\n` : runnerText;
    const common = { durationMs, parsed, outputTail: output.slice(-OUTPUT_TAIL_CHARS) };
    if (timedOut) return { kind: 'timeout', exitCode: res.exitCode, ...common };
    if (res.exitCode === null) return { kind: 'no_report', why: 'killed', exitCode: null, ...common };
    if (junitXml === null) return { kind: 'no_report', why: 'missing', exitCode: res.exitCode, ...common };
    if (parseFailed) return { kind: 'no_report', why: 'unreadable', exitCode: res.exitCode, ...common };
    return { kind: 'report', exitCode: res.exitCode, ...common };
  }

  private async start(): Promise<void> {
    try {
      await this.container.start();
    } catch (err) {
      if (statusCode(err) !== 304) throw err; // 304: already running
    }
    this.stopped = false;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.dispose();
    await forceRemove(this.docker, this.container.id);
  }
}
