/**
 * Grading one agent's patch in a tier-3 eval image: the repository is at /testbed at the row's base
 * commit and holds nothing of the future; the held-out test files reach the container only here, after
 * the agent has finished, as the row's grading bundle.
 *
 * Each run (X, then Y) happens in a fresh locked-down container (no network, uid 65534, limits, no
 * capabilities, read-only root filesystem, a size-limited tmpfs at /tmp as the only writable place),
 * removed at the end and at once when the run aborts, so nothing one run leaves behind reaches the
 * next. In it: the base commit is checked out in /tmp/testbed (objects borrowed from /testbed), the
 * plug-ins the environment installs are listed (before any of the patch's code can run), the patch is
 * applied with `git apply` (one that does not apply is `patch_failed`, scored X = Y = 0, never a throw),
 * then the test harness is restored to the row's gold version (the base with the row's own patch
 * applied): whatever the runner declares as harness (conftest.py files, pytest configuration and its
 * sections, plug-in modules, sitecustomize/.pth, Django's runtests.py and settings), the graded and
 * bundle test files, and new files that could be collected or shadow a graded test (runners/harness.py;
 * each is listed as tampering). The bundle's files are laid over it and the runner runs in place, its
 * report through a pipe nothing else can rewrite. X = share of FAIL_TO_PASS passing (PASS_TO_PASS
 * regressions beside it); Y = share of ANTICIPATION_FAIL_TO_PASS passing with PR2's files laid too.
 *
 * A run that is no evidence (timeout, no report, runner crash, nothing collected: runners/evidence.ts)
 * is run once more in a new container; still none makes that score `infra` here, and the caller
 * (`foresight eval`) decides with a gold run whether the patch caused it (noEvidenceUnderPatch).
 */
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { EVAL_RUNNER_PATH, EVAL_UID } from '../image/eval-image.ts';
import { dockerError } from '../image/docker-image.ts';
import { runProblem } from '../runners/evidence.ts';
import { DEFAULT_LIMITS, keepText } from './chain-env.ts';
import { KEEP_SAMPLE } from '../runners/types.ts';
import { lockedDown } from './limits.ts';
import { forceRemove, ownerLabels, removeOnAbort } from './cleanup.ts';
import { runExec, type ExecOutcome } from './exec.ts';
import { execRunner } from './run-report.ts';
import { makeTar, type TarFile } from './tar.ts';
import { backendEnv, startService, type ServiceSession } from '../services/sidecar.ts';
import { GradingBundleSchema, type BundleFile, type GradedRun, type GradeOptions, type GradedStatus, type GradeResult, type ParsedBundle, type Score, type TamperedFile } from './grade-model.ts';

export * from './grade-model.ts';
import { APPLY_SCRIPT, GIT_STEP_MS, HARNESS_PY, patchText, PREPARE_SCRIPT, RESET_SCRIPT, SCRATCH, testDirsOf, USER, WORKTREE } from './grade-steps.ts';

export { testDirsOf } from './grade-steps.ts';

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

/**
 * `score` turned into a failure when the patch's runs were no evidence and the gold run's were: a
 * patch that makes its own run produce nothing scores 0 %, never `infra`. `goldHasEvidence` false
 * (the image cannot run the row either) keeps `infra`.
 */
