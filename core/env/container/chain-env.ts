/**
 * One container per chain: every state of a chain (PR1 base, PR1 merge, PR2 …) runs in the same
 * locked-down container, switching commits with git inside /tmp/testbed (see the runner's script).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { absoluteGitDir, pathBytes } from '../../foundation/git.ts';
import { KEEP_SAMPLE, type KeepRule, type Runner } from '../runners/types.ts';
import { forceRemove, ownerLabels, removeOnAbort } from './cleanup.ts';
import { lockedDown } from './limits.ts';
import { connectDocker } from '../connect.ts';
import { execRunner, execRunnerPasses, type RunnerExec, type RunnerExecHooks, type StateRun } from './run-report.ts';

export const DEFAULT_LIMITS = {
  memoryBytes: 2 * 1024 ** 3,
  pidsLimit: 512,
  nanoCpus: 1e9,
  diskBytes: 2 * 1024 ** 3,
  runTimeoutSec: 600,
} as const;

/** Where the runner script keeps the chain's work tree inside the container (see run_state.sh). */
export const REPO_PATH = '/tmp/testbed';

export interface ChainEnvOptions {
  /** Host path of a .git dir (a work tree whose .git is a directory is accepted too). */
  gitDir: string;
  image: string;
  runner: Runner;
  memoryBytes?: number;
  pidsLimit?: number;
  nanoCpus?: number;
  /** Size of the tmpfs at /tmp, the container's only writable place (the work tree lives there). */
  diskBytes?: number;
  /** Per runState: the runner is sent SIGTERM after this, SIGKILL 5 s later. */
  runTimeoutSec?: number;
  docker?: Docker;
  /** Extra environment for the test runs (a recipe's `env`). */
  env?: Readonly<Record<string, string>>;
  /** The run's signal: once aborted no container is created, and a live one is removed at once. */
  signal?: AbortSignal;
  /**
   * A database service's internal network (services/sidecar.ts) to join instead of none: it reaches
   * the sidecar and nothing outside. Null or absent: no network at all.
   */
  network?: string | null;
}

export interface StateRequest {
  checkout: string;
  /** Commit whose versions of `testFiles` are laid over the checkout (files absent there are left alone). */
  overlay: string | null;
  /** Repo-relative test files; those absent after checkout+overlay are skipped. */
  testFiles: string[];
  /** Other test files (support modules, fixtures, conftest.py) laid over the checkout too, but not run. */
  overlayFiles?: string[];
  /**
   * Run only these instead of the whole `testFiles`: each a test file and the runner's argument that
   * selects one of its tests (Runner.selectArg), or null for the whole file. Entries whose file is
   * absent after checkout+overlay are skipped.
   */
  select?: Array<{ file: string; arg: string | null }>;
  /**
   * Lay over the PR's changes to the test and support files (`git diff overlayBase overlay`, applied
   * three-way) instead of their whole versions at `overlay`: the commit's own test modules plus the PR's
   * tests, where the PR's whole module imports what the commit lacks. A patch that does not apply is
   * exit 92 (overlay failed).
   */
  overlayBase?: string;
  /**
   * Apply a PR's source change (`git diff base head` of `files`, three-way) over the checkout after the
   * tests are laid over: does the fix work at an older commit (core/attribution predates.ts). A change
   * that does not apply is exit 94 (no report): no probe.
   */
  sourceChange?: { base: string; head: string; files: string[] };
  /** Modules run for the data files they read: only their cases naming those files, and a sample (runners/types.ts KeepRule). */
  keep?: readonly KeepRule[];
  /** Every other test file runs at most this many of its cases: a probe that the tests run at all. */
  sample?: number;
}

export type { StateRun } from './run-report.ts';

export interface ChainEnv {
  readonly containerId: string;
  runState(req: StateRequest): Promise<StateRun>;
  /**
   * Run a state `passes` times in one runner process, one run per pass (Runner.splitPasses); absent
   * when the runner cannot. Every pass is a run as runState's would be, but the process starts once.
   */
  runPasses?(req: StateRequest, passes: number): Promise<StateRun[]>;
  /** Remove the container (force). Idempotent. */
  close(): Promise<void>;
}

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

