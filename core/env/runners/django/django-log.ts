/**
 * The end of a Django run's log: its error blocks (`====` / `KIND: desc` / `----` / traceback) and the
 * lines that say why a run failed. See parse-django.ts for the log format.
 */
import { type Desc, parseDesc } from './django-ids.ts';

export const SEP1 = '='.repeat(70);
export const SEP2 = '-'.repeat(70);

interface Block {
  kind: 'FAIL' | 'ERROR' | 'UNEXPECTED SUCCESS';
  desc: Desc;
  body: string;
}

/** `====` / `KIND: desc` [/ docstring] / `----` / body … ; UNEXPECTED SUCCESS lines have no body. */
export function parseBlocks(lines: readonly string[]): Block[] {
  const blocks: Array<{ kind: Block['kind']; desc: Desc; body: string[] }> = [];
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^(ERROR|FAIL|UNEXPECTED SUCCESS): (.*)$/.exec(line);
    const prev = blocks[blocks.length - 1];
    const unexpected = m?.[1] === 'UNEXPECTED SUCCESS' && inBlock && prev?.kind === 'UNEXPECTED SUCCESS';
    if (m && (lines[i - 1] === SEP1 || unexpected)) {
      const desc = parseDesc(m[2]!);
      inBlock = desc !== null;
      if (desc) blocks.push({ kind: m[1] as Block['kind'], desc, body: [] });
    } else if (line === SEP1 && /^(ERROR|FAIL|UNEXPECTED SUCCESS): /.test(lines[i + 1] ?? '')) {
      inBlock = false;
    } else if (inBlock && prev) {
      prev.body.push(line);
    }
  }
  return blocks.map((b) => ({ kind: b.kind, desc: b.desc, body: b.body.join('\n') }));
}

/**
 * unittest names a failed import by the last part of the label (`tests` for `app.tests`), or by its
 * first part when even the package failed: prefer the requested files its traceback goes through.
 */
export function filesOfFailedImport(name: string, body: string, labelFile: ReadonlyMap<string, string>): string[] {
  const byName = [...labelFile].filter(([label]) => {
    const parts = label.split('.');
    return label === name || parts[parts.length - 1] === name || parts[0] === name;
  });
  const inTraceback = byName.filter(([, file]) => body.includes(`/${file}"`) || body.includes(`"${file}"`));
  if (inTraceback.length > 0) return inTraceback.map(([, f]) => f);
  if (byName.length > 0) return byName.map(([, f]) => f);
  return [`tests/${name.replace(/\./g, '/')}.py`];
}

/** The line that says why the runner died: the exception after the last traceback, else the last line. */
export function crashLine(lines: readonly string[]): string {
  let tb = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.startsWith('Traceback (most recent call last):')) {
      tb = i;
      break;
    }
  }
  if (tb >= 0) {
    let exc: string | null = null;
    for (let i = tb + 1; i < lines.length; i++) {
      const l = lines[i]!;
      if (l !== '' && !/^\s/.test(l)) exc = l;
      else if (exc !== null && l === '') break;
    }
    if (exc) return exc.slice(0, 300);
  }
  return lastLine(lines);
}

/**
 * The exception type a failure block ends with (`AssertionError`, `ValidationError`: the class name without
 * its module), or null when its traceback names none. With chained exceptions, the last one raised: the
 * first unindented line after the last traceback frame (`  File …` and its indented source lines), whatever
 * the class is called (`DatabaseOperationForbidden`, a model's `DoesNotExist`). A block without a frame
 * falls back to the last line that looks like an exception of a usual name.
 */
export function exceptionType(body: string): string | null {
  const lines = body.split('\n');
  const frame = lines.findLastIndex((l) => l.startsWith('  File "'));
  if (frame >= 0) {
    const line = lines.slice(frame + 1).find((l) => l !== '' && !/^\s/.test(l));
    const m = line === undefined ? null : /^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)(?::|$)/.exec(line);
    if (m) return m[1]!;
  }
  let found: string | null = null;
  for (const line of lines) {
    const m = /^(?:[A-Za-z_]\w*\.)*((?=[A-Za-z_])\w*(?:Error|Exception|Failure|Exit|Warning|Interrupt|DoesNotExist|Invalid))(?::|$)/.exec(line);
    if (m) found = m[1]!;
  }
  return found;
}

export function lastLine(lines: readonly string[]): string {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]!.trim() !== '') return lines[i]!.trim().slice(0, 300);
  return '(no output)';
}
