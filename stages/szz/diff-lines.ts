import { fileKind } from '../../core/foundation/files.ts';
import { git } from '../../core/foundation/git.ts';

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
