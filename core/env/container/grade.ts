/**
 * Grading one agent's patch in a tier-3 eval image (issue #8): the repository is at /testbed at the
 * row's base commit and holds nothing of the future; the held-out test files reach the container only
 * here, after the agent has finished, as the row's grading bundle.
 *
 * One locked-down container (no network, uid 65534, limits, no capabilities), removed at the end and
 * at once when the run aborts. In it: `git apply` the patch in /testbed (one that does not apply is a
 * `patch_failed` result, scored X = Y = 0, never a throw); reset every bundle or graded test file the
 * patch touched to the base (an agent must not grade itself with its own version of a held-out test);
 * lay the bundle's X files and run the runner in place on x.run (X = share of FAIL_TO_PASS passing,
 * PASS_TO_PASS regressions beside it); lay the Y files over them and run y.run (Y = share of
 * ANTICIPATION_FAIL_TO_PASS passing). A run that is no evidence (timeout, no report, runner crash,
 * nothing collected: runners/evidence.ts) makes that score `infra`, never 0 %.
 */
import type Docker from 'dockerode';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { ForesightError } from '../../errors.ts';
import { EVAL_REPO_PATH, EVAL_RUNNER_PATH, EVAL_UID } from '../image/eval-image.ts';
import { dockerError } from '../image/docker-image.ts';
import { runProblem, type RunProblem } from '../runners/evidence.ts';
import type { Runner, TestStatus } from '../runners/types.ts';
import { DEFAULT_LIMITS } from './chain-env.ts';
import { containerLimits } from './limits.ts';
import { forceRemove, ownerLabels, removeOnAbort } from './cleanup.ts';
import { runExec } from './exec.ts';
import { execRunner, type StateRun } from './run-report.ts';
import { isSafeRelativePath, makeTar, type TarFile } from './tar.ts';
import type { ServiceImageOptions } from '../services/image.ts';
import { backendEnv, startService, type ServiceSession } from '../services/sidecar.ts';

const RepoPath = z.string().refine(isSafeRelativePath, { message: 'must be a repo-relative path inside the repository' });

export const BundleFileSchema = z.object({
  path: RepoPath,
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});
export const BundlePartSchema = z.object({ files: z.array(BundleFileSchema), run: z.array(RepoPath) });
/** The row's `grading_bundle` (a JSON string in the dataset): the test files each score needs. */
export const GradingBundleSchema = z.object({ version: z.literal(1), x: BundlePartSchema, y: BundlePartSchema });
export type GradingBundle = z.infer<typeof GradingBundleSchema>;
export type BundleFile = z.infer<typeof BundleFileSchema>;

export interface GradeLimits {
  memoryBytes?: number;
  pidsLimit?: number;
  nanoCpus?: number;
  /** Per test run: SIGTERM after this, SIGKILL 5 s later (default 600). */
  timeoutSec?: number;
}

/** The grading limits from the configuration's validate section: grading runs tests as validate does. */
export function gradeLimits(cfg: Config['validate']): GradeLimits {
  const { runTimeoutSec, ...rest } = containerLimits(cfg);
  return { ...rest, timeoutSec: runTimeoutSec };
}

export interface GradeOptions {
  docker: Docker;
  /** The row's tier-3 eval image (`docker_image`). */
  image: string;
  runner: Runner;
  /** The agent's patch (a unified git diff); empty: nothing to apply. */
  patch: string;
  bundle: GradingBundle;
  /** FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS test ids (the runner's ids). */
  f2p: readonly string[];
  p2p: readonly string[];
  anti: readonly string[];
  limits?: GradeLimits;
  /** Extra environment of the test runs (a recipe's `env`). */
  env?: Readonly<Record<string, string>>;
  /** The run's signal: an abort removes the container at once and throws its reason. */
  signal?: AbortSignal;
  /**
   * The row's database backend (`db_backend`): a service backend is started in a sidecar on an internal
   * network next to the grading container, as validation ran it; sqlite or absent: none, no network.
   */
  backend?: string;
  /** Where the service image's build lock and log go, and its base image's alias (a service backend only). */
  service?: Pick<ServiceImageOptions, 'baseAlias' | 'lockDir' | 'log' | 'logDir'>;
}

