import type { RecordedRequest, ScriptedResponse } from './fake-openai.ts';

/**
 * A deterministic stand-in for an LLM, for the demo chains: it reads the judge from the structured-output
 * schema name and the fenced data blocks from the prompt, and answers as a careful model would. A short
 * PR1 statement (the demo's "Add parse_duration", no body) is under-specified (B2); the first repair of it
 * plants a leak (PR2's test name) that the leak detector must catch; a review that asks to remove it gets a
 * clean statement. PR2's first statement is too thin (B2) and its repair is solvable (A). It also misbehaves
 * once each way a real endpoint does: a 429 with Retry-After, a 500 and a malformed JSON reply.
 */
export interface FakeModel {
  handle(req: RecordedRequest): ScriptedResponse;
  /** Requests per judge name. */
  readonly counts: Map<string, number>;
  /** Faults injected so far, by kind. */
  readonly faults: string[];
}

const PLANTED = 'test_parse_uppercase_units';

/** The fenced blocks of a prompt by label. */
export function blocks(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<<<DATA label="([^"\n]*)" id=([0-9a-f]{16})>>>\n([\s\S]*?)\n<<<END DATA id=\2>>>/g)) out.set(m[1]!, m[3]!);
  return out;
}

const find = (b: Map<string, string>, prefix: string): string => [...b].find(([k]) => k.startsWith(prefix))?.[1] ?? '';

export function fakeModel(opts: { faults?: boolean } = {}): FakeModel {
  const counts = new Map<string, number>();
  const faults: string[] = [];
  const injected = new Set<string>();
  const fault = (kind: string, judge: string, when: string): boolean => {
    if (!opts.faults || judge !== when || injected.has(kind)) return false;
    injected.add(kind);
    faults.push(kind);
    return true;
  };
  const answer = (v: unknown): ScriptedResponse => ({ content: JSON.stringify(v) });

  return {
    counts,
    faults,
    handle(req) {
      const judge: string = req.body?.response_format?.json_schema?.name ?? 'unknown';
      counts.set(judge, (counts.get(judge) ?? 0) + 1);
      if (fault('429', judge, 'eligibility')) return { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited' } } };
      if (fault('500', judge, 'labels')) return { status: 500, body: { error: { message: 'upstream overloaded' } } };
      if (fault('malformed', judge, 'solvability')) return { content: '{"reason": "cut off' };
      const user: string = req.body?.messages?.find((m: { role: string }) => m.role === 'user')?.content ?? '';
      const b = blocks(user);
      switch (judge) {
        case 'eligibility': {
          // A careful model reads what PR2 does; the demo's feature (#11) and revert (#12) say it in their titles.
          const [title = ''] = find(b, 'PR2 (').split('\n');
          if (/^revert/i.test(title)) return answer({ reason: 'It undoes an earlier change.', verdict: 'revert' });
          if (/^add/i.test(title)) return answer({ reason: 'It adds an option that was never promised.', verdict: 'feature' });
          return answer({ reason: 'The tests show wrong output for an input the earlier change accepted.', verdict: 'bug_fix' });
        }
        case 'attribution':
          return answer({ reason: 'PR1 wrote the lines the fix changes.', code: 'A' });
        case 'solvability': {
          const s = find(b, 'STATEMENT');
          return answer(s.length < 80
            ? { reason: 'It names the function but not the input format or where it is exported.', code: 'B2', clarity_score: 2, task_type: 'feature' }
            : { reason: 'The behaviour the tests check is stated.', code: 'A', clarity_score: 0, task_type: 'feature' });
        }
        case 'fairness':
          return answer({ reason: 'Nothing of the later fix is mentioned.', leak: false, prescribes_mechanism: false });
        case 'pr1_repair': {
          const text = find(b, 'PR1 (');
          const [title = ''] = text.split('\n');
          const review = find(b, 'REVIEW');
          const base = `${title.trim()}. It accepts durations written as hours, minutes and seconds (for example "1h30m" or "45s"), returns the total in seconds, and is exported from the package.`;
          // The first repair of parse_duration names PR2's test: the leak detector must reject it.
          const leak = title.includes('parse_duration') && !review.includes('remove') ? ` Make sure ${PLANTED} passes.` : '';
          return answer({ reason: 'Added the input format and the export the tests use.', statement: base + leak });
        }
        case 'pr2_statement': {
          const review = find(b, 'REVIEW');
          const [title = ''] = find(b, 'PR2 (').split('\n');
          return answer(review === '(none)'
            ? { reason: 'first version', statement: `${title.trim()}.` }
            : { reason: 'Added the failing input and the expected result.', statement: `${title.trim()}: the function gives a wrong result for some inputs that a user can reasonably pass; those inputs must give the same result as their documented lower-case or single-space forms.` });
        }
        case 'pr2_solvability': {
          const s = find(b, 'STATEMENT');
          return answer(s.length < 80 ? { reason: 'It does not say which input fails or what to expect.', code: 'B2' } : { reason: 'The expected behaviour is stated.', code: 'A' });
        }
        case 'labels':
          return answer({
            reason: 'Wrong results without an error, for input users type.', impact: 'medium', reach: 'moderate', failure_mode: 'silent',
            trigger_path: 'default', mechanism: 'missed_edge_case', difficulty: 'easy', pr1_difficulty: 'easy', security: false,
          });
        default:
          return { status: 400, body: { error: { message: `fake model: unknown judge ${judge}` } } };
      }
    },
  };
}
