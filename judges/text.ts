/** Identifiers (4+ chars) in a text: names of functions, variables, tests. */
export function identifiers(text: string): Set<string> {
  return new Set(text.match(/\b[A-Za-z_][A-Za-z0-9_]{3,}\b/g) ?? []);
}

/** Lines a unified diff adds (without the '+'), skipping file headers. */
export function addedLines(diff: string): string[] {
  return diff
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1));
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];
}

export function ngrams(ws: readonly string[], n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= ws.length; i++) out.add(ws.slice(i, i + n).join(' '));
  return out;
}
