import { testFileOf } from '../../core/env/index.ts';
import type { Exclusion } from '../../core/foundation/model/change.ts';
import type { Outcome, StateName, StateResult } from '../../core/foundation/model/validated.ts';

export interface ChainSets {
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  p2p_excluded_gold_fail: string[];
  PR2_FAIL_TO_PASS: string[];
  PR2_PASS_TO_PASS: string[];
  ANTICIPATION_FAIL_TO_PASS: string[];
  flaky_tests: string[];
  anticipation_not_gradeable: string[];
  exclusion: Exclusion | null;
}

type Effective = Outcome | 'absent';

/** The test file a test id lives in (runner-specific); the default reads a pytest node id. */
export type FileOf = (id: string, testFiles: readonly string[]) => string | null;
const pytestFileOf: FileOf = (id, testFiles) => testFileOf(null, id, testFiles);

/**
 * Outcome of a test at a base state (S1/S4). A test file that cannot be imported there but collects
 * at the head state (S2/S5) counts as failing: the missing code is the task. A base state that ran the
 * base's own version of the test files because the overlaid ones crashed the runner (`decidedBy`) keeps
 * the tests that pass in that version; every other test the head reports fails there, as the whole
 * overlaid run did.
 */
function atBase(base: StateResult, head: StateResult, id: string, fileOf: FileOf): Effective {
  const own = base.tests[id];
  if (base.decidedBy && base.outcome.kind === 'ran') {
    if (own === 'pass' || own === 'flaky') return own;
    return head.tests[id] ? 'fail' : 'absent';
  }
  if (own) return own;
  const file = fileOf(id, head.testFiles);
  if (file !== null && base.collectionErrors.includes(file) && !head.collectionErrors.includes(file) && head.tests[id]) return 'fail';
  return 'absent';
}

/**
 * The reward sets of a chain from its five states (see definitions: S1 pr1_base+PR1 tests, S2 pr1_head,
 * S3 pr1_head+PR2 tests, S4 pr2_base+PR2 tests, S5 pr2_head). Flaky tests are in no set.
 */
export function computeSets(states: Record<StateName, StateResult>, fileOf: FileOf = pytestFileOf): ChainSets {
  const { S1, S2, S3, S4, S5 } = states;
  const flaky = new Set<string>();
  for (const s of [S1, S2, S3, S4, S5]) for (const [id, o] of Object.entries(s.tests)) if (o === 'flaky') flaky.add(id);
  const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].filter((x) => !flaky.has(x)).sort();

  const pr1Ids = new Set([...Object.keys(S1.tests), ...Object.keys(S2.tests)]);
  const F2P: string[] = [];
  const P2P: string[] = [];
  const goldFail: string[] = [];
  const failsAtS1: string[] = [];
  for (const id of pr1Ids) {
    const before = atBase(S1, S2, id, fileOf);
    const after: Effective = S2.tests[id] ?? 'absent';
    if (before === 'fail') failsAtS1.push(id);
    if (before === 'fail' && after === 'pass') F2P.push(id);
    if (before === 'pass' && after === 'pass') P2P.push(id);
    if (before === 'pass' && (after === 'fail' || after === 'skip')) goldFail.push(id);
  }

  const pr2Ids = new Set([...Object.keys(S4.tests), ...Object.keys(S5.tests)]);
  const PR2_F2P: string[] = [];
  const PR2_P2P: string[] = [];
  for (const id of pr2Ids) {
    const before = atBase(S4, S5, id, fileOf);
    const after: Effective = S5.tests[id] ?? 'absent';
    if (before === 'fail' && after === 'pass') PR2_F2P.push(id);
    if (before === 'pass' && after === 'pass') PR2_P2P.push(id);
  }

  // At pr1_head a PR2 test file that cannot be imported needs code PR1 did not write: no agent
  // solving PR1 could pass it, so it is not gradeable for anticipation.
  const notGradeable: string[] = [];
  const anticipation: string[] = [];
  for (const id of PR2_F2P) {
    const file = fileOf(id, S5.testFiles);
    if (file !== null && S3.collectionErrors.includes(file)) notGradeable.push(id);
    else if (S3.tests[id] === 'fail') anticipation.push(id);
  }

  const sets = {
    FAIL_TO_PASS: sorted(F2P),
    PASS_TO_PASS: sorted(P2P),
    p2p_excluded_gold_fail: sorted(goldFail),
    PR2_FAIL_TO_PASS: sorted(PR2_F2P),
    PR2_PASS_TO_PASS: sorted(PR2_P2P),
    ANTICIPATION_FAIL_TO_PASS: sorted(anticipation),
    flaky_tests: [...flaky].sort(),
    anticipation_not_gradeable: sorted(notGradeable),
  };
  return { ...sets, exclusion: exclusionFor(states, sets, sorted(failsAtS1)) };
}

