const HEADER = /^\s*(async\s+def|def|class|function|func|fn|public|private|protected|static)\b|=>\s*\{?\s*$|\)\s*(:|\{)\s*$/;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * The lines (1-based, inclusive) of the function or class around `line` in `text`: the nearest header
 * above it with a smaller indentation, down to the last line indented deeper than that header.
 * Null when `line` sits at the top level.
 */
export function enclosingBlock(text: string, line: number): { start: number; end: number } | null {
  const lines = text.split('\n');
  const at = Math.min(Math.max(line, 1), lines.length);
  let ref = Infinity;
  // The indentation the insertion point lives at: the first non-blank line at or below it, else above.
  for (let i = at - 1; i < lines.length && ref === Infinity; i++) if (lines[i]!.trim()) ref = indentOf(lines[i]!);
  for (let i = at - 1; i >= 0 && ref === Infinity; i--) if (lines[i]!.trim()) ref = indentOf(lines[i]!);
  for (let i = at - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (!l.trim() || indentOf(l) >= ref || !HEADER.test(l)) continue;
    const base = indentOf(l);
    let end = i + 1;
    for (let j = i + 1; j < lines.length; j++) {
      const lj = lines[j]!;
      if (!lj.trim()) continue;
      if (indentOf(lj) < base) break;
      // At the header's indentation only its own closing bracket belongs to the block, and ends it.
      if (indentOf(lj) === base) {
        if (/^\s*[)\]}]/.test(lj)) end = j + 1;
        break;
      }
      end = j + 1;
    }
    return { start: i + 1, end };
  }
  return null;
}