const REV = /^[^-\s][^\s]*$/;

function checkRequest(req: StateRequest): void {
  const source = req.sourceChange;
  for (const [what, rev] of [['checkout', req.checkout], ['overlay', req.overlay], ['overlay base', req.overlayBase ?? null], ['source base', source?.base ?? null], ['source head', source?.head ?? null]] as const) {
    if (rev !== null && (!REV.test(rev) || rev === '-')) {
      throw new ForesightError(`invalid ${what} revision "${rev}"`, { remedy: 'pass a commit sha' });
    }
  }
  for (const { arg } of req.select ?? []) {
    if (arg !== null && (arg === '' || /[\0\n\r\t]/.test(arg) || arg.startsWith('-'))) {
      throw new ForesightError(`invalid test selection ${JSON.stringify(arg)}`, { remedy: 'select tests by the ids the runner reported' });
    }
  }
  if (selectText(req).length > SELECT_MAX_CHARS) {
    throw new ForesightError(`a selection of ${req.select?.length ?? 0} tests is too long for one run`, { remedy: 'run the whole test files instead' });
  }
  if (source && !source.files.length) throw new ForesightError('a source change names no file', { remedy: "pass the PR's changed source files" });
  for (const f of [...req.testFiles, ...(req.overlayFiles ?? []), ...(req.select ?? []).map((s) => s.file), ...(source?.files ?? [])]) {
    // Stored names (pathText): judged on the bytes they name, which checkout.sh turns them back into.
    const b = namedBytes(f);
    const bad =
      b === null || b === '' || path.posix.isAbsolute(b) || b.split('/').includes('..') || /[\0\n\r]/.test(b) || b.startsWith('-');
    if (bad) {
      throw new ForesightError(`invalid test file path ${JSON.stringify(f)}`, {
        remedy: 'pass repo-relative paths inside the repository',
      });
    }
  }
}

/** The bytes a stored file name names, one character each (Latin-1); null for a malformed quoted name. */
function namedBytes(f: string): string | null {
  try {
    return pathBytes(f).toString('latin1');
  } catch {
    return null;
  }
}

/** One environment string holds the selection: the kernel caps one at 128 KiB. */
const SELECT_MAX_CHARS = 100_000;

/** The keep rules as the runner reads them from FORESIGHT_KEEP: `<module>\t<data file>…` lines; a name a line cannot hold is left out (its module runs whole). */
export function keepText(rules: readonly KeepRule[]): string {
  const plain = (s: string): boolean => s !== '' && !/[\0\n\r\t]/.test(s);
  return rules
    .filter((r) => plain(r.module) && r.data.length > 0 && r.data.every(plain))
    .map((r) => [r.module, ...r.data].join('\t'))
    .join('\n');
}