function exclusionFor(states: Record<StateName, StateResult>, sets: Omit<ChainSets, 'exclusion'>, failsAtS1: string[]): Exclusion | null {
  // A head state (S2/S5) that cannot import its own PR's tests means the environment broke, not the chain.
  const broken = (names: StateName[]): string | null => {
    for (const s of names.map((n) => states[n])) {
      if (s.outcome.kind !== 'ran') return `${s.name}: ${s.outcome.detail}`;
      if ((s.name === 'S2' || s.name === 'S5') && s.collectionErrors.length) {
        return `${s.name}: ${s.collectionErrors.join(', ')} cannot be imported at the PR's own head`;
      }
    }
    return null;
  };
  const ex = (reason: Exclusion['reason'], detail: string): Exclusion => ({ reason, detail, stage: 'validate' });
  // The runner crashed at a base state while the head ran in the same environment: the PR's overlaid
  // test files (e.g. a Django test app's models) need code the PR adds. The chain, not the environment.
  const crash = (base: StateResult, head: StateResult): string | null =>
    base.outcome.kind === 'chain' && base.outcome.reason === 'runner_crash' && head.outcome.kind === 'ran' ? base.outcome.detail : null;
  const decided = states.S1.decidedBy;
  if (decided && !broken(['S2'])) {
    // The overlaid tests crashed the runner at pr1_base and the base's own version of them ran instead:
    // a crash there too, or none of them at the base, leaves no evidence; an infrastructure failure is none either.
    const o = states.S1.outcome;
    if (o.kind === 'chain' || (o.kind === 'infra' && o.reason === 'no_tests_collected')) {
      return ex('pr1_base_crash', `S1: ${decided.crash}; the base's own version of PR1's test files: ${o.detail}`);
    }
    if (o.kind === 'infra') return ex('env_failed_pr1', `S1 (the base's own version of PR1's test files): ${o.detail}`);
  } else {
    const s1Crash = crash(states.S1, states.S2);
    if (s1Crash !== null && !broken(['S2'])) return ex('pr1_base_crash', `S1: ${s1Crash}`);
  }
  const pr1 = broken(['S1', 'S2']);
  if (pr1) return ex('env_failed_pr1', pr1);
  const s4Crash = crash(states.S4, states.S5);
  if (s4Crash !== null && !broken(['S5'])) return ex('pr2_base_crash', `S4: ${s4Crash}`);
  const s3Crash = crash(states.S3, states.S5);
  if (s3Crash !== null && !broken(['S4', 'S5'])) return ex('anticipation_not_gradeable', `S3: ${s3Crash}`);
  const pr2 = broken(['S3', 'S4', 'S5']);
  if (pr2) return ex('env_failed_pr2', pr2);
  if (decided) {
    // Decided test by test: excluded only when that leaves a set empty, for the crash is why.
    const none = (what: string): Exclusion => ex('pr1_base_crash', `S1: ${decided.crash}; run in their base version at pr1_base, ${what}`);
    if (!sets.FAIL_TO_PASS.length) return none(`no test of PR1's test files fails there and passes at pr1_head (${failsAtS1.length} count as failing there)`);
    if (!sets.PASS_TO_PASS.length) return none('no test of PR1\'s test files passes there and at pr1_head');
  }
  if (!failsAtS1.length) {
    const skipped = skippedAtHead(states.S1, states.S2);
    if (skipped.length) return ex('pr1_tests_skipped', `skipped at pr1_head: ${skipped.slice(0, 5).join(', ')}`);
    return ex('no_pr1_failure', 'every PR1 test passes (or is skipped) at pr1_base');
  }
  if (!sets.FAIL_TO_PASS.length) return ex('pr1_f2p_zero', `${failsAtS1.length} test(s) fail at pr1_base but none passes at pr1_head`);
  if (!sets.PASS_TO_PASS.length) return ex('pr1_p2p_empty', 'no PR1 test passes both at pr1_base and at pr1_head');
  if (!sets.PR2_FAIL_TO_PASS.length) {
    const skipped = skippedAtHead(states.S4, states.S5);
    if (skipped.length) return ex('pr2_tests_skipped', `skipped at pr2_head: ${skipped.slice(0, 5).join(', ')}`);
    return ex('pr2_not_fail_to_pass', 'no PR2 test fails at pr2_base and passes at pr2_head');
  }
  if (!sets.ANTICIPATION_FAIL_TO_PASS.length) {
    if (sets.anticipation_not_gradeable.length) {
      return ex('anticipation_not_gradeable', `${sets.anticipation_not_gradeable.join(', ')} cannot be imported at pr1_head`);
    }
    return ex('anticipation_empty', `PR2's fail->pass tests already pass at pr1_head: ${sets.PR2_FAIL_TO_PASS.join(', ')}`);
  }
  return null;
}

/**
 * The tests skipped at a PR's head that did not pass before it, sorted: they might have flipped had they run,
 * and the environment cannot show it (a backend-only fix), which is not the same as "did not flip".
 */
export function skippedAtHead(base: StateResult, head: StateResult): string[] {
  return Object.entries(head.tests).filter(([id, o]) => o === 'skip' && base.tests[id] !== 'pass').map(([id]) => id).sort();
}
