/**
 * Benchmark: the offline rules judges (judges/*: rules()) against changes whose nature the repository's
 * own history states. Per clone, it labels changes, builds the JudgeInput each rule would see, runs the
 * rules and prints, per rule, how often it excludes, its precision and its recall.
 *
 *   make bench-rules CLONE=/tmp/django [SINCE=2016-01-01] [UNTIL=...]
 *   node_modules/.bin/tsx bench/rules-judges.ts --clone /tmp/django --clone /tmp/networkx [--since D] [--until D] [--blame N]
 *
 * Labels (each from an explicit statement of the history, never from the text a rule reads):
 *  - bug_fix: the message says where the bug came from ("Regression in <sha>", "Bug in <sha>",
 *    "regression from #N"), the named commit or PR being an earlier change; or the change adds an entry
 *    to a bugfix release's notes (Django: docs/releases/X.Y.Z.txt, Z >= 1, which list only bug fixes);
 *    or a release's notes list its PR under "Bug Fixes" (networkx: doc/release/release_*.rst).
 *  - feature: the change adds an entry under "What's new" of a feature release's notes (Django:
 *    docs/releases/X.Y.txt), or a release's notes list its PR under "Enhancements" / "New Features"
 *    / "Improvements" and not under "Bug Fixes".
 *  - docs: a release's notes list its PR under "Documentation" only.
 *  - revert: its diff outside docs/ is the exact inverse of an earlier mainline change's (equal `git
 *    patch-id` of its diff and of the other's reversed diff): read from the code, not from the message.
 *    It wins over a bug_fix label: a revert that fixes a regression still undoes PR1 whole, which the
 *    benchmark excludes (discover excludes git's own reverts before any judge). A partial revert is not
 *    an inverse and keeps its other label.
 *  A change with two different labels is left out; only changes that touch a test file and a non-test
 *  file are kept (a chain's PR2 always does: a fix of the tests alone has no source fix to hold out).
 *
 * Circularity: the rule never sees the statement a label came from. A "Regression in <sha>" sentence is
 * cut from the title and body (a title that is only that sentence becomes empty); the release-notes files
 * a label was read from are cut from the source diff (the docs-only rule reads the diff). Section labels of
 * networkx come from its release notes, which the rules never read (they are assigned by maintainers;
 * titles often carry the same intent as a prefix such as "ENH:", which is the author's own statement).
 * Reverts are labelled from the diff alone. PR2's discussion is empty here (no tracker is queried), so a
 * defect signal that only a ticket holds is not seen: the rules' abstentions are a lower bound.
 *
 * Attribution: for fixes labelled by "Regression in <sha>", the named commit is the truth. The bench blames
 * the fix as the szz stage does (stages/szz attributeFix, foresight variant), folds the blame into changes,
 * and takes the top candidate as PR1 (what the szz stage picks when no reference is read). The rule should
 * pass (A) when the top is the named change and exclude otherwise. Fairness: the same chains, with PR1's
 * raw text (title and body) as the statement: it predates PR2, so every leak verdict on it is false.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import { loadConfig } from '../core/foundation/config.ts';
import { git } from '../core/foundation/git.ts';
import { changeLabel, type PullRequest } from '../core/foundation/model/change.ts';
import { rawStatement } from '../core/foundation/model/discussion.ts';
import { splitPatch } from '../core/extract/split-patch.ts';
import { commitToChange, listChanges } from '../core/history/changes.ts';
import { attributionJudge } from '../judges/attribution/index.ts';
import { eligibilityJudge } from '../judges/eligibility/index.ts';
import { FAIRNESS_RULE_SETS, fairnessJudge } from '../judges/fairness/index.ts';
import type { JudgeInput, PrView } from '../judges/types.ts';
import { attributeFix, MetaChanges, toEvidence } from '../stages/szz/index.ts';

const { values } = parseArgs({
  options: { clone: { type: 'string', multiple: true }, since: { type: 'string' }, until: { type: 'string' }, blame: { type: 'string' }, examples: { type: 'string' } },
});
if (!values.clone?.length) throw new Error('usage: bench/rules-judges.ts --clone <clone> [--clone <clone>] [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--blame N] (make bench-rules CLONE=...)');
const SINCE = values.since ? Date.parse(values.since) : -Infinity;
const UNTIL = values.until ? Date.parse(values.until) : Infinity;
/** At most this many regression fixes are blamed per repository (blame costs ~0.1-1 s a fix). */
const BLAME_LIMIT = Number(values.blame ?? 400);
const EXAMPLES = Number(values.examples ?? 8);

