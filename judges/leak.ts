import { addedLines } from './text.ts';
import type { JudgeInput } from './types.ts';

/**
 * The deterministic leak detector. A token leaks when PR2's material has it, PR1's material does not, and
 * the statement does. PR2's material: lines its diffs add, its title, body and discussion, the anticipation
 * test ids. PR1's: title, body, discussion, both diffs whole (context and removed lines too), its F2P ids.
 * Only code-shaped tokens count, so shared English is never a leak:
 *  - names (word boundaries): snake_case, camel/PascalCase with an inner capital (from code only: in prose
 *    "PostgreSQL" is a product), dotted.names, test names from the ids;
 *  - plain words PR2 makes code (def/class names, calls, backticked words): only where the statement writes
 *    them as code too (`normalize`, normalize(, x.normalize);
 *  - string literals of PR2's code and "XError: message" lines of its text, split at format placeholders,
 *    fragments of >= 8 characters with a non-letter character or >= 4 words (>= 2 in raise X("...")):
 *    as substrings.
 * URLs and e-mail addresses are dropped first (they share hosts, not code).
 */
export function leakedTokens(statement: string, input: JudgeInput): string[] {
  const { pr1, pr2 } = indexed(input);
  const stated = materialIndex(statement);
  const out = new Set<string>();
  for (const t of pr2.names) if (hasName(stated, t) && !hasName(pr1, t, true)) out.add(t);
  for (const t of pr2.words) if (writesAsCode(stated, t) && !pr1.lowerWords.has(t.toLowerCase())) out.add(t);
  for (const t of pr2.literals) if (stated.flat.includes(t) && !pr1.flat.includes(t)) out.add(t);
  return [...out].sort();
}

/** Both PRs' indexes for one input: a repair loop checks many statements against the same chain. */
const INDEXES = new WeakMap<JudgeInput, { sig: string[]; pr1: MaterialIndex; pr2: Pr2Tokens }>();

function indexed(input: JudgeInput): { pr1: MaterialIndex; pr2: Pr2Tokens } {
  const { pr1, pr2, tests } = input;
  const sig = [pr1.title, pr1.body, pr1.discussion, pr1.patch, pr1.testPatch, pr2.title, pr2.body, pr2.discussion, pr2.patch, pr2.testPatch, tests.pr1FailToPass.join('\n'), tests.anticipation.join('\n')];
  const hit = INDEXES.get(input);
  if (hit && hit.sig.every((v, i) => v === sig[i])) return hit;
  const out = {
    sig,
    pr1: materialIndex([pr1.title, pr1.body, pr1.discussion, pr1.patch, pr1.testPatch, ...tests.pr1FailToPass].join('\n')),
    pr2: pr2Tokens(input),
  };
  INDEXES.set(input, out);
  return out;
}

interface Pr2Tokens {
  /** Code-shaped names, matched on word boundaries. */
  names: Set<string>;
  /** Plain words PR2 uses as code, matched only where the statement writes them as code. */
  words: Set<string>;
  /** String literal fragments, matched as substrings. */
  literals: Set<string>;
}

