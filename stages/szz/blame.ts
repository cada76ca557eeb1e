import { gitRecords, notAnOption } from '../../core/foundation/git.ts';

export interface BlamedLine {
  /** Line number in the blamed revision. */
  line: number;
  sha: string;
  text: string;
  /** Commit time of `sha` (unix seconds). */
  time: number;
}

const HEADER = /^([0-9a-f]{40}) (\d+) (\d+)(?: \d+)?$/;

/**
 * Parse `git blame --porcelain` output into one entry per final line. Lines left to a boundary commit
 * (older than `--since`: blame stopped before finding who wrote them) are dropped.
 */
export function parsePorcelain(lines: Iterable<string>): BlamedLine[] {
  const out: BlamedLine[] = [];
  const times = new Map<string, number>();
  // git prints `boundary` once, in a commit's first header block; later lines of it repeat only the header.
  const boundary = new Set<string>();
  let sha = '';
  let finalLine = 0;
  for (const l of lines) {
    const h = HEADER.exec(l);
    if (h) {
      sha = h[1]!;
      finalLine = Number(h[3]);
    } else if (l.startsWith('committer-time ')) {
      times.set(sha, Number(l.slice(15)));
    } else if (l === 'boundary') {
      boundary.add(sha);
    } else if (l.startsWith('\t')) {
      if (!boundary.has(sha)) out.push({ line: finalLine, sha, text: l.slice(1), time: times.get(sha) ?? 0 });
    }
  }
  return out;
}

export interface BlameOptions {
  /** Ignore whitespace changes (-w). */
  whitespace: boolean;
  /** Follow lines moved or copied within a file (-M). */
  moves: boolean;
  /** Commits blame looks through (meta-changes: reformatting, reverts ...). */
  ignoreRevs?: readonly string[];
  /** A .git-blame-ignore-revs style file. */
  ignoreRevsFile?: string | null;
  /** A graft file (`<commit> <parent>...` lines, `git blame -S`): blame as if those commits had those parents. */
  grafts?: string | null;
  /** Unix seconds: look at no commit older (`--since`); lines written before it are left out. */
  since?: number | null;
}

/** Blame the given lines of `file` at `rev`, streaming git's porcelain output; lines older than `since` are not returned. */
export async function blameLines(clone: string, rev: string, file: string, lines: readonly number[], opts: BlameOptions): Promise<BlamedLine[]> {
  if (!lines.length) return [];
  const ranges = toRanges([...new Set(lines)].sort((a, b) => a - b));
  // A commit-graph records the real parents: keep it from overriding the grafts.
  const args = opts.grafts ? ['-c', 'core.commitGraph=false', 'blame', '--porcelain', '-S', opts.grafts] : ['blame', '--porcelain'];
  // --root: a root commit is otherwise a boundary too, and its lines would be dropped as if beyond `since`.
  args.push('--root');
  if (opts.since != null) args.push(`--since=@${Math.floor(opts.since)}`);
  if (opts.whitespace) args.push('-w');
  if (opts.moves) args.push('-M');
  if (opts.ignoreRevsFile) args.push('--ignore-revs-file', opts.ignoreRevsFile);
  for (const r of opts.ignoreRevs ?? []) args.push('--ignore-rev', r);
  // git blame (2.39) rejects --end-of-options: a revision that reads as an option is refused instead.
  args.push(...ranges.flatMap(([a, b]) => ['-L', `${a},${b}`]), notAnOption(rev), '--', file);
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
