/**
 * `foresight szz-eval --execute`: score execution-confirmed attribution on the oracle fixes whose
 * tests run here. Per fix: blame's prediction and ranked candidates (stages/szz predictFix, the wider
 * attribution), then the fix's tests at its parent and at the fix and the bisection of the fail->pass ones
 * in validate's environments and containers (fix-probe.ts executeFix). Both are scored on the same
 * entries: those with fail->pass tests. Each fix's result is checkpointed, so a rerun does no work.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { BISECT_DEFAULTS, BISECT_KINDS, bisectBudget, executionOutweighs, type Step } from '../../core/attribution/index.ts';
import type { Config } from '../../core/foundation/config.ts';
import { assertDockerReachable, connectDocker, ensureImage, packageSources } from '../../core/env/index.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import { fingerprint, type Fingerprint } from '../../core/foundation/fingerprint.ts';
import { codeKey, resumableMap, unkept } from '../../core/foundation/resumable.ts';
import { git, revParse } from '../../core/foundation/git.ts';
import { commitToChange, listChanges, type ListedChanges } from '../../core/history/changes.ts';
import { positions } from '../../core/history/mainline.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { NO_SECRETS } from '../../core/foundation/config.ts';
import { MetaChanges, predictFix, scoreRows, type OracleEntry, type Scores } from '../../stages/szz/index.ts';
import { ChainWork } from '../../stages/validate/index.ts';
import { executeFix, FIX_DROP_REASONS, type FixExecution } from './fix-probe.ts';

/** The rule that combines the two, printed with the table. */
export const EXECUTION_RULE =
  "blame + execution: the bisection's commit (found, or introduced: the tests cannot import before it and fail from it) replaces blame's prediction, except an introduced commit above blame's (below it the tests said nothing of blame's); any other outcome (ambiguous, budget, no good end, all skipped, flaky) leaves blame's prediction standing";

/** What a step shows beyond its outcome: why a skip, which tests failed (and how) or passed all the same. */
function whyOf(st: Step): string | null {
  if (st.outcome === 'good') return null;
  const passing = st.passing?.length ? `; passing: ${st.passing.join(', ')}` : '';
  if (st.outcome === 'skip') return `${st.reason}: ${st.detail.slice(0, 300)}${passing}`;
  return `${st.failing.map((t) => (st.kinds?.[t] ? `${t} [${st.kinds[t]}]` : t)).join(', ')}${passing}`;
}

const CostSchema = z.object({ containers: z.number(), runs: z.number(), seconds: z.number() });
const ExecutionSchema = z.union([
  z.object({ kind: z.literal('dropped'), reason: z.enum(FIX_DROP_REASONS), detail: z.string(), cost: CostSchema }),
  z.object({
    kind: z.literal('bisected'),
    /** How the bisection ended (core/attribution BisectKind). */
    outcome: z.enum(BISECT_KINDS),
    /** The commit it names (found or introduced), else null. */
    commit: z.string().nullable(),
    failToPass: z.array(z.string()),
    backend: z.string(),
    probes: z.number(),
    /** Each probe: commit, role, verdict (and why a skip), seconds; what the table's outcome rests on. */
    steps: z.array(z.object({ commit: z.string(), role: z.string(), outcome: z.string(), why: z.string().nullable(), seconds: z.number(), transplanted: z.boolean().default(false) })),
    /** The fail->pass tests the bisection followed when its good end passed only those (empty: all of them). */
    followed: z.array(z.string()).default([]),
    cost: CostSchema,
  }),
]);
export type FixExecutionSummary = z.infer<typeof ExecutionSchema>;

const CheckpointSchema = z.object({
  fix: z.string(),
  blame: z.object({ predicted: z.array(z.string()), candidates: z.array(z.string()) }),
  execution: ExecutionSchema,
});
type Checkpoint = z.infer<typeof CheckpointSchema>;

/** One oracle fix: what blame and the combination predict (first-parent commits) and what the work cost. */
export interface FixRow {
  fix: string;
  inducing: string[];
  blame: string[];
  combined: string[];
  execution: FixExecutionSummary;
  /** Read from a checkpoint: no work done this time. */
  reused: boolean;
}