export function noEvidenceUnderPatch(s: Score, ids: number, goldHasEvidence: boolean): Score {
  if (s.kind !== 'infra' || !goldHasEvidence) return s;
  return { kind: 'scored', value: 0, passed: 0, total: ids, reason: 'no_evidence_under_patch', detail: `${s.reason}: ${s.detail}` };
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

/** One run of one part in its own container: the patch did not apply, or the run and what was restored. */
type Attempt = { kind: 'patch_failed'; detail: string; applyLog: string } | { kind: 'ran'; run: GradedRun; applyLog: string; reset: string[]; tampered: TamperedFile[] };

async function gradeWith(opts: GradeOptions, service: ServiceSession, t0: number): Promise<GradeResult> {
  const bundle = GradingBundleSchema.parse(opts.bundle);
  const guard = opts.guard ?? true;
  const protect = [...new Set([...bundle.x.files, ...bundle.y.files].map((f) => f.path).concat(bundle.x.run, bundle.y.run))].sort();
  const part = async (layers: ParsedBundle['x'][], run: string[], ids: readonly string[], label: string): Promise<Attempt | null> => {
    if (ids.length === 0) return null;
    const keep = layers[layers.length - 1]!.keep;
    let attempt = await attemptPart(opts, service, { layers, run, keep, protect, label, guard });
    // No evidence: once more in a new container, so that a passing fault is never the score.
    if (guard && attempt.kind === 'ran' && attempt.run.problem) {
      const again = await attemptPart(opts, service, { layers, run, keep, protect, label, guard });
      attempt = again.kind === 'ran' ? { ...again, run: { ...again.run, attempts: 2 } } : again;
    }
    return attempt;
  };
  const xIds = [...opts.f2p, ...opts.p2p];
  const xa = await part([bundle.x], bundle.x.run, opts.f2p.length ? xIds : [], 'X');
  const failed = (a: Attempt): GradeResult => {
    const zero = { kind: 'scored' as const, value: 0, passed: 0 };
    return { kind: 'patch_failed', detail: a.kind === 'patch_failed' ? a.detail : '', applyLog: a.applyLog, x: { ...zero, total: opts.f2p.length }, y: { ...zero, total: opts.anti.length }, gap: 0, durationMs: Date.now() - t0 };
  };
  if (xa?.kind === 'patch_failed') return failed(xa);
  const ya = await part([bundle.x, bundle.y], bundle.y.run, opts.anti, 'Y');
  if (ya?.kind === 'patch_failed') return failed(ya);
  const xRun = xa?.run ?? null;
  const yRun = ya?.run ?? null;
  const x = score(opts.f2p, xRun);
  const y = score(opts.anti, yRun);
  const evidence = xRun !== null && xRun.problem === null;
  const tampered = new Map<string, TamperedFile>();
  for (const t of [...(xa?.tampered ?? []), ...(ya?.tampered ?? [])]) tampered.set(t.path, t);
  return {
    kind: 'graded',
    applyLog: xa?.applyLog ?? ya?.applyLog ?? 'no test to grade: nothing applied\n',
    reset: [...new Set([...(xa?.reset ?? []), ...(ya?.reset ?? [])])].sort(),
    tampered: [...tampered.values()].sort((a, b) => (a.path < b.path ? -1 : 1)),
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
}

interface PartPlan {
  /** Bundle parts laid in order over the restored tree. */
  layers: ParsedBundle['x'][];
  run: string[];
  /** The run's modules read for their data files: only the cases naming the files (the last layer's). */
  keep: ParsedBundle['x']['keep'];
  protect: string[];
  label: string;
  guard: boolean;
}

async function attemptPart(opts: GradeOptions, service: ServiceSession, plan: PartPlan): Promise<Attempt> {
  const { docker, signal } = opts;
  const limits = opts.limits ?? {};
  const timeoutSec = limits.timeoutSec ?? DEFAULT_LIMITS.runTimeoutSec;
  const memory = limits.memoryBytes ?? DEFAULT_LIMITS.memoryBytes;
  const pidsLimit = limits.pidsLimit ?? DEFAULT_LIMITS.pidsLimit;
  const nanoCpus = limits.nanoCpus ?? DEFAULT_LIMITS.nanoCpus;
  const hostLimits = plan.guard
    ? lockedDown({ memoryBytes: memory, pidsLimit, nanoCpus, diskBytes: limits.diskBytes ?? DEFAULT_LIMITS.diskBytes })
    : { Memory: memory, MemorySwap: memory, PidsLimit: pidsLimit, NanoCpus: nanoCpus, SecurityOpt: ['no-new-privileges'], CapDrop: ['ALL'], Init: true };
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: opts.image,
      Cmd: ['sleep', 'infinity'],
      User: USER,
      Env: ['HOME=/tmp', ...Object.entries(backendEnv(opts.env ?? {}, service)).map(([k, v]) => `${k}=${v}`)],
      WorkingDir: '/tmp',
      Labels: ownerLabels(),
      // Only a service's internal network (startService makes it --internal), else loopback only: nothing
      // outside. Not NetworkDisabled, which leaves /etc/hosts without `localhost`.
      HostConfig: { NetworkMode: service.network ?? 'none', ...hostLimits },
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
  const guarded = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      signal?.throwIfAborted();
      const out = await fn();
      // An abort removes the container mid-step: what the step saw then is no result.
      signal?.throwIfAborted();
      return out;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw dockerError(what, err);
    }
  };
  const sh = (what: string, script: string, args: readonly string[] = [], stdin?: Buffer): Promise<ExecOutcome> =>
    guarded(what, () => runExec(container, ['sh', '-c', script, 'sh', ...args], { capture: 'combined', deadlineMs: GIT_STEP_MS, onDeadline: () => container.kill(), ...(stdin ? { stdin } : {}) }));
  const lay = async (what: string, files: TarFile[], at: string): Promise<void> => {
    if (files.length === 0) return;
    const res = await sh(what, `mkdir -p "$1" && tar -x --no-same-owner --no-same-permissions -C "$1" -f -`, [at], await makeTar(files, { uid: EVAL_UID, gid: EVAL_UID }));
    if (res.exitCode !== 0) throw new ForesightError(`${what}: ${res.text.trim().slice(-500)}`, { remedy: 'check the eval image: /tmp must be writable by uid 65534', external: true });
  };
  const imageFault = (what: string, res: ExecOutcome): ForesightError =>
    new ForesightError(`${what} in the grading container of ${opts.image} failed: ${res.text.trim().slice(-500)}`, {
      remedy: 'check the eval image: /testbed must be a git work tree owned by uid 65534 (re-emit the dataset to rebuild it)',
      external: true,
    });

  try {
    await guarded(`cannot start the grading container from ${opts.image}`, () => container.start());
    const wantPlugins = plan.guard && opts.runner.harness.plugins;
    const prep = await sh('checking out the base commit', PREPARE_SCRIPT, [wantPlugins ? 'plugins' : 'none']);
    if (prep.exitCode !== 0) throw imageFault('checking out the base commit', prep);
    const plugins = (/^plugins: (.*)$/m.exec(prep.text)?.[1] ?? '').split(/\s+/).filter((m) => /^[A-Za-z_][A-Za-z0-9_.]*$/.test(m));
    if (plan.guard && opts.runner.harness.reportPipe) {
      const check = await sh('checking the runner files', `grep -q FORESIGHT_GUARD "$1"`, [`${EVAL_RUNNER_PATH}/${opts.runner.script}`]);
      if (check.exitCode !== 0) {
        throw new ForesightError(`eval image ${opts.image} predates guarded grading (its ${opts.runner.script} has no FORESIGHT_GUARD)`, {
          remedy: 'emit the dataset again with this foresight (foresight emit --force) to rebuild its eval images',
        });
      }
    }

    // 1. The agent's patch, then the gold tree.
    const patch = patchText(opts.patch);
    const gold = patchText(opts.goldPatch);
    await lay('cannot copy the patches into the grading container', [
      { path: 'patch.diff', content: Buffer.from(patch, 'utf8') },
      { path: 'gold.diff', content: Buffer.from(gold, 'utf8') },
    ], SCRATCH);
    const applied = await sh('git apply in the grading container failed', APPLY_SCRIPT);
    let applyLog = patch === '' ? 'empty patch: nothing to apply\n' : applied.text.replace(/^gold-tree: .*\n?/m, '');
    if (applied.exitCode !== 0) {
      const detail = applied.deadlineHit ? `git apply did not finish within ${GIT_STEP_MS / 1000} s` : applyLog.trim() || `git apply exited ${applied.exitCode}`;
      return { kind: 'patch_failed', detail, applyLog };
    }
    const goldTree = /^gold-tree: (\S+)$/m.exec(applied.text)?.[1] ?? 'HEAD';

    // 2. The harness (guarded) or the test files (unguarded) back to gold.
    let reset: string[] = [];
    let tampered: TamperedFile[] = [];
    if (plan.guard) {
      const h = opts.runner.harness;
      const spec = {
        gold: goldTree,
        whole: h.whole,
        sections: h.sections,
        newFiles: h.newFiles,
        plugins: h.plugins,
        ...(h.configModules ? { configModules: h.configModules } : {}),
        testDirs: h.newFilesInTestDirs === false ? [] : testDirsOf(plan.protect),
        protect: plan.protect,
      };
      const res = await sh('restoring the test harness', `cd ${WORKTREE} && GIT_CONFIG_GLOBAL=/tmp/.gitconfig exec /usr/bin/python3 -I -c "$1" "$2"`, [HARNESS_PY, JSON.stringify(spec)]);
      const out = /^\{"changes".*$/m.exec(res.text)?.[0];
      if (res.exitCode !== 0 || out === undefined) {
        // The patch left a tree git cannot restore (a directory turned into a symlink, say): the patch's doing.
        const why = res.text.trim().split('\n').slice(-3).join(' ').slice(0, 500);
        return { kind: 'patch_failed', detail: `the test harness cannot be restored after the patch: ${why}`, applyLog: applyLog + res.text };
      }
      const changes = (JSON.parse(out) as { changes: TamperedFile[] }).changes;
      const isProtected = new Set(plan.protect);
      reset = changes.filter((c) => isProtected.has(c.path)).map((c) => c.path);
      tampered = changes.filter((c) => !isProtected.has(c.path));
      applyLog += changes.map((c) => `${c.action} ${c.path}\n`).join('');
    } else {
      const res = await sh('resetting the test files in the grading container failed', RESET_SCRIPT, plan.protect);
      if (res.exitCode !== 0) throw imageFault('resetting the test files', res);
      reset = res.text.split('\n').filter((l) => /^(reset|removed) /.test(l)).map((l) => l.replace(/^(reset|removed) /, ''));
      applyLog += res.text;
    }

    // 3. The bundle's files, then the runner in place.
    for (const layer of plan.layers) {
      await lay(`cannot lay the ${plan.label} test files into the grading container`, layer.files.map((f) => ({ path: f.path, content: fileContent(f) })), WORKTREE);
    }
    signal?.throwIfAborted();
    const env = [
      `FORESIGHT_TESTBED=${WORKTREE}`,
      ...(plan.guard ? ['FORESIGHT_GUARD=1', `FORESIGHT_PLUGINS=${plugins.join(' ')}`] : []),
      ...(plan.keep.length ? [`FORESIGHT_KEEP=${keepText(plan.keep)}`, `FORESIGHT_KEEP_SAMPLE=${KEEP_SAMPLE}`] : []),
    ];
    const run = await execRunner(
      container,
      { runner: opts.runner, checkout: '.', overlay: '-', testFiles: plan.run, env, timeoutSec, runnerPath: EVAL_RUNNER_PATH, reportPipe: plan.guard && opts.runner.harness.reportPipe },
      { what: `docker exec in the grading container failed (${plan.label} run)`, onDeadline: () => container.kill(), alive: () => !removed },
    );
    signal?.throwIfAborted();
    return {
      kind: 'ran',
      applyLog,
      reset,
      tampered,
      run: {
        kind: run.kind,
        exitCode: run.exitCode,
        durationMs: run.durationMs,
        tests: run.parsed.tests,
        collectionErrors: run.parsed.collectionErrors,
        problem: runProblem(run, opts.runner.exitCodes),
        outputTail: run.outputTail,
        attempts: 1,
      },
    };
  } finally {
    removed = true;
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