/** The selection as run_state.sh reads it from FORESIGHT_SELECT: `<file>\t<arg>` lines (empty arg: the file). */
function selectText(req: StateRequest): string {
  return (req.select ?? []).map((s) => `${s.file}\t${s.arg ?? ''}`).join('\n');
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

/** Repository code never reaches outside: a network it joins must be an internal one. */
export async function assertInternalNetwork(docker: Docker, name: string): Promise<void> {
  const info = (await docker.getNetwork(name).inspect().catch((err: unknown) => {
    throw new ForesightError(`cannot inspect network ${name}: ${(err as Error).message}`, { remedy: 'start the database service first (startService)', external: true, cause: err });
  })) as { Internal?: boolean };
  if (info.Internal !== true) throw new ForesightError(`network ${name} is not internal: test containers may join only an internal network`, { remedy: 'create it with `docker network create --internal` (startService does)' });
}

export async function openChainEnv(opts: ChainEnvOptions): Promise<ChainEnv> {
  opts.signal?.throwIfAborted();
  const docker = opts.docker ?? connectDocker();
  const gitDir = await absoluteGitDir(opts.gitDir);
  const runnerDir = await resolveRunnerDir(opts.runner);
  const memory = opts.memoryBytes ?? DEFAULT_LIMITS.memoryBytes;
  if (opts.network) await assertInternalNetwork(docker, opts.network);
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: opts.image,
      Cmd: ['sleep', 'infinity'],
      User: '65534:65534',
      Env: ['HOME=/tmp', ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)],
      WorkingDir: '/tmp',
      Labels: ownerLabels(),
      // NetworkMode none is loopback only. NetworkDisabled is not set: it also leaves /etc/hosts empty, and
      // `localhost` must resolve (vitest's workers, test servers on 127.0.0.1).
      HostConfig: {
        NetworkMode: opts.network || 'none',
        ...lockedDown({
          memoryBytes: memory,
          pidsLimit: opts.pidsLimit ?? DEFAULT_LIMITS.pidsLimit,
          nanoCpus: opts.nanoCpus ?? DEFAULT_LIMITS.nanoCpus,
          diskBytes: opts.diskBytes ?? DEFAULT_LIMITS.diskBytes,
        }),
        Binds: [`${gitDir}:/src:ro`, `${runnerDir}:/foresight:ro`],
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
    return this.enqueue(req, () => execRunner(this.container, this.execOf(req), this.hooks()));
  }

  get runPasses(): ((req: StateRequest, passes: number) => Promise<StateRun[]>) | undefined {
    if (!this.runner.splitPasses) return undefined;
    return (req, passes) => {
      if (!Number.isInteger(passes) || passes < 1) return Promise.reject(new ForesightError(`invalid number of passes ${passes}`, { remedy: 'pass a positive integer' }));
      return this.enqueue(req, () => execRunnerPasses(this.container, this.execOf(req), passes, this.hooks()));
    };
  }

  private enqueue<T>(req: StateRequest, go: () => Promise<T>): Promise<T> {
    try {
      checkRequest(req);
    } catch (err) {
      return Promise.reject(err);
    }
    // States share /tmp/testbed: run them one at a time.
    const run = this.queue.then(() => {
      if (this.closed) {
        throw new ForesightError('runState() on a closed chain env', { remedy: 'open a new env with openChainEnv()' });
      }
      return go();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private execOf(req: StateRequest): RunnerExec {
    const overlayFiles = req.overlay ? (req.overlayFiles ?? []).filter((f) => !req.testFiles.includes(f)) : [];
    return {
      runner: this.runner,
      checkout: req.checkout,
      overlay: req.overlay ?? '-',
      testFiles: req.testFiles,
      env: [
        `FORESIGHT_OVERLAY_FILES=${overlayFiles.join('\n')}`,
        ...(req.select ? [`FORESIGHT_SELECT=${selectText(req)}`] : []),
        ...(req.keep?.length ? [`FORESIGHT_KEEP=${keepText(req.keep)}`, `FORESIGHT_KEEP_SAMPLE=${KEEP_SAMPLE}`] : []),
        ...(req.sample !== undefined ? [`FORESIGHT_SAMPLE=${req.sample}`] : []),
        ...(req.overlay && req.overlayBase ? [`FORESIGHT_OVERLAY_BASE=${req.overlayBase}`] : []),
        ...(req.sourceChange ? [`FORESIGHT_SOURCE_BASE=${req.sourceChange.base}`, `FORESIGHT_SOURCE_HEAD=${req.sourceChange.head}`, `FORESIGHT_SOURCE_FILES=${req.sourceChange.files.join('\n')}`] : []),
      ],
      timeoutSec: this.timeoutSec,
    };
  }

  private hooks(): RunnerExecHooks {
    return {
      what: 'docker exec in the chain container failed',
      onDeadline: async () => {
        this.stopped = true;
        await this.container.kill();
      },
      exec: async (exec) => {
        if (this.stopped) await this.start();
        return exec().catch(async (err: unknown) => {
          if (statusCode(err) !== 409 || this.closed) throw err;
          await this.start(); // stopped behind our back (killed, daemon restart): start it again
          return exec();
        });
      },
      alive: () => !this.closed,
    };
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