export interface ExecuteReport {
  rows: FixRow[];
  /** On the same entries (those with fail->pass tests): blame alone, and blame + execution. */
  blame: Scores;
  combined: Scores;
  dropped: Array<{ fix: string; reason: string; detail: string }>;
  /** This run's container work (checkpointed fixes add nothing). */
  work: { fixesRun: number; containers: number; runs: number; seconds: number };
  /** With `ceiling`: the scored fixes whose probes named the oracle's commit (found or introduced). */
  ceiling: { named: number } | null;
}

export interface ExecuteOptions {
  repo: string;
  clone: string;
  oracle: readonly OracleEntry[];
  config: Config;
  /** The repository's data folder (env logs, detected recipes); the checkpoint goes to its szz-eval/fixes/. */
  repoDir: string;
  jobs: number;
  log: Logger;
  signal: AbortSignal;
  /**
   * Probe each fix's tests only at the oracle's commit's parent and at the commit (the search told the answer,
   * blame's candidates unused): whether execution can name that commit at all, an upper figure for any search.
   * Its own checkpoints (szz-eval/ceiling/); the same rule combines it with blame.
   */
  ceiling?: boolean;
}

/**
 * The first-parent commits a ceiling probe sees: each oracle commit's parent and the commit, and the fix's
 * parent (the bad end); oldest first. A commit not below the fix's parent on the first-parent line is left out.
 */
export function ceilingMainline<C extends { sha: string }>(mainline: readonly C[], inducing: readonly string[], base: string): C[] {
  const order = positions(mainline);
  const bad = order.get(base);
  if (bad === undefined) return [];
  const keep = new Set([bad]);
  for (const s of inducing) {
    const i = order.get(s);
    if (i !== undefined && i > 0 && i < bad) keep.add(i).add(i - 1);
  }
  return [...keep].sort((a, b) => a - b).map((i) => mainline[i]!);
}