const ID = String.raw`[A-Za-z_][A-Za-z0-9_]*`;
const DOTTED = new RegExp(String.raw`(?<![\w.])${ID}(?:\.${ID})+(?![\w])`, 'g');
const NAME = new RegExp(String.raw`(?<![\w])${ID}`, 'g');
const CALL = new RegExp(String.raw`(?<![\w])(${ID})\((?!s\))`, 'g');
const DEFINES = new RegExp(String.raw`\b(?:def|class|function|func|fn|interface)\s+(${ID})`, 'g');
const BACKTICKED = /`([^`\n]+)`/g;
/** A quoted literal (Python prefixes allowed); a quote right after a letter is an apostrophe ("don't"). */
const LITERAL = /(?<![\w])(?:[rbufRBUF]{1,2})?(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g;
/** The message of raise X("..."), throw new X("..."), pytest.raises(X, match="...") and assertRaisesMessage(X, "..."). */
const MESSAGE =
  /(?:\b(?:raise|throw(?:\s+new)?)\s+[\w.]+\(\s*|\bmatch\s*=\s*|\bassertRaisesMessage\(\s*[\w.]+\s*,\s*)(?:[rbufRBUF]{1,2})?(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g;
/** "ValueError: the message" in a traceback or a report. */
const ERROR_LINE = /\b[A-Z]\w*(?:Error|Exception|Warning)\b:[ \t]*(\S[^\n]*)/g;
const FENCED = /```[^\n]*\n([\s\S]*?)```/g;
/** %s / %(name)r / {} / {name!r} / ${x} placeholders and escapes: the text between them is what a reader sees. */
const PLACEHOLDER = /%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrfixXoeEgGc]|\$?\{[^}]*\}|\\[ntr'"\\]/g;
const URLS = /\b(?:https?|ftp):\/\/\S+|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
/** Keywords and builtins every program calls: never PR2's own. */
const COMMON_CALLS = new Set(
  'if elif for while switch return catch function print len str int float bool list dict set tuple type super isinstance range map filter sorted open repr assert typeof require import not and or in is new with yield await'.split(' '),
);
/** Dotted names in prose that are products, files of every project or hosts, not code. */
const PROSE_DOTTED = /\.(?:js|com|org|net|io|dev|md|txt|rst|html)$/i;

function isSnake(t: string): boolean {
  return t.length >= 3 && t.includes('_') && /[A-Za-z]/.test(t) && !/^__\w+__$/.test(t);
}
function isCamel(t: string): boolean {
  return t.length >= 3 && /[a-z]/.test(t) && /[A-Z]/.test(t.slice(1));
}
function isTestName(t: string): boolean {
  return /^test_\w+$|^test[A-Z0-9]\w*$|^Test[A-Z0-9_]\w*$|^\w+Tests?$/.test(t) && t.length > 5;
}
/** Dotted names whose parts are all at least two characters ("e.g" and "U.S" are not code). */
function isDotted(t: string): boolean {
  return t.split('.').every((p) => p.length >= 2);
}
/** a.b.c -> a.b.c and b.c ("self.cache.clear" is written "cache.clear" too), each that reads as code. */
function dottedTails(t: string): string[] {
  const parts = t.split('.');
  const out: string[] = [];
  for (let i = 0; i + 2 <= parts.length; i++) {
    const d = parts.slice(i).join('.');
    if (isDotted(d)) out.push(d);
  }
  return out;
}
const isPlainWord = (t: string): boolean => /^[A-Za-z][a-z0-9]*$/.test(t) && t.length >= 3 && !COMMON_CALLS.has(t.toLowerCase());

/** A collapsed-whitespace copy of a text, without URLs and e-mail addresses. */
function flatten(text: string): string {
  return text.replace(URLS, ' ').replace(/\s+/g, ' ');
}

/** Does a literal fragment read as code or as a message of its own (not a stray English phrase)? */
function distinctive(fragment: string, message: boolean): boolean {
  if (fragment.length < 8) return false;
  if (/[^A-Za-z .,;:!?']/.test(fragment)) return true;
  return fragment.split(/\s+/).filter(Boolean).length >= (message ? 2 : 4);
}

function literalFragments(text: string, message: boolean): string[] {
  return text
    .split(PLACEHOLDER)
    .map((f) => f.replace(/\s+/g, ' ').trim())
    .filter((f) => distinctive(f, message));
}

function pr2Tokens(input: JudgeInput): Pr2Tokens {
  const names = new Set<string>();
  const words = new Set<string>();
  const literals = new Set<string>();
  const text = [input.pr2.title, input.pr2.body, input.pr2.discussion].join('\n');
  // Fenced blocks in PR2's text (a reproducer, a traceback) are read as code.
  const fenced = [...text.matchAll(FENCED)].flatMap((m) => m[1]!.split('\n'));
  const code = [...addedLines(input.pr2.patch), ...addedLines(input.pr2.testPatch), ...fenced].map((l) => l.replace(URLS, ' '));
  // "fix(gzip): ..." is a conventional-commit prefix, not a call.
  const prose = text.replace(FENCED, ' ').replace(URLS, ' ').replace(/^[ \t]*\w+\([^)\n]*\)!?:/gm, ' ');
  for (const m of text.replace(URLS, ' ').matchAll(ERROR_LINE)) for (const f of literalFragments(m[1]!, false)) literals.add(f);

  for (const line of code) {
    for (const [t] of line.matchAll(NAME)) if (isSnake(t) || isCamel(t)) names.add(t);
    for (const [t] of line.matchAll(DOTTED)) for (const d of dottedTails(t)) names.add(d);
    for (const m of [...line.matchAll(CALL), ...line.matchAll(DEFINES)]) {
      const t = m[1]!;
      if (isSnake(t) || isCamel(t)) names.add(t);
      else if (isPlainWord(t)) words.add(t);
    }
    for (const m of line.matchAll(MESSAGE)) for (const f of literalFragments(m[2]!, true)) literals.add(f);
    for (const m of line.matchAll(LITERAL)) for (const f of literalFragments(m[2]!, false)) literals.add(f);
  }

  for (const [t] of prose.matchAll(NAME)) if (isSnake(t)) names.add(t);
  for (const [t] of prose.matchAll(DOTTED)) if (!PROSE_DOTTED.test(t)) for (const d of dottedTails(t)) names.add(d);
  for (const m of prose.matchAll(CALL)) {
    const t = m[1]!;
    if (isSnake(t) || isCamel(t)) names.add(t);
    else if (isPlainWord(t)) words.add(t);
  }
  for (const m of prose.matchAll(BACKTICKED)) {
    const inner = m[1]!.trim().replace(/\(\)$/, '');
    if (new RegExp(`^${ID}(?:\\.${ID})*$`).test(inner)) {
      if (isSnake(inner) || isCamel(inner) || (inner.includes('.') && isDotted(inner))) names.add(inner);
      else if (isPlainWord(inner)) words.add(inner);
    } else {
      // A backticked snippet: its code-shaped names.
      for (const [t] of inner.matchAll(NAME)) if (isSnake(t) || isCamel(t)) names.add(t);
    }
  }

  for (const id of input.tests.anticipation) for (const [t] of id.matchAll(NAME)) if (isTestName(t) || isSnake(t)) names.add(t);
  return { names, words, literals };
}

interface MaterialIndex {
  /** The text, whitespace collapsed, URLs and e-mail addresses dropped. */
  flat: string;
  /** Every identifier-shaped word. */
  words: Set<string>;
  lowerWords: Set<string>;
  /** Text inside backticks and fenced code blocks: where a plain word is written as code. */
  codeSpans: Set<string>;
}

function materialIndex(text: string): MaterialIndex {
  const flat = flatten(text);
  const words = new Set(flat.match(/[A-Za-z0-9_]+/g) ?? []);
  const codeSpans = new Set<string>();
  for (const m of text.matchAll(/```[^\n]*\n([\s\S]*?)```|`([^`\n]+)`/g)) {
    for (const w of (m[1] ?? m[2] ?? '').match(/[A-Za-z0-9_]+/g) ?? []) codeSpans.add(w);
  }
  return { flat, words, lowerWords: new Set([...words].map((w) => w.toLowerCase())), codeSpans };
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A name on word boundaries; with `asPath`, a dotted name also as its path (a.b -> a/b: a module and its file). */
function hasName(m: MaterialIndex, t: string, asPath = false): boolean {
  if (!t.includes('.')) return m.words.has(t);
  if (asPath && m.flat.includes(t.replace(/\./g, '/'))) return true;
  return m.flat.includes(t) && new RegExp(`(?<![\\w])${escapeRe(t)}(?![\\w])`).test(m.flat);
}

/** A plain word written as code: backticked, called, or an attribute. */
function writesAsCode(m: MaterialIndex, t: string): boolean {
  if (!m.words.has(t)) return false;
  if (m.codeSpans.has(t)) return true;
  const e = escapeRe(t);
  return new RegExp(`(?<![\\w])${e}\\((?!s\\))|[\\w)]\\.${e}(?![\\w])`).test(m.flat);
}