type Label = 'bug_fix' | 'feature' | 'docs' | 'revert';

interface Labelled {
  change: PullRequest;
  label: Label;
  source: string;
  /** Release-notes files the label was read from: cut from the diff the rules see. */
  files: Set<string>;
  /** The change a "Regression in" statement names. */
  inducing: string | null;
}

// "Regression in <sha>" (Django), "regression from #N", "Bug in <sha>": the fix says where its bug came from.
const NAMED = /\b(?:regression|bug)\s+(?:in|from|introduced in|introduced by|caused by)\s+(?:commit\s+)?([0-9a-f]{7,40}|#\d+)\b/gi;
/** The sentence holding such a statement: cut from what the rules read. */
const NAMED_SENTENCE = /[^.\n]*\b(?:regression|bug)\s+(?:in|from|introduced in|introduced by|caused by)\s+(?:commit\s+)?(?:[0-9a-f]{7,40}|#\d+)\b[^.\n]*\.?/gi;

const inWindow = (c: PullRequest): boolean => {
  const t = Date.parse(c.mergedAt);
  return t >= SINCE && t < UNTIL;
};

/** `git <args> | git patch-id --stable`: patch id -> the commits with it. */
async function patchIds(clone: string, args: string[]): Promise<Map<string, string[]>> {
  const log = spawn('git', args, { cwd: clone, stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = spawn('git', ['patch-id', '--stable'], { cwd: clone, stdio: ['pipe', 'pipe', 'ignore'] });
  log.stdout.pipe(pid.stdin);
  let out = '';
  pid.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  await new Promise<void>((res, rej) => pid.on('close', (code) => (code === 0 ? res() : rej(new Error(`git patch-id exited ${code}`)))));
  const map = new Map<string, string[]>();
  for (const line of out.split('\n')) {
    const [id, sha] = line.split(' ');
    if (id && sha) map.set(id, [...(map.get(id) ?? []), sha]);
  }
  return map;
}

/** Reverts by diff: R's diff equals X's diff reversed, X older. R's change -> X's change. */
async function revertsByDiff(clone: string, changeOf: ReadonlyMap<string, string>, order: ReadonlyMap<string, number>): Promise<Map<string, string>> {
  const window = [...(values.since ? [`--since=${values.since}`] : []), ...(values.until ? [`--until=${values.until}`] : [])];
  // Documentation is left out: a revert that adds a release note is still the inverse of the code it undoes.
  const code = ['--', '.', ':!docs', ':!doc'];
  const base = ['log', '--first-parent', '--no-merges', '-p', '--no-prefix', '--format=commit %H', ...window, 'HEAD', ...code];
  // A revert may undo a change from before the window: the reversed diffs cover the whole history.
  const [forward, reversed] = await Promise.all([patchIds(clone, base), patchIds(clone, ['log', '--first-parent', '--no-merges', '-p', '-R', '--no-prefix', '--format=commit %H', 'HEAD', ...code])]);
  const out = new Map<string, string>();
  for (const [id, shas] of forward) {
    const undone = reversed.get(id);
    if (!undone) continue;
    for (const r of shas) {
      const rc = changeOf.get(r);
      const xc = undone.map((x) => changeOf.get(x)).find((x) => x !== undefined && x !== rc && (order.get(x) ?? Infinity) < (order.get(rc ?? '') ?? -1));
      if (rc && xc) out.set(rc, xc);
    }
  }
  return out;
}

/** Files each mainline commit touched. */
async function touchedFiles(clone: string): Promise<Map<string, string[]>> {
  const out = await git(clone, ['log', '--first-parent', '--no-merges', '--format=%x1e%H', '--name-only', 'HEAD']);
  const map = new Map<string, string[]>();
  for (const rec of out.split('\x1e')) {
    const [sha, ...files] = rec.split('\n').map((l) => l.trim()).filter(Boolean);
    if (sha) map.set(sha, files);
  }
  return map;
}

const BUGFIX_NOTES = /^docs\/releases\/\d+\.\d+\.([1-9]\d*)\.txt$/;
const FEATURE_NOTES = /^docs\/releases\/\d+\.\d+\.txt$/;

/** Django: a bullet added to a bugfix release's notes (bug_fix), or under "What's new" of a feature release's (feature). */
async function djangoNotes(clone: string, c: PullRequest, files: readonly string[]): Promise<{ label: Label; files: string[] } | null> {
  const labels = new Set<Label>();
  const used: string[] = [];
  for (const f of files) {
    if (!BUGFIX_NOTES.test(f) && !FEATURE_NOTES.test(f)) continue;
    const diff = await git(clone, ['diff', '-U100000', c.baseSha, c.mergeSha, '--', f]).catch(() => '');
    const lines = diff.split('\n');
    const start = lines.findIndex((l) => l.startsWith('@@'));
    if (start < 0) continue;
    // A reworded entry is a removed and an added bullet: only a net new entry states anything.
    const bullets = (sign: string) => lines.filter((l) => l.startsWith(sign) && /^\s*\* \S/.test(l.slice(1))).length;
    if (bullets('+') <= bullets('-')) continue;
    let section = '';
    for (let i = start + 1; i < lines.length; i++) {
      const l = lines[i]!;
      const text = l.slice(1);
      const next = lines[i + 1]?.slice(1) ?? '';
      if (/^=+$/.test(next.trim()) && text.trim() && !/^=+$/.test(text.trim())) section = text.trim();
      if (!l.startsWith('+') || !/^\s*\* \S/.test(text)) continue;
      if (BUGFIX_NOTES.test(f)) labels.add('bug_fix');
      else if (/^what's new/i.test(section)) labels.add('feature');
      else continue;
      used.push(f);
    }
  }
  if (labels.size !== 1) return null;
  return { label: [...labels][0]!, files: [...new Set(used)] };
}

/** networkx: the sections of every release's notes at HEAD that list a PR ("Bug Fixes", "Enhancements", ...). */
async function sectionsByPr(clone: string): Promise<Map<number, Set<string>>> {
  const map = new Map<number, Set<string>>();
  const names = (await git(clone, ['ls-tree', '-r', '--name-only', 'HEAD', '--', 'doc/release'])).split('\n').filter((f) => /release_[\w.]+\.rst$/.test(f));
  for (const f of names) {
    const lines = (await git(clone, ['show', `HEAD:${f}`])).split('\n');
    let section = '';
    for (let i = 0; i < lines.length; i++) {
      const next = lines[i + 1] ?? '';
      if (/^-{3,}\s*$/.test(next) && lines[i]!.trim()) section = lines[i]!.trim().toLowerCase();
      for (const m of lines[i]!.matchAll(/\/pull\/(\d+)/g)) {
        const n = Number(m[1]);
        if (section) map.set(n, new Set([...(map.get(n) ?? []), section]));
      }
    }
  }
  return map;
}

function sectionLabel(sections: Set<string>): Label | null {
  const bug = [...sections].some((s) => /^bug ?fix/.test(s));
  const feature = [...sections].some((s) => /^(enhancements?|new features?|improvements?)$/.test(s));
  const docs = [...sections].every((s) => /^documentation$/.test(s));
  if (bug && !feature) return 'bug_fix';
  if (feature && !bug) return 'feature';
  return docs ? 'docs' : null;
}

/** The named change of a "Regression in <sha>" / "regression from #N" statement, when it is an earlier change. */
async function namedInducer(clone: string, c: PullRequest, changeOf: ReadonlyMap<string, string>, byNumber: ReadonlyMap<number, PullRequest>, order: ReadonlyMap<string, number>): Promise<string | null> {
  for (const m of `${c.title}\n${c.body}`.matchAll(NAMED)) {
    const ref = m[1]!;
    let id: string | undefined;
    if (ref.startsWith('#')) id = byNumber.get(Number(ref.slice(1)))?.id;
    else {
      const full = (await git(clone, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => '')).trim();
      id = full ? changeOf.get(full) : undefined;
    }
    if (id && id !== c.id && (order.get(id) ?? Infinity) < (order.get(c.id) ?? -1)) return id;
  }
  return null;
}

/** A unified diff without the sections of `drop`'s files. */
function withoutFiles(diff: string, drop: ReadonlySet<string>): string {
  if (!drop.size) return diff;
  return diff
    .split(/(?=^diff --git )/m)
    .filter((s) => ![...drop].some((f) => s.startsWith(`diff --git a/${f} `)))
    .join('');
}

const cut = (text: string): string => text.replace(NAMED_SENTENCE, '').replace(/\n{3,}/g, '\n\n').trim();

const EMPTY_VIEW: PrView = { label: '', title: '', body: '', patch: '', testPatch: '', discussion: '' };

function input(pr2: PrView, pr1: PrView = EMPTY_VIEW, over: Partial<JudgeInput> = {}): JudgeInput {
  return {
    instanceId: 'bench', miningCategory: 'szz', problemStatement: rawStatement(pr1), statementOrigin: 'raw', pr2Statement: null, pr1, pr2,
    blame: { linesFromPr1: 0, linesFromOthers: 0, explicitReference: false }, tests: { pr1FailToPass: [], anticipation: [] }, feedback: null, ...over,
  };
}

async function view(clone: string, c: PullRequest, drop: ReadonlySet<string> = new Set(), strip = false): Promise<PrView & { hasTests: boolean; hasSource: boolean }> {
  const split = await splitPatch(clone, c.baseSha, c.mergeSha);
  return {
    label: changeLabel(c), title: strip ? cut(c.title) : c.title, body: strip ? cut(c.body) : c.body,
    patch: withoutFiles(split.source, drop), testPatch: split.tests, discussion: '', hasTests: split.tests.trim() !== '',
    hasSource: withoutFiles(split.source, drop).trim() !== '',
  };
}

const pct = (a: number, b: number): string => (b ? (a / b).toFixed(2) : '–');

interface RuleRow {
  rule: string;
  fires: number;
  correct: number;
  target: number;
  caught: number;
}

function table(header: string[], rows: Array<Array<string | number>>): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

async function benchClone(clone: string): Promise<void> {
  const started = Date.now();
  const cfg = loadConfig({});
  const { changes } = await listChanges(clone, cfg.discover);
  const changeOf = commitToChange(changes);
  const order = new Map(changes.map((c, i) => [c.id, i]));
  const byId = new Map(changes.map((c) => [c.id, c]));
  const byNumber = new Map(changes.filter((c) => c.number !== null).map((c) => [c.number!, c]));
  const window = changes.filter(inWindow);
  const [files, reverts, sections] = await Promise.all([touchedFiles(clone), revertsByDiff(clone, changeOf, order), sectionsByPr(clone)]);

  // 1. Labels.
  const labelled: Labelled[] = [];
  const q = new PQueue({ concurrency: 2 });
  await Promise.all(
    window.map((c) =>
      q.add(async () => {
        const found: Array<Omit<Labelled, 'change'>> = [];
        const reverted = reverts.get(c.id);
        if (reverted) found.push({ label: 'revert', source: `diff inverts ${byId.get(reverted)?.mergeSha.slice(0, 10)}`, files: new Set(), inducing: null });
        const inducing = await namedInducer(clone, c, changeOf, byNumber, order);
        if (inducing) found.push({ label: 'bug_fix', source: 'names the change its bug came from', files: new Set(), inducing });
        const touched = c.commits.flatMap((s) => files.get(s) ?? []).concat(files.get(c.mergeSha) ?? []);
        const notes = await djangoNotes(clone, c, [...new Set(touched)]);
        if (notes) found.push({ label: notes.label, source: 'release notes entry', files: new Set(notes.files), inducing: null });
        const s = c.number !== null ? sections.get(c.number) : undefined;
        const sl = s ? sectionLabel(s) : null;
        if (sl) found.push({ label: sl, source: `release notes section: ${[...s!].join(', ')}`, files: new Set(), inducing: null });
        // A revert is a revert whatever it fixes: PR1 undone is no edge case PR1 missed (discover excludes it too).
        if (found.some((f) => f.label === 'revert')) found.splice(0, found.length, ...found.filter((f) => f.label === 'revert'));
        const kinds = new Set(found.map((f) => f.label));
        if (kinds.size !== 1) return;
        labelled.push({ change: c, label: found[0]!.label, source: found.map((f) => f.source).join('; '), files: new Set(found.flatMap((f) => [...f.files])), inducing: found.find((f) => f.inducing)?.inducing ?? null });
      }),
    ),
  );

  // 2. Eligibility on the input each labelled change would give PR2 (label sentences and files cut).
  const rows: Array<{ l: Labelled; verdict: string | null; reason: string }> = [];
  await Promise.all(
    labelled.map((l) =>
      q.add(async () => {
        const pr2 = await view(clone, l.change, l.files, true);
        // A chain's PR2 changes code and tests; a fix of the tests alone is never a PR2.
        if (!pr2.hasTests || !pr2.hasSource) return;
        const v = eligibilityJudge.rules(input(pr2), 'default');
        rows.push({ l, verdict: v && !eligibilityJudge.passes(v) ? v.verdict : v ? 'pass' : null, reason: v?.reason ?? '' });
      }),
    ),
  );
  const counts = (label: Label) => rows.filter((r) => r.l.label === label).length;
  const target: Record<string, Label | null> = { revert: 'revert', feature: 'feature', not_a_bug: 'docs', refactor: null };
  const ruleRows: RuleRow[] = ['revert', 'feature', 'not_a_bug', 'refactor'].map((rule) => {
    const fired = rows.filter((r) => r.verdict === rule);
    const t = target[rule];
    return {
      rule,
      fires: fired.length,
      correct: fired.filter((r) => r.l.label !== 'bug_fix').length,
      target: t ? counts(t) : 0,
      caught: t ? fired.filter((r) => r.l.label === t).length : 0,
    };
  });
  const excluded = rows.filter((r) => r.verdict !== null && r.verdict !== 'pass');
  const nonBug = rows.filter((r) => r.l.label !== 'bug_fix');
  console.log(`\n## ${clone} (${window.length} changes${values.since || values.until ? ` in [${values.since ?? '…'}, ${values.until ?? '…'})` : ''})\n`);
  console.log(`labelled, touching tests and code: ${rows.length} — bug_fix ${counts('bug_fix')}, feature ${counts('feature')}, docs ${counts('docs')}, revert ${counts('revert')}\n`);
  console.log(table(
    ['eligibility rule (verdict)', 'excludes', 'of which not a bug fix', 'precision', 'labelled of its class', 'caught', 'recall'],
    ruleRows.map((r) => [r.rule, r.fires, r.correct, pct(r.correct, r.fires), r.target || '–', r.target ? r.caught : '–', pct(r.caught, r.target)]),
  ));
  const bugs = rows.filter((r) => r.l.label === 'bug_fix');
  console.log(`\ngate: bug fixes excluded ${excluded.filter((r) => r.l.label === 'bug_fix').length} of ${bugs.length}; non-bugs excluded ${excluded.filter((r) => r.l.label !== 'bug_fix').length} of ${nonBug.length}; abstained ${rows.filter((r) => r.verdict === null).length} of ${rows.length}; passed ${rows.filter((r) => r.verdict === 'pass').length}`);
  const wrong = excluded.filter((r) => r.l.label === 'bug_fix').slice(0, EXAMPLES);
  if (wrong.length) console.log(`bug fixes excluded, e.g.:\n${wrong.map((r) => `  - ${r.l.change.mergeSha.slice(0, 10)} ${r.verdict}: ${r.l.change.title.slice(0, 100)} [${r.l.source}]`).join('\n')}`);

  // 3. Attribution and fairness on the regression-labelled chains.
  const regressions = rows.filter((r) => r.l.inducing).slice(-BLAME_LIMIT);
  const meta = new MetaChanges(clone);
  const att: Array<{ truth: boolean; excluded: boolean | null }> = [];
  const fair = new Map<string, number>(FAIRNESS_RULE_SETS.map((s) => [s, 0]));
  let fairJudged = 0;
  await Promise.all(
    regressions.map((r) =>
      q.add(async () => {
        const fix = r.l.change;
        const pr1 = byId.get(r.l.inducing!)!;
        const a = await attributeFix(clone, { baseSha: fix.baseSha, mergeSha: fix.mergeSha }, { variant: 'foresight', meta });
        const ev = toEvidence(a, changeOf, fix.id);
        const top = ev.candidates[0];
        const pr2 = await view(clone, fix, r.l.files, true);
        if (top) {
          const own = top.score;
          const others = ev.candidates.slice(1).reduce((s, k) => s + k.score, 0) + ev.unattributedScore;
          const v = attributionJudge.rules(input(pr2, EMPTY_VIEW, { blame: { linesFromPr1: own, linesFromOthers: others, explicitReference: false } }), 'default');
          att.push({ truth: top.change === pr1.id, excluded: v ? !attributionJudge.passes(v) : null });
        }
        const p1 = await view(clone, pr1);
        fairJudged++;
        for (const set of FAIRNESS_RULE_SETS) {
          const v = fairnessJudge.rules(input(pr2, p1), set);
          if (v?.leak) fair.set(set, fair.get(set)! + 1);
        }
      }),
    ),
  );
  const wrongTop = att.filter((a) => !a.truth);
  const fires = att.filter((a) => a.excluded === true);
  console.log(`\nattribution on ${att.length} regression fixes blame gave a PR1 (top candidate is the named change in ${att.length - wrongTop.length}):\n`);
  console.log(table(
    ['rule', 'excludes', 'of which the top is not the named change', 'precision', 'top not the named change', 'caught', 'recall', 'abstains'],
    [['attribution (excludes when not A)', fires.length, fires.filter((a) => !a.truth).length, pct(fires.filter((a) => !a.truth).length, fires.length), wrongTop.length, wrongTop.filter((a) => a.excluded === true).length, pct(wrongTop.filter((a) => a.excluded === true).length, wrongTop.length), att.filter((a) => a.excluded === null).length]],
  ));
  console.log(`\nfairness on PR1's raw text of ${fairJudged} regression chains (it predates PR2: every leak verdict is false): ${[...fair].map(([s, n]) => `${s} ${n} leak verdicts`).join(', ')}`);
  console.log(`\n${((Date.now() - started) / 1000).toFixed(0)} s`);
}

for (const clone of values.clone) await benchClone(resolve(clone));