/** A test's status in a graded run; `missing`: the run did not report it (not passing). */
export type GradedStatus = TestStatus | 'missing';

export type Score =
  | { kind: 'scored'; value: number; passed: number; total: number }
  /** The run was no evidence: infrastructure failures never score 0 %. */
  | { kind: 'infra'; reason: RunProblem['reason']; detail: string }
  /** No test to score (an empty set): nothing was run. */
  | { kind: 'empty' };

export interface GradedRun {
  kind: StateRun['kind'];
  exitCode: number | null;
  durationMs: number;
  /** Every test the runner reported, with its status. */
  tests: Record<string, TestStatus>;
  collectionErrors: string[];
  /** Why the run is not evidence, or null. */
  problem: RunProblem | null;
  outputTail: string;
}

interface Common {
  /** `git apply` output (or why nothing was applied), then the files reset before the bundle. */
  applyLog: string;
  x: Score;
  y: Score;
  /** X − Y; null when either is not scored. */
  gap: number | null;
  durationMs: number;
}

export type GradeResult =
  | (Common & {
      /** The patch does not apply: X = Y = 0 (scored), gap 0. */
      kind: 'patch_failed';
      /** git's message. */
      detail: string;
    })
  | (Common & {
      kind: 'graded';
      /** Bundle or graded test files the patch touched, reset to the base (or removed) before the bundle. */
      reset: string[];
      /** Status of each FAIL_TO_PASS / PASS_TO_PASS test in the X run, of each ANTICIPATION test in the Y run. */
      f2p: Record<string, GradedStatus>;
      p2p: Record<string, GradedStatus>;
      anti: Record<string, GradedStatus>;
      /** PASS_TO_PASS tests not passing in the X run; null when the X run is no evidence. */
      p2pRegressions: string[] | null;
      runs: { x: GradedRun | null; y: GradedRun | null };
    });

/** The patch is put at /tmp/<PATCH_NAME>. */
const PATCH_NAME = 'foresight-grade/patch.diff';
const PATCH_PATH = `/tmp/${PATCH_NAME}`;
/** Deadline of the git steps (apply, reset): they touch a few files. */
const GIT_STEP_MS = 120_000;
const OWNER = { uid: EVAL_UID, gid: EVAL_UID };

/** Resets the given files to HEAD (the base commit) when the patch touched them; removes those HEAD lacks. */
const RESET_SCRIPT = String.raw`cd /testbed || exit 1
for f do
  if git cat-file -e "HEAD:$f" 2>/dev/null; then
    if [ -n "$(git status --porcelain --untracked-files=all -- ":(literal)$f")" ]; then
      git checkout -q HEAD -- ":(literal)$f" || { echo "cannot reset $f" >&2; exit 1; }
      echo "reset $f"
    fi
  elif [ -e "$f" ] || [ -L "$f" ]; then
    rm -rf -- "$f" || { echo "cannot remove $f" >&2; exit 1; }
    echo "removed $f"
  fi
done`;

function fileContent(f: BundleFile): Buffer {
  return f.encoding === 'base64' ? Buffer.from(f.content, 'base64') : Buffer.from(f.content, 'utf8');
}

function statuses(ids: readonly string[], run: GradedRun | null): Record<string, GradedStatus> {
  return Object.fromEntries(ids.map((id) => [id, run?.tests[id] ?? 'missing']));
}

function score(ids: readonly string[], run: GradedRun | null): Score {
  if (ids.length === 0 || run === null) return { kind: 'empty' };
  if (run.problem) return { kind: 'infra', reason: run.problem.reason, detail: run.problem.detail };
  const passed = ids.filter((id) => run.tests[id] === 'pass').length;
  return { kind: 'scored', value: passed / ids.length, passed, total: ids.length };
}

