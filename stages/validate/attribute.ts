/**
 * Execution-confirmed attribution inside validate: a validated chain whose PR2 has fail->pass
 * tests has them bisected (core/attribution) in validate's environments and containers, bounded by blame's
 * candidates, on the backend its sets came from. Execution wins over blame and references; a first bad
 * commit of no change makes the chain `unattributed`. When the bisection names no commit, PR1's base is
 * probed with PR2's source change applied: anticipation tests that pass there only with it show a defect
 * older than PR1 (`defect_predates_pr1`). A bisection or probe that cannot run is recorded, never evidence.
 */
import { bisectInducer, chainBisectInput, decideAttribution, probePredates, sourceFilesOf, type AttributionDecision, type BisectBudget, type BisectResult } from '../../core/attribution/index.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import type { ListedChanges } from '../../core/history/changes.ts';
import { positions } from '../../core/history/mainline.ts';
import type { Attribution, PredatesProbe } from '../../core/foundation/model/attribution.ts';
import type { PullRequest } from '../../core/foundation/model/change.ts';
import type { ValidatedChain } from '../../core/foundation/model/validated.ts';
import { ChainContainers, type ContainerDeps } from './backend-containers.ts';
import type { EraEnv } from '../../core/env/index.ts';

export interface AttributeDeps {
  /** The first-parent history and its changes, as discover and szz list them (read once per run). */
  history: () => Promise<ListedChanges>;
  /** The environment era of a commit (validate's eraEnvironment), checked on PR2's test files; `without`: candidates the commit outgrew. */
  eraOf: (commit: string, testFiles: readonly string[], without?: readonly string[]) => Promise<EraEnv>;
  containers: ContainerDeps;
  /** The bisection's probe budget (validate's settings). */
  budget: BisectBudget;
}

export type ChainAttribution =
  /** PR1 stands (confirmed, or nothing better was found). */
  | { kind: 'kept'; record: Attribution }
  /** Execution names another change: the chain must be re-extracted and revalidated for `pr1`. */
  | { kind: 'moved'; record: Attribution; pr1: PullRequest }
  /** The tests stop passing at a commit of no change. */
  | { kind: 'unattributed'; record: Attribution; detail: string }
  /** No commit named, and PR2's source change makes the anticipation tests pass at PR1's base, where they fail without it. */
  | { kind: 'predates'; record: Attribution; detail: string };

/** Whether a validated chain can be bisected: PR2's tests fail at its base and pass at its head. */
export function canAttribute(v: ValidatedChain): boolean {
  return v.PR2_FAIL_TO_PASS.length > 0;
}

export async function attributeChain(v: ValidatedChain, deps: AttributeDeps): Promise<ChainAttribution> {
  const { mainline, changes } = await deps.history();
  const input = chainBisectInput(v, changes);
  const containers = new ChainContainers(deps.containers, v.db_backend, v.instance_id);
  try {
    let bisect: BisectResult;
    try {
      bisect = await bisectInducer({
        mainline,
        changes,
        ...input,
        ...deps.budget,
        envFor: async (commit, without) => containers.envOf(await deps.eraOf(commit, v.anticipation_test_files, without)),
        signal: deps.containers.signal,
        log: deps.containers.log,
        // Validate's S4 ran exactly this probe: PR2's tests laid over its base, where they fail.
        knownBad: v.PR2_FAIL_TO_PASS,
        knownBadKinds: s4Kinds(v),
      });
    } catch (err) {
      if (deps.containers.signal.aborted) throw err;
      // Our infrastructure (Docker, an image) failed: no evidence about the chain, its PR1 stands.
      const detail = `the bisection could not run: ${errorMessage(err)}`;
      deps.containers.log.warn(detail);
      return { kind: 'kept', record: { ...EMPTY, decision: 'error', change: v.pr1.id, detail } };
    }
    const order = positions(mainline);
    const decision = decideAttribution({ bisect, changes, blame: input.blame, reference: input.reference, order });
    const record = toRecord(decision, bisect);
    if (decision.kind === 'unattributed') return { kind: 'unattributed', record, detail: `execution: ${decision.detail} (blame or a reference named ${v.pr1.id})` };
    if (decision.kind === 'attributed' && decision.commit !== null && decision.change !== v.pr1.id) {
      const pr1 = changes.find((c) => c.id === decision.change);
      if (pr1) return { kind: 'moved', record: { ...record, moved_from: v.pr1.id }, pr1 };
    }
    if (!probeWanted(v, bisect, record, order)) return { kind: 'kept', record };
    const predates = await probeBase(v, deps, containers);
    const probed = { ...record, predates };
    if (predates.verdict !== 'predates') return { kind: 'kept', record: probed };
    return { kind: 'predates', record: probed, detail: `execution: ${predates.detail} (the bisection ended ${bisect.kind}; blame or a reference named ${v.pr1.id})` };
  } finally {
    await containers.close();
  }
}

