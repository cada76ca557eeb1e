/**
 * Execution-confirmed attribution inside validate: a validated chain whose PR2 has fail->pass
 * tests has them bisected (core/attribution) in validate's environments and containers, bounded by blame's
 * candidates, on the backend its sets came from. Execution wins over blame and references; a first bad
 * commit of no change makes the chain `unattributed`. A bisection that cannot run is recorded, never evidence.
 */
import { bisectInducer, chainBisectInput, decideAttribution, type AttributionDecision, type BisectBudget, type BisectResult } from '../../core/attribution/index.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import type { ListedChanges } from '../../core/history/changes.ts';
import { positions } from '../../core/history/mainline.ts';
import type { Attribution } from '../../core/foundation/model/attribution.ts';
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
  | { kind: 'unattributed'; record: Attribution; detail: string };

/** Whether a validated chain can be bisected: PR2's tests fail at its base and pass at its head. */
export function canAttribute(v: ValidatedChain): boolean {
  return v.PR2_FAIL_TO_PASS.length > 0;
}

export async function attributeChain(v: ValidatedChain, deps: AttributeDeps): Promise<ChainAttribution> {
  const { mainline, changes } = await deps.history();
  const input = chainBisectInput(v, changes);
  const containers = new ChainContainers(deps.containers, v.db_backend, v.instance_id);
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
      knownBadKinds: v.states.find((s) => s.name === 'S4')?.failureKinds ?? {},
    });
  } catch (err) {
    if (deps.containers.signal.aborted) throw err;
    // Our infrastructure (Docker, an image) failed: no evidence about the chain, its PR1 stands.
    const detail = `the bisection could not run: ${errorMessage(err)}`;
    deps.containers.log.warn(detail);
    return { kind: 'kept', record: { ...EMPTY, decision: 'error', change: v.pr1.id, detail } };
  } finally {
    await containers.close();
  }
  const decision = decideAttribution({ bisect, changes, blame: input.blame, reference: input.reference, order: positions(mainline) });
  const record = toRecord(decision, bisect);
  if (decision.kind === 'unattributed') return { kind: 'unattributed', record, detail: `execution: ${decision.detail} (blame or a reference named ${v.pr1.id})` };
  if (decision.kind === 'attributed' && decision.commit !== null && decision.change !== v.pr1.id) {
    const pr1 = changes.find((c) => c.id === decision.change);
    if (pr1) return { kind: 'moved', record: { ...record, moved_from: v.pr1.id }, pr1 };
  }
  return { kind: 'kept', record };
}

const EMPTY: Attribution = { decision: 'unknown', method: null, change: null, commit: null, execution: null, moved_from: null, disagreements: [], range: [], followed: [], steps: [], cost: null, detail: null };

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