function gapOf(x: Score, y: Score): number | null {
  return x.kind === 'scored' && y.kind === 'scored' ? x.value - y.value : null;
}

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

/**
 * Grade `patch` in `image`. Resolves to the result (a patch that does not apply included); throws a
 * ForesightError only when Docker fails (the image is missing, the daemon is gone) and the abort
 * reason when `signal` aborts.
 */
export async function gradeInstance(opts: GradeOptions): Promise<GradeResult> {
  const t0 = Date.now();
  const { docker, signal } = opts;
  // A malformed bundle is refused before any service starts.
  GradingBundleSchema.parse(opts.bundle);
  signal?.throwIfAborted();
  // The row's database service (none for sqlite): started first, removed last.
  const service = await startService({ backend: opts.backend ?? 'sqlite', docker, signal, ...opts.service });
  try {
    return await gradeWith(opts, service, t0);
  } finally {
    await service.close().catch(() => undefined);
  }
}

async function gradeWith(opts: GradeOptions, service: ServiceSession, t0: number): Promise<GradeResult> {
  const { docker, signal } = opts;
  const bundle = GradingBundleSchema.parse(opts.bundle);
  const limits = opts.limits ?? {};
  const timeoutSec = limits.timeoutSec ?? DEFAULT_LIMITS.runTimeoutSec;
  const memory = limits.memoryBytes ?? DEFAULT_LIMITS.memoryBytes;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: opts.image,
      Cmd: ['sleep', 'infinity'],
      User: `${EVAL_UID}:${EVAL_UID}`,
      Env: ['HOME=/tmp', ...Object.entries(backendEnv(opts.env ?? {}, service)).map(([k, v]) => `${k}=${v}`)],
      WorkingDir: EVAL_REPO_PATH,
      Labels: ownerLabels(),
      // Only a service's internal network (startService makes it --internal): nothing outside.
      NetworkDisabled: service.network === null,
      HostConfig: {
        NetworkMode: service.network ?? 'none',
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: limits.pidsLimit ?? DEFAULT_LIMITS.pidsLimit,
        NanoCpus: limits.nanoCpus ?? DEFAULT_LIMITS.nanoCpus,
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
        // docker-init as pid 1 reaps the orphans of killed test runs.
        Init: true,
      },
    });
  } catch (err) {
    if (statusCode(err) === 404) {
      throw new ForesightError(`eval image ${opts.image} is not present`, {
        remedy: 'build it (emit builds the eval images) or pull it from the registry the dataset names',
        external: true,
        cause: err,
      });
    }
    throw dockerError(`cannot create the grading container from ${opts.image}`, err);
  }
  const dispose = removeOnAbort(docker, container.id, signal);
  let removed = false;
  let stopped = false;
  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      signal?.throwIfAborted();
      return await fn();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw dockerError(what, err);
    }
  };
  const sh = (what: string, script: string, args: readonly string[] = []) =>
    guard(what, () => runExec(container, ['sh', '-c', script, 'sh', ...args], { capture: 'combined', deadlineMs: GIT_STEP_MS, onDeadline: () => container.kill() }));
  const put = (what: string, files: TarFile[], at: string) => guard(what, () => container.putArchive(makeTar(files, OWNER), { path: at }));

  try {
    await guard(`cannot start the grading container from ${opts.image}`, () => container.start());

    // 1. The agent's patch.
    let applyLog: string;
    if (opts.patch.trim() === '') {
      applyLog = 'empty patch: nothing to apply\n';
    } else {
      const patch = opts.patch.endsWith('\n') ? opts.patch : `${opts.patch}\n`;
      await put('cannot copy the patch into the grading container', [{ path: PATCH_NAME, content: Buffer.from(patch, 'utf8') }], '/tmp');
      const res = await sh('git apply in the grading container failed', `cd ${EVAL_REPO_PATH} && git apply --verbose ${PATCH_PATH}`);
      applyLog = res.text;
      if (res.exitCode !== 0) {
        const zero: Score = { kind: 'scored', value: 0, passed: 0, total: 0 };
        const detail = res.deadlineHit ? `git apply did not finish within ${GIT_STEP_MS / 1000} s` : res.text.trim() || `git apply exited ${res.exitCode}`;
        return {
          kind: 'patch_failed',
          detail,
          applyLog,
          x: { ...zero, total: opts.f2p.length },
          y: { ...zero, total: opts.anti.length },
          gap: 0,
          durationMs: Date.now() - t0,
        };
      }
    }

    // 2. Every bundle or graded test file the patch touched goes back to the base.
    const testFiles = [...new Set([...bundle.x.files, ...bundle.y.files].map((f) => f.path).concat(bundle.x.run, bundle.y.run))];
    const reset = await sh('resetting the test files in the grading container failed', RESET_SCRIPT, testFiles);
    if (reset.exitCode !== 0) {
      throw new ForesightError(`cannot reset the test files the patch touched: ${reset.text.trim().slice(-500)}`, {
        remedy: 'check the eval image: /testbed must be a git work tree owned by uid 65534',
        external: true,
      });
    }
    const resetFiles = reset.text.split('\n').filter((l) => /^(reset|removed) /.test(l)).map((l) => l.replace(/^(reset|removed) /, ''));
    applyLog += reset.text;

    // 3. X, then Y (PR2's versions laid over X's).
    const runPart = async (part: GradingBundle['x'], ids: readonly string[], label: string): Promise<GradedRun | null> => {
      if (part.files.length) {
        await put(`cannot lay the ${label} test files into the grading container`, part.files.map((f) => ({ path: f.path, content: fileContent(f) })), EVAL_REPO_PATH);
      }
      if (ids.length === 0) return null;
      if (stopped) {
        await guard('cannot restart the grading container', async () => {
          await container.start().catch((err: unknown) => {
            if (statusCode(err) !== 304) throw err;
          });
        });
        stopped = false;
      }
      signal?.throwIfAborted();
      const run = await execRunner(
        container,
        { runner: opts.runner, checkout: '.', overlay: '-', testFiles: part.run, env: [`FORESIGHT_TESTBED=${EVAL_REPO_PATH}`], timeoutSec, runnerPath: EVAL_RUNNER_PATH },
        {
          what: `docker exec in the grading container failed (${label} run)`,
          onDeadline: async () => {
            stopped = true;
            await container.kill();
          },
          alive: () => !removed,
        },
      );
      signal?.throwIfAborted();
      return {
        kind: run.kind,
        exitCode: run.exitCode,
        durationMs: run.durationMs,
        tests: run.parsed.tests,
        collectionErrors: run.parsed.collectionErrors,
        problem: runProblem(run, opts.runner.exitCodes),
        outputTail: run.outputTail,
      };
    };
    const xRun = await runPart(bundle.x, opts.f2p.length + opts.p2p.length > 0 ? [...opts.f2p, ...opts.p2p] : [], 'X');
    const yRun = await runPart(bundle.y, opts.anti, 'Y');
    const x = score(opts.f2p, xRun);
    const y = score(opts.anti, yRun);
    const evidence = xRun !== null && xRun.problem === null;
    return {
      kind: 'graded',
      applyLog,
      reset: resetFiles,
      x,
      y,
      gap: gapOf(x, y),
      f2p: statuses(opts.f2p, xRun),
      p2p: statuses(opts.p2p, xRun),
      anti: statuses(opts.anti, yRun),
      p2pRegressions: evidence ? opts.p2p.filter((id) => xRun.tests[id] !== 'pass') : null,
      runs: { x: xRun, y: yRun },
      durationMs: Date.now() - t0,
    };
  } finally {
    removed = true;
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