export async function executeOracle(o: ExecuteOptions): Promise<ExecuteReport> {
  const history = await listChanges(o.clone, o.config.discover);
  const meta = new MetaChanges(o.clone);
  // The budget is keyed with the bisection's other constants (a default budget keeps earlier checkpoints).
  const { bisectMaxProbes: _p, bisectGoodEndProbes: _g, ...settings } = o.config.validate;
  // The key covers the code that computes a fix's result (this module's import closure), so a change to it redoes the fixes.
  const code = await codeKey(import.meta.url);
  const key = (fix: string): Fingerprint =>
    fingerprint(code, { repo: o.repo, fix, validate: { ...settings, jobs: null }, images: o.config.images.baseAlias, bisect: { ...BISECT_DEFAULTS, ...bisectBudget(o.config.validate) }, branch: o.config.discover.branch, ...(o.ceiling ? { ceiling: true } : {}) });
  const toMainline = mainlineOf(history);
  const fixes = await Promise.all(o.oracle.map(async (e) => ({ entry: e, sha: await revParse(o.clone, e.fix) })));
  // Docker and the environments are opened on the first fix that is not in the checkpoint.
  let opening = null as Promise<ChainWork> | null;
  const openWork = (): Promise<ChainWork> =>
    (opening ??= (async () => {
      const docker = connectDocker(o.config.docker.host);
      await assertDockerReachable(docker);
      const { images } = o.config;
      if (o.config.validate.image) await ensureImage(o.config.validate.image, { docker, log: o.log, baseAlias: images.baseAlias, lockDir: images.lockDir });
      return ChainWork.open({
        repo: { name: o.repo, clone: o.clone }, repoDir: o.repoDir, validate: o.config.validate, discover: o.config.discover,
        sourceSettings: sourceSettings(o.config, NO_SECRETS), images, packages: packageSources(o.config, NO_SECRETS), docker, log: o.log, poolSize: o.jobs,
      });
    })());
  let mapped: Awaited<ReturnType<typeof resumableMap<(typeof fixes)[number], Checkpoint>>>;
  try {
    mapped = await resumableMap(fixes, {
      checkpoint: join(o.repoDir, 'szz-eval', o.ceiling ? 'ceiling' : 'fixes', 'checkpoint.jsonl'),
      label: 'executing fixes',
      log: o.log,
      signal: o.signal,
      concurrency: o.jobs,
      key: (f) => key(f.sha),
      id: (f) => f.sha.slice(0, 10),
      schema: CheckpointSchema,
      compute: async (f) => {
        const work = await openWork();
        const blame = await predictFix(o.clone, f.entry, { variant: 'foresight', meta });
        const base = (await git(o.clone, ['rev-parse', '--verify', '--end-of-options', `${f.sha}^1`])).trim();
        const label = `szz-eval-${f.sha.slice(0, 10)}`;
        const told = o.ceiling ? await Promise.all(f.entry.inducing.map(async (s) => toMainline(await revParse(o.clone, s).catch(() => s)))) : null;
        const probed = told ? { candidates: told, history: { ...history, mainline: ceilingMainline(history.mainline, told, base), changes: [] } } : { candidates: blame.candidates, history };
        const predicted = { predicted: blame.predicted, candidates: blame.candidates };
        try {
          const r = await executeFix(work, { clone: o.clone, fix: { baseSha: base, headSha: f.sha }, ...probed, label }, o.signal, o.log);
          return { fix: f.sha, blame: predicted, execution: summarise(r) };
        } catch (err) {
          if (o.signal.aborted) throw err;
          // Our infrastructure (Docker, an image) failed: never evidence, and not checkpointed, so a rerun tries again.
          o.log.warn(`${f.sha.slice(0, 10)}: the tests could not run: ${errorMessage(err)}`);
          return unkept({ fix: f.sha, blame: predicted, execution: { kind: 'dropped' as const, reason: 'infra' as const, detail: errorMessage(err), cost: { containers: 0, runs: 0, seconds: 0 } } });
        }
      },
    });
  } finally {
    if (opening) await (await opening.catch(() => null))?.close();
  }
  // Not compacted: a run on part of the oracle (--limit) keeps the other fixes' results for the next.
  const order = positions(history.mainline);
  const rows: FixRow[] = [];
  for (const [i, f] of fixes.entries()) {
    const c = mapped.results[i]!;
    const inducing = [...new Set(await Promise.all(f.entry.inducing.map(async (s) => toMainline(await revParse(o.clone, s).catch(() => s)))))];
    const blame = [...new Set(c.blame.predicted.map(toMainline))];
    const ex = c.execution;
    const named = ex.kind === 'bisected' && ex.commit !== null && (ex.outcome === 'found' || ex.outcome === 'introduced') ? { kind: ex.outcome, commit: ex.commit } : null;
    const combined = named && executionOutweighs(named, blame[0] ?? null, order) ? [named.commit] : blame;
    rows.push({ fix: f.sha, inducing, blame, combined, execution: ex, reused: mapped.fromCheckpoint[i]! });
  }
  const scored = rows.filter((r) => r.execution.kind === 'bisected');
  const ran = rows.filter((r) => !r.reused);
  const sum = (k: 'containers' | 'runs' | 'seconds'): number => ran.reduce((a, r) => a + r.execution.cost[k], 0);
  const seconds = scored.reduce((a, r) => a + r.execution.cost.seconds, 0);
  return {
    rows,
    blame: scoreRows('foresight', scored.map((r) => ({ predicted: r.blame, inducing: r.inducing })), seconds),
    combined: scoreRows('foresight', scored.map((r) => ({ predicted: r.combined, inducing: r.inducing })), seconds),
    dropped: rows.flatMap((r) => (r.execution.kind === 'dropped' ? [{ fix: r.fix, reason: r.execution.reason, detail: r.execution.detail }] : [])),
    work: { fixesRun: ran.length, containers: sum('containers'), runs: sum('runs'), seconds: sum('seconds') },
    ceiling: o.ceiling ? { named: scored.filter((r) => r.execution.kind === 'bisected' && r.execution.commit !== null && r.inducing.includes(r.execution.commit)).length } : null,
  };
}

/** A commit as the first-parent history holds it: a merged branch's commit is its merge; others are themselves. */
function mainlineOf(history: ListedChanges): (sha: string) => string {
  const onMainline = new Set(history.mainline.map((c) => c.sha));
  const changeOf = commitToChange(history.changes);
  const mergeOf = new Map(history.changes.map((c) => [c.id, c.mergeSha]));
  return (sha) => (onMainline.has(sha) ? sha : (mergeOf.get(changeOf.get(sha) ?? '') ?? sha));
}

