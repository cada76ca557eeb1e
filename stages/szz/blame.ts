import { gitRecords } from '../../pipeline/git.ts';

export interface BlamedLine {
  line: number;
  sha: string;
  text: string;
}

const HEADER = /^([0-9a-f]{40}) (\d+) (\d+)(?: \d+)?$/;

/** Parse `git blame --porcelain` output into one entry per final line. */
export function parsePorcelain(lines: Iterable<string>): BlamedLine[] {
  const out: BlamedLine[] = [];
  let sha = '';
  let finalLine = 0;
  for (const l of lines) {
    const h = HEADER.exec(l);
    if (h) {
      sha = h[1]!;
      finalLine = Number(h[3]);
    } else if (l.startsWith('\t')) {
      out.push({ line: finalLine, sha, text: l.slice(1) });
    }
  }
  return out;
}

/** Blame the given lines of `file` at `rev`, ignoring whitespace and following moved lines. */
export async function blameLines(clone: string, rev: string, file: string, lines: readonly number[]): Promise<BlamedLine[]> {
  if (!lines.length) return [];
  const ranges = toRanges([...new Set(lines)].sort((a, b) => a - b));
  const args = ['blame', '--porcelain', '-w', '-M', ...ranges.flatMap(([a, b]) => ['-L', `${a},${b}`]), rev, '--', file];
  const raw: string[] = [];
  for await (const l of gitRecords(clone, args)) raw.push(l);
  return parsePorcelain(raw);
}

function toRanges(sorted: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last && n === last[1] + 1) last[1] = n;
    else out.push([n, n]);
  }
  return out;
}
