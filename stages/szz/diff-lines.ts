import { fileKind } from '../../core/foundation/files.ts';
import { git, gitBytes } from '../../core/foundation/git.ts';

/** Lines of the old file that a fix touched: `removed` were deleted or modified; `anchors` sit just above pure insertions. */
export interface FixedLines {
  file: string;
  kind: ReturnType<typeof fileKind>;
  removed: Array<{ line: number; text: string }>;
  anchors: number[];
}

/** Git quotes paths with unusual bytes C-style ("a/sp\\303\\251cial.txt"): undo it, decoding octal escapes as UTF-8. */
export function unquotePath(p: string): string {
  if (!p.startsWith('"') || !p.endsWith('"')) return p;
  const bytes: number[] = [];
  const body = p.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, '"': 34, '\\': 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/;

/**
 * Parse a `git diff -U0` between base and head into the old-side lines each changed file's hunks touch.
 * A file's name is read from its `--- ` header line only, before its first hunk: a deleted line that
 * reads "-- ..." (an SQL or Lua comment) shows as "--- ..." among the hunks.
 */
export function parseFixedLines(diff: string): FixedLines[] {
  const files: FixedLines[] = [];
  let cur: FixedLines | null = null;
  let header = false;
  let oldLine = 0;
  for (const raw of diff.split('\n')) {
    if (raw.startsWith('diff --git ')) {
      cur = null;
      header = true;
      continue;
    }
    if (header && raw.startsWith('--- ')) {
      // Git ends the name with a tab when it holds a space (for patch(1)); a name with a tab of its own is quoted.
      const path = unquotePath(raw.slice(4).replace(/\t$/, ''));
      const file = path.replace(/^a\//, '');
      cur = path === '/dev/null' ? null : { file, kind: fileKind(file), removed: [], anchors: [] };
      if (cur) files.push(cur);
      continue;
    }
    if (header && raw.startsWith('+++ ')) continue;
    const h = HUNK.exec(raw);
    if (h) {
      header = false;
      if (!cur) continue;
      const start = Number(h[1]);
      const count = h[2] === undefined ? 1 : Number(h[2]);
      oldLine = start;
      if (count === 0) cur.anchors.push(Math.max(1, start));
      continue;
    }
    if (!cur || header) continue;
    if (raw.startsWith('-')) cur.removed.push({ line: oldLine++, text: raw.slice(1) });
  }
  return files.filter((f) => f.removed.length || f.anchors.length);
}

export async function fixedLines(clone: string, base: string, head: string): Promise<FixedLines[]> {
  // --end-of-options: base and head come from artifacts or an oracle file, never options.
  const diff = await git(clone, ['diff', '-U0', '-M', '--no-color', '--no-ext-diff', '--end-of-options', base, head]);
  return parseFixedLines(diff);
}

const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** Fixes whose diffs one `git diff-tree --stdin` reads: large enough that the process cost vanishes, small enough to hold. */
const CHUNK = 64;

/**
 * The fixed lines of many fixes, read by one `git diff-tree --stdin` per chunk of fixes instead of one
 * `git diff` per fix (the process, not the diff, is most of a small fix's cost). A fix asked for starts a
 * chunk of itself and the next fixes not yet read, in the order given; a fix not given, or named by
 * anything but full shas, is read on its own.
 */
export class FixDiffs {
  private readonly order: Array<{ base: string; head: string }> = [];
  private readonly index = new Map<string, number>();
  private readonly read = new Set<number>();
  private readonly ready = new Map<string, Promise<FixedLines[]>>();

  constructor(
    private readonly clone: string,
    fixes: ReadonlyArray<{ baseSha: string; mergeSha: string }>,
  ) {
    for (const f of fixes) {
      const key = `${f.baseSha} ${f.mergeSha}`;
      if (this.index.has(key) || !FULL_SHA.test(f.baseSha) || !FULL_SHA.test(f.mergeSha)) continue;
      this.index.set(key, this.order.length);
      this.order.push({ base: f.baseSha, head: f.mergeSha });
    }
  }

  get(base: string, head: string): Promise<FixedLines[]> {
    const key = `${base} ${head}`;
    const i = this.index.get(key);
    if (i === undefined) return fixedLines(this.clone, base, head);
    if (!this.read.has(i)) this.readChunk(i);
    const got = this.ready.get(key);
    this.ready.delete(key);
    // Asked for twice: the second reads it again.
    return got ?? fixedLines(this.clone, base, head);
  }

  private readChunk(from: number): void {
    const chunk: Array<{ base: string; head: string }> = [];
    for (let j = from; j < this.order.length && chunk.length < CHUNK; j++) {
      if (this.read.has(j)) continue;
      this.read.add(j);
      chunk.push(this.order[j]!);
    }
    // A line `<commit> <parent>` diffs the parent to the commit: here the fix's base to its head.
    const input = chunk.map((f) => `${f.head} ${f.base}\n`).join('');
    // --always: a header line (the head) even for an empty diff, so blocks and fixes pair up in order.
    const blocks = gitBytes(this.clone, ['diff-tree', '--stdin', '--always', '-p', '-U0', '-M', '--no-color', '--no-ext-diff'], { input }).then((out) =>
      splitBlocks(out.toString('utf8'), chunk),
    );
    chunk.forEach((f, k) => {
      // A chunk git could not read (one bad revision): each of its fixes on its own, so the error names that fix.
      const one = blocks.then(
        (b) => (b ? parseFixedLines(b[k]!) : fixedLines(this.clone, f.base, f.head)),
        () => fixedLines(this.clone, f.base, f.head),
      );
      one.catch(() => {}); // not yet awaited: its failure reaches the caller through get()
      this.ready.set(`${f.base} ${f.head}`, one);
    });
  }
}

/** diff-tree's output cut at its header lines (a bare sha: no diff line is one), or null unless they match the fixes in order. */
function splitBlocks(out: string, chunk: ReadonlyArray<{ head: string }>): string[] | null {
  const blocks: string[] = [];
  const lines = out.split('\n');
  let cur: string[] | null = null;
  let k = 0;
  for (const line of lines) {
    if (FULL_SHA.test(line)) {
      if (line !== chunk[k]?.head) return null;
      if (cur) blocks.push(cur.join('\n'));
      cur = [];
      k++;
      continue;
    }
    if (!cur) {
      if (line === '') continue;
      return null;
    }
    cur.push(line);
  }
  if (cur) blocks.push(cur.join('\n'));
  return blocks.length === chunk.length ? blocks : null;
}