/** What a fix's execution is kept as: the drop, or the bisection's outcome with each probe. */
function summarise(r: FixExecution): FixExecutionSummary {
  if (r.kind === 'dropped') return r;
  return {
    kind: 'bisected',
    outcome: r.bisect.kind,
    commit: r.bisect.kind === 'found' || r.bisect.kind === 'introduced' ? r.bisect.commit : null,
    failToPass: r.failToPass,
    backend: r.backend,
    probes: r.bisect.steps.length,
    steps: r.bisect.steps.map((st) => ({
      commit: st.commit,
      role: st.role,
      outcome: st.outcome,
      why: whyOf(st),
      seconds: Math.round(st.seconds * 10) / 10,
      transplanted: st.transplanted ?? false,
    })),
    followed: 'followed' in r.bisect ? (r.bisect.followed ?? []) : [],
    cost: r.cost,
  };
}

/** The table, the rule, the cost per fix and every dropped fix with its reason. */
export function formatExecuteReport(r: ExecuteReport): string {
  const short = (s: string | null | undefined): string => (s ? s.slice(0, 10) : '-');
  const table = (head: string[], rows: string[][]): string[] => {
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i]!.length)));
    const fmt = (x: string[]): string => x.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd();
    return [fmt(head), fmt(w.map((n) => '-'.repeat(n))), ...rows.map(fmt)];
  };
  const scoreRow = (label: string, s: Scores): string[] => [label, String(s.fixes), String(s.predictions), String(s.truePositives), s.precision.toFixed(3), s.recall.toFixed(3), s.f1.toFixed(3)];
  const perFix = r.rows.map((x) => {
    const e = x.execution;
    const outcome = e.kind === 'dropped' ? `dropped: ${e.reason}` : `${e.outcome}${e.commit ? ` ${short(e.commit)}` : ''}`;
    const hit = (p: string[]): string => (p.length ? (p.some((s) => x.inducing.includes(s)) ? 'right' : 'wrong') : 'none');
    return [short(x.fix), outcome, e.kind === 'bisected' ? hit(x.blame) : '-', e.kind === 'bisected' ? hit(x.combined) : '-', String(e.cost.containers), String(e.cost.runs), e.cost.seconds.toFixed(1), x.reused ? 'checkpoint' : 'run'];
  });
  const reasons = new Map<string, number>();
  for (const d of r.dropped) reasons.set(d.reason, (reasons.get(d.reason) ?? 0) + 1);
  const scored = r.blame.fixes;
  const perScored = (k: 'containers' | 'runs' | 'seconds'): string => (scored ? (r.rows.filter((x) => x.execution.kind === 'bisected').reduce((a, x) => a + x.execution.cost[k], 0) / scored).toFixed(1) : '-');
  return [
    `scored: ${scored} of ${r.rows.length} oracle fixes (those whose tests fail at the fix's parent and pass at the fix); dropped: ${r.dropped.length}${reasons.size ? ` (${[...reasons].map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`,
    '',
    ...table(['variant', 'fixes', 'predictions', 'TP', 'precision', 'recall', 'F1'], [scoreRow('blame only', r.blame), scoreRow(r.ceiling ? "blame + execution at the oracle's commit (ceiling)" : 'blame + execution', r.combined)]),
    '',
    `rule: ${EXECUTION_RULE}`,
    ...(r.ceiling
      ? [
          `ceiling: each fix's tests probed only at the oracle's commit's parent and at the commit (blame's candidates unused); they named it for ${r.ceiling.named} of ${scored} scored fixes. No search bounded by candidates names a commit its tests cannot tell from its parent.`,
        ]
      : []),
    `cost per scored fix: ${perScored('containers')} containers started, ${perScored('runs')} runs (probes), ${perScored('seconds')} s; this run: ${r.work.fixesRun} fix(es) run, ${r.work.containers} containers, ${r.work.runs} runs, ${r.work.seconds.toFixed(1)} s`,
    '',
    ...table(['fix', 'execution', 'blame', 'blame+exec', 'containers', 'runs', 'seconds', 'from'], perFix),
    ...(r.dropped.length ? ['', 'dropped (not scored):', ...r.dropped.map((d) => `  ${short(d.fix)}  ${d.reason}: ${d.detail}`)] : []),
  ].join('\n');
}