const s4Kinds = (v: ValidatedChain): Record<string, string> => v.states.find((s) => s.name === 'S4')?.failureKinds ?? {};

/**
 * Whether PR1's base is probed with PR2's source change: only when the bisection named no commit (one
 * inside PR1 confirms it, another moves the chain), the chain is still in, and no probe passed at or above
 * PR1's base (the defect came after that pass, not before PR1). Most chains thus cost no run more.
 */
function probeWanted(v: ValidatedChain, bisect: BisectResult, record: Attribution, order: ReadonlyMap<string, number>): boolean {
  if (v.excluded || !v.ANTICIPATION_FAIL_TO_PASS.length) return false;
  if (record.decision !== 'attributed' && record.decision !== 'unknown') return false;
  if (record.commit !== null) return false;
  const base = order.get(v.pr1_base);
  if (base === undefined) return true;
  const atOrAbove = (sha: string): boolean => (order.get(sha) ?? -1) >= base;
  if ('good' in bisect && atOrAbove(bisect.good)) return false;
  return !bisect.steps.some((s) => s.outcome === 'good' && atOrAbove(s.commit));
}

/** The probe of PR1's base in the chain's PR1-era environment (the image S1 ran there); an infrastructure failure is no evidence. */
async function probeBase(v: ValidatedChain, deps: AttributeDeps, containers: ChainContainers): Promise<PredatesProbe> {
  const t0 = Date.now();
  try {
    return await probePredates({
      commit: v.pr1_base,
      fix: { baseSha: v.pr2_base, headSha: v.pr2_head },
      sourceFiles: await sourceFilesOf(deps.containers.gitDir, v.pr2_base, v.pr2_head),
      tests: v.ANTICIPATION_FAIL_TO_PASS,
      testFiles: v.anticipation_test_files,
      overlayFiles: v.anticipation_overlay_files,
      baseKinds: s4Kinds(v),
      env: async () => containers.envOf(await deps.eraOf(v.pr1_head, v.pr1_test_files)),
      signal: deps.containers.signal,
      log: deps.containers.log,
    });
  } catch (err) {
    if (deps.containers.signal.aborted) throw err;
    const detail = `the probe of PR1's base could not run: ${errorMessage(err)}`;
    deps.containers.log.warn(detail);
    return { commit: v.pr1_base, applied: { base: v.pr2_base, head: v.pr2_head, files: [] }, transplanted: false, tests: [], verdict: 'no_evidence', detail, runs: 0, seconds: Math.round((Date.now() - t0) / 100) / 10 };
  }
}

const EMPTY: Attribution = { decision: 'unknown', method: null, change: null, commit: null, execution: null, moved_from: null, disagreements: [], range: [], followed: [], steps: [], cost: null, detail: null, predates: null };

function toRecord(d: AttributionDecision, b: BisectResult): Attribution {
  const steps = b.steps.map((s) => ({ commit: s.commit, role: s.role, outcome: s.outcome, reason: s.outcome === 'skip' ? s.reason : null, seconds: Math.round(s.seconds * 10) / 10, reused: s.reused ?? false, transplanted: s.transplanted ?? false }));
  const base: Attribution = {
    ...EMPTY,
    execution: b.kind,
    range: b.kind === 'ambiguous' || b.kind === 'budget' ? b.commits : [],
    followed: 'followed' in b ? (b.followed ?? []) : [],
    steps,
    cost: { ...b.cost, seconds: Math.round(b.cost.seconds * 10) / 10 },
    detail: b.kind === 'no_bad_end' && b.verdict.outcome === 'skip' ? `PR2's base: ${b.verdict.detail}` : null,
  };
  if (d.kind === 'attributed') return { ...base, decision: 'attributed', method: d.method, change: d.change, commit: d.commit, disagreements: d.disagreements };
  if (d.kind === 'unattributed') return { ...base, decision: 'unattributed', commit: d.commit, disagreements: d.disagreements, detail: d.detail };
  return base;
}
