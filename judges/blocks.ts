import type { PrView } from './types.ts';
import { data } from './untrusted.ts';

/** One change's material as fenced data blocks, labelled with `who` ("PR1", "PR2"). */
export function prBlocks(who: string, pr: PrView): { text: string; patch: string; tests: string; discussion: string } {
  return {
    text: data(`${who} (${pr.label}) title and description`, pr.body ? `${pr.title}\n\n${pr.body}` : pr.title, 8_000),
    patch: data(`${who} source diff`, pr.patch, 12_000),
    tests: data(`${who} test diff`, pr.testPatch, 8_000),
    discussion: data(`${who} discussion`, pr.discussion, 6_000),
  };
}

export const list = (ids: readonly string[]): string => (ids.length ? ids.map((t) => `- ${t}`).join('\n') : '(none)');
