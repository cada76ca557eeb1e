/**
 * Per-state test outcomes (S1–S5) of each chain, from the validate artifact beside the dataset: the
 * emitted rows hold only the sets. Found only in the usual layout (data/<repo>/emit/hf next to
 * data/<repo>/validate/items.jsonl); a dataset copied elsewhere gets a report without them.
 */
import { createReadStream, existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { StateResultSchema, type Outcome, type StateOutcome } from '../../core/foundation/model/validated.ts';

/** One character per test in a state's `outcomes` string; `.` = not run in that state. */
export const OUTCOME_CODES: Record<Outcome, string> = { pass: 'p', fail: 'f', skip: 's', flaky: '~' };

export interface ReportState {
  name: string;
  checkout: string;
  overlay: string | null;
  outcome: StateOutcome;
  runs: number;
  durationMs: number;
  testFiles: string[];
  collectionErrors: string[];
  /** outcomes[i] is the code (OUTCOME_CODES) of `tests[i]` of the chain. */
  outcomes: string;
}

export interface ChainStates {
  /** Every test any state reported, sorted. */
  tests: string[];
  states: ReportState[];
}

export type StatesRead =
  /** `stale`: chains whose validate record no longer yields the emitted sets (validate ran again since emit). */
  | { kind: 'read'; path: string; byId: Map<string, ChainStates>; stale: string[] }
  | { kind: 'absent'; reason: string }
  | { kind: 'unreadable'; path: string; reason: string };

const ItemSchema = z.object({
  instance_id: z.string(),
  states: z.array(StateResultSchema),
  FAIL_TO_PASS: z.array(z.string()),
  ANTICIPATION_FAIL_TO_PASS: z.array(z.string()),
});

/** The emitted sets a validate record must match for its states to be shown beside them. */
export interface EmittedSets {
  FAIL_TO_PASS: readonly string[];
  ANTICIPATION_FAIL_TO_PASS: readonly string[];
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** data/<repo>/validate/items.jsonl for a dataset at data/<repo>/emit/hf, else null. */
export function validateItemsPath(dataset: string): string | null {
  if (basename(dataset) !== 'hf' || basename(dirname(dataset)) !== 'emit') return null;
  return join(dirname(dirname(dataset)), 'validate', 'items.jsonl');
}

/** Compact: the test names once per chain, then one character per test and state. */
export function compactStates(states: z.infer<typeof StateResultSchema>[]): ChainStates {
  const tests = [...new Set(states.flatMap((s) => Object.keys(s.tests)))].sort();
  return {
    tests,
    states: states.map((s) => ({
      name: s.name,
      checkout: s.checkout,
      overlay: s.overlay,
      outcome: s.outcome,
      runs: s.runs,
      durationMs: s.durationMs,
      testFiles: s.testFiles,
      collectionErrors: s.collectionErrors,
      outcomes: tests.map((t) => (s.tests[t] ? OUTCOME_CODES[s.tests[t]] : '.')).join(''),
    })),
  };
}

/** The states of the chains in `rows`, streamed line by line (a large repository's artifact is big). */
export async function readStates(dataset: string, rows: ReadonlyMap<string, EmittedSets>): Promise<StatesRead> {
  const path = validateItemsPath(dataset);
  if (!path) return { kind: 'absent', reason: 'the dataset is not in the data/<owner>__<name>/emit/hf layout' };
  if (!existsSync(path)) return { kind: 'absent', reason: `${path} does not exist` };
  const byId = new Map<string, ChainStates>();
  const stale: string[] = [];
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      lines.close();
      return { kind: 'unreadable', path, reason: `line ${n} is not valid JSON` };
    }
    const parsed = ItemSchema.safeParse(raw);
    if (!parsed.success) {
      lines.close();
      const issue = parsed.error.issues[0];
      return { kind: 'unreadable', path, reason: `line ${n}: ${issue?.path.join('.') || 'item'}: ${issue?.message ?? 'invalid'}` };
    }
    const item = parsed.data;
    const emitted = rows.get(item.instance_id);
    if (!emitted || !item.states.length) continue;
    if (!sameSet(item.FAIL_TO_PASS, emitted.FAIL_TO_PASS) || !sameSet(item.ANTICIPATION_FAIL_TO_PASS, emitted.ANTICIPATION_FAIL_TO_PASS)) {
      stale.push(item.instance_id);
      continue;
    }
    byId.set(item.instance_id, compactStates(item.states));
  }
  return { kind: 'read', path, byId, stale };
}
