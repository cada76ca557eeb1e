import { fileKind, isBlankOrComment } from '../../core/foundation/files.ts';
import { git } from '../../core/foundation/git.ts';
import { scratchFile } from '../../core/foundation/scratch.ts';
import { blameLines, type BlamedLine, type BlameOptions } from './blame.ts';
import { fixedLines, type FixDiffs, type FixedLines } from './diff-lines.ts';
import { enclosingBlock } from './enclosing.ts';
import type { MetaChanges } from './meta.ts';
import { changedNames, FITTED, rankScore, type CandidateFeatures, type RankerWeights } from './rank.ts';

/** A commit blame holds responsible for some of the fixed lines, with its weighted score. */
export interface BlamedCommit {
  sha: string;
  score: number;
  time: number;
  lines: Array<{ file: string; line: number }>;
  /** With `wider`: what ranked it (its `score` is then the ranker's, 0..1). */
  features?: CandidateFeatures;
}

export interface Attribution {
  /** Highest score first; on a tie the more recent commit. */
  commits: BlamedCommit[];
  blamedLines: number;
  /** Weighted lines whose commit was made after the defect was reported (cannot have induced it). */
  filteredByTime: number;
  /** Weighted fixed lines written before the history horizon (blame did not look that far). */
  beyondHorizon: number;
  /** Meta-changes blame looked through. */
  metaSkipped: Array<{ sha: string; reason: string }>;
  /** The fix only adds lines: the enclosing function was blamed instead. */
  addOnly: boolean;
}

export type SzzVariant = 'b-szz' | 'foresight';

export interface AttributeOptions {
  variant: SzzVariant;
  meta?: MetaChanges;
  /** ISO time the defect was reported: inducing commits must predate it. */
  reportedAt?: string | null;
  /**
   * foresight only: look further than the fixed lines (the blocks around them, the fixed files' newest
   * history) and rank every commit found with `weights` (default: fitted on a mix of repositories, rank.ts).
   */
  wider?: boolean;
  weights?: RankerWeights;
  /**
   * foresight only: seconds of history before the fix's parent that blame and the files' history look at;
   * null or absent: all of it. The szz stage passes the horizon chosen on the repository's own fixes (repo-fit.ts).
   */
  horizon?: number | null;
  /** Where the fix's diff is read from: a batch of the run's fixes (FixDiffs), else one `git diff` for this fix. */
  diffs?: FixDiffs;
}

/** The fixed files' newest commits looked at, per file. */
const RECENT_PER_FILE = 10;
/** A block longer than this (a whole class) is replaced by the lines around the fix. */
const MAX_BLOCK = 150;
const NEIGHBOURS = 3;

/**
 * The old-side lines around a fix in one file: the enclosing function of every fixed line and
 * insertion point, or, at the top level or in a block too long, the lines just around them (what a
 * deleted neighbour or a changed definition next to the fix would have touched).
 */
function blockLines(text: string, f: FixedLines): number[] {
  const lines = text.split('\n');
  const out = new Set<number>();
  for (const at of [...f.removed.map((r) => r.line), ...f.anchors]) {
    const b = enclosingBlock(text, at);
    const [start, end] = b && b.end - b.start < MAX_BLOCK ? [b.start, b.end] : [Math.max(1, at - NEIGHBOURS), Math.min(lines.length, at + NEIGHBOURS)];
    for (let l = start; l <= end; l++) if (!isBlankOrComment(lines[l - 1] ?? '', f.file)) out.add(l);
  }
  return [...out];
}

interface Target {
  line: number;
  weight: number;
}

/** The old-side lines to blame in one file, with weights. */
async function targetsFor(baseText: () => Promise<string>, f: FixedLines, variant: SzzVariant, addOnly: boolean): Promise<Target[]> {
  if (variant === 'b-szz') return f.removed.map((r) => ({ line: r.line, weight: 1 }));
  if (!addOnly) return f.removed.filter((r) => !isBlankOrComment(r.text, f.file)).map((r) => ({ line: r.line, weight: 1 }));
  // A fix that only adds lines (a new guard, a missing case): the defect lives in the code around the
  // insertion. Blame the enclosing function, each hunk worth one line, the lines it guards counting most.
  const text = await baseText();
  const lines = text.split('\n');
  const targets: Target[] = [];
  for (const anchor of f.anchors) {
    const block = enclosingBlock(text, anchor + 1) ?? { start: Math.max(1, anchor - 2), end: Math.min(lines.length, anchor + 2) };
    const body: number[] = [];
    for (let l = block.start; l <= block.end; l++) if (!isBlankOrComment(lines[l - 1] ?? '', f.file)) body.push(l);
    if (!body.length) continue;
    // The guarded lines, just below the insertion, count for half; the rest of the function for the other half.
    const near = new Set([anchor + 1, anchor + 2]);
    const nearCount = body.filter((l) => near.has(l)).length;
    for (const l of body) targets.push({ line: l, weight: near.has(l) ? 0.5 / nearCount : (nearCount ? 0.5 : 1) / (body.length - nearCount) });
  }
  return targets;
}

const revertGrafts = new Map<string, Promise<string | null>>();

/**
 * A revert restores the content its reverted commit started from. A graft file (`git blame -S`) that
 * gives the revert the reverted commit's parent as its own, so the restored lines reach their origin;
 * null when the message names no reverted commit present here.
 */
function revertGraft(clone: string, sha: string): Promise<string | null> {
  const key = `${clone}\0${sha}`;
  let p = revertGrafts.get(key);
  if (!p) {
    p = (async () => {
      const body = await git(clone, ['show', '-s', '--format=%B', '--end-of-options', sha]);
      const reverted = /This reverts commit ([0-9a-f]{40})\b/.exec(body)?.[1];
      if (!reverted) return null;
      const parent = (await git(clone, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${reverted}^1`]).catch(() => '')).trim();
      if (!parent) return null;
      return scratchFile('grafts', `${sha} ${parent}\n`);
    })();
    revertGrafts.set(key, p);
  }
  return p;
}

/**
 * Which changed files to blame. B-SZZ: every file, as published. foresight: code and behaviour files
 * (templates, styles ...); a fix that touches none of them (it repairs a test) blames its tests.
 */
export function selectFiles(files: FixedLines[], variant: SzzVariant): FixedLines[] {
  if (variant === 'b-szz') return files;
  const code = files.filter((f) => f.kind === 'source' || f.kind === 'behaviour');
  return code.length ? code : files.filter((f) => f.kind === 'test');
}

function blameOptions(variant: SzzVariant, ignoreRevs: string[], ignoreRevsFile: string | null, since: number | null): BlameOptions {
  return variant === 'b-szz' ? { whitespace: false, moves: false } : { whitespace: true, moves: true, ignoreRevs, ignoreRevsFile, since };
}

/**
 * SZZ for one fix (base..head): blame, at the fix's parent, the lines its source diff deletes or
 * modifies and rank the commits that wrote them. The fix's message is never read.
 * - b-szz: every deleted line, plain blame; every blamed commit is a prediction.
 * - foresight: whitespace- and move-aware blame, blank/comment lines skipped, meta-changes looked
 *   through (the repository's .git-blame-ignore-revs, reformatting, mass changes, reverts), commits
 *   after the report dropped, and add-only fixes blamed through their enclosing function.
 */
export async function attributeFix(clone: string, fix: { baseSha: string; mergeSha: string }, opts: AttributeOptions): Promise<Attribution> {
  const files = selectFiles(await (opts.diffs ? opts.diffs.get(fix.baseSha, fix.mergeSha) : fixedLines(clone, fix.baseSha, fix.mergeSha)), opts.variant);
  const addOnly = files.every((f) => f.removed.length === 0);
  const ignoreRevsFile = opts.variant === 'foresight' ? ((await opts.meta?.ignoreRevsFile()) ?? null) : null;
  const reported = opts.reportedAt ? Date.parse(opts.reportedAt) / 1000 : Infinity;
  const byCommit = new Map<string, BlamedCommit>();
  const metaSkipped = new Map<string, string>();
  let blamedLines = 0;
  let filteredByTime = 0;
  let beyondHorizon = 0;
  let blockBeyond = 0;

  const wider = opts.variant === 'foresight' && opts.wider === true;
  const horizon = opts.variant === 'foresight' ? (opts.horizon ?? null) : null;
  // The base's time from the commit facts already read (one git call fewer per fix), else from git.
  const baseTime =
    wider || horizon !== null ? ((await opts.meta?.commitTime(fix.baseSha)) ?? Number((await git(clone, ['show', '-s', '--format=%ct', '--end-of-options', fix.baseSha])).trim())) : 0;
  const since = horizon === null ? null : baseTime - horizon;
  const block = new Map<string, { lines: number; time: number }>();
  let blockTotal = 0;
  for (const f of files) {
    // The file at the base, read once for the add-only targets and the blocks around the fix.
    let text: Promise<string> | undefined;
    const baseText = (): Promise<string> => (text ??= opts.meta ? opts.meta.fileAt(fix.baseSha, f.file) : git(clone, ['show', '--end-of-options', `${fix.baseSha}:${f.file}`]));
    const targets = await targetsFor(baseText, f, opts.variant, addOnly);
    const around = wider ? blockLines(await baseText(), f) : [];
    if (!targets.length && !around.length) continue;
    const weight = new Map(targets.map((t) => [t.line, t.weight]));
    const aroundSet = new Set(around);
    // One blame for the fixed lines and the blocks around them: the ranges cost about as much as the largest.
    const lines = [...new Set([...targets.map((t) => t.line), ...around])];
    let ignore: string[] = [];
    let blamed: BlamedLine[] = await blameLines(clone, fix.baseSha, f.file, lines, blameOptions(opts.variant, ignore, ignoreRevsFile, since));
    if (opts.variant === 'foresight' && opts.meta) {
      // Look through meta-changes: blame again, ignoring them, until none is left (bounded).
      // A revert is looked through by grafting: its lines are blamed from the reverted commit's parent.
      const grafts = new Map<string, string>();
      for (let round = 0; round < 3; round++) {
        const found: string[] = [];
        let grafted = false;
        for (const sha of new Set(blamed.map((b) => b.sha))) {
          if (ignore.includes(sha) || grafts.has(sha)) continue;
          const reason = await opts.meta.classify(sha);
          if (!reason) continue;
          metaSkipped.set(sha, reason);
          const graft = reason === 'revert' ? await revertGraft(clone, sha) : null;
          if (graft) {
            grafts.set(sha, graft);
            grafted = true;
          } else {
            found.push(sha);
          }
        }
        if (!found.length && !grafted) break;
        ignore = [...ignore, ...found];
        blamed = await blameLines(clone, fix.baseSha, f.file, lines, blameOptions(opts.variant, ignore, ignoreRevsFile, since));
        // Only the lines blame leaves on a revert get its graft: lines it did not restore keep their real history.
        for (const [sha, graft] of grafts) {
          const on = blamed.filter((b) => b.sha === sha).map((b) => b.line);
          if (!on.length) continue;
          const again = new Map(
            (await blameLines(clone, fix.baseSha, f.file, on, { ...blameOptions(opts.variant, ignore, ignoreRevsFile, since), grafts: graft })).map((b) => [b.line, b]),
          );
          // A line the grafted blame leaves out is older than the horizon.
          blamed = blamed.flatMap((b) => (b.sha !== sha ? [b] : again.has(b.line) ? [again.get(b.line)!] : []));
        }
      }
    }
    // Lines blame did not return were written before the horizon: still part of the shares' totals.
    const returned = new Set(blamed.map((b) => b.line));
    for (const l of lines) {
      if (returned.has(l)) continue;
      if (aroundSet.has(l)) blockBeyond++;
      beyondHorizon += weight.get(l) ?? 0;
    }
    for (const b of blamed) {
      if (opts.variant === 'foresight' && isBlankOrComment(b.text, f.file)) continue;
      // git leaves a line it cannot pass through an ignored meta-change with that commit (Django's Black
      // reformatting, 9c19aff7c7, was a chain's PR1 so): nobody's line, counted in the totals like an old one.
      if (ignore.includes(b.sha)) {
        if (aroundSet.has(b.line)) blockBeyond++;
        beyondHorizon += weight.get(b.line) ?? 0;
        continue;
      }
      if (aroundSet.has(b.line) && b.time <= reported) {
        blockTotal++;
        const e = block.get(b.sha) ?? { lines: 0, time: b.time };
        e.lines++;
        block.set(b.sha, e);
      }
      if (wider && !weight.has(b.line)) continue;
      const w = weight.get(b.line) ?? 1;
      blamedLines++;
      if (b.time > reported) {
        filteredByTime += w;
        continue;
      }
      const entry = byCommit.get(b.sha) ?? { sha: b.sha, score: 0, time: b.time, lines: [] };
      entry.score += w;
      entry.lines.push({ file: f.file, line: b.line });
      byCommit.set(b.sha, entry);
    }
  }
  let commits = [...byCommit.values()].sort((a, b) => b.score - a.score || b.time - a.time);
  if (wider) commits = await rankWider(clone, fix, files, commits, { block, blockTotal: blockTotal + blockBeyond, beyondHorizon, baseTime, since }, reported, opts);
  return { commits, blamedLines, filteredByTime, beyondHorizon, metaSkipped: [...metaSkipped].map(([sha, reason]) => ({ sha, reason })), addOnly };
}

/**
 * Every commit found around a fix, ranked: the fixed lines' blame, the blocks around them, and the
 * fixed files' newest history (what deleted, renamed or changed something the fixed lines use is
 * often there and nowhere in blame). Scores are the ranker's (rank.ts), highest first.
 */
async function rankWider(
  clone: string,
  fix: { baseSha: string; mergeSha: string },
  files: FixedLines[],
  blamed: BlamedCommit[],
  around: {
    block: ReadonlyMap<string, { lines: number; time: number }>;
    /** Lines of the blocks, those beyond the horizon included. */
    blockTotal: number;
    /** Weighted fixed lines beyond the horizon. */
    beyondHorizon: number;
    baseTime: number;
    since: number | null;
  },
  reported: number,
  opts: AttributeOptions,
): Promise<BlamedCommit[]> {
  const base = fix.baseSha;
  const { block, blockTotal, baseTime, since } = around;
  const horizon = since === null ? [] : [`--since=@${since}`];
  const times = new Map<string, number>();
  const recent = new Map<string, number>();
  const touched = new Map<string, number>();
  const recentIn = new Map<string, Set<string>>();
  for (const f of files) {
    const log = await git(clone, ['log', '--no-merges', '-n', String(RECENT_PER_FILE), ...horizon, '--format=%H %ct', '--end-of-options', base, '--', f.file]);
    const seen = new Set<string>();
    recentIn.set(f.file, seen);
    log.split('\n').filter(Boolean).forEach((l, i) => {
      const [sha = '', t = '0'] = l.split(' ');
      seen.add(sha);
      times.set(sha, Number(t));
      recent.set(sha, Math.max(recent.get(sha) ?? 0, 1 / (1 + i)));
      touched.set(sha, (touched.get(sha) ?? 0) + 1);
    });
  }
  // A blamed commit wrote lines of the files it is blamed in, whether or not it is among their newest.
  for (const c of blamed) {
    const inFiles = new Set(c.lines.map((l) => l.file));
    const logged = files.filter((f) => inFiles.has(f.file) && !recentIn.get(f.file)?.has(c.sha)).length;
    touched.set(c.sha, (touched.get(c.sha) ?? 0) + logged);
  }
  // Shares count the lines beyond the horizon too: a candidate within it scores as if blame had looked through all history.
  const totalBlame = blamed.reduce((n, c) => n + c.score, 0) + around.beyondHorizon;
  const byBlame = new Map(blamed.map((c) => [c.sha, c]));
  for (const c of blamed) times.set(c.sha, c.time);
  for (const [sha, b] of block) times.set(sha, b.time);
  const names = await namesShared(clone, fix, files, [...times.keys()]);
  const testDirs = await testDirsShared(clone, fix, [...times.keys()]);
  const out: BlamedCommit[] = [];
  for (const [sha, time] of times) {
    if (time > reported) continue;
    // A meta-change found only by the file's history (a mass reformatting) changed no behaviour.
    if (!byBlame.has(sha) && !block.has(sha) && (await opts.meta?.classify(sha))) continue;
    const size = (await opts.meta?.filesChanged(sha)) ?? 1;
    const features: CandidateFeatures = {
      blame: totalBlame ? (byBlame.get(sha)?.score ?? 0) / totalBlame : 0,
      block: blockTotal ? (block.get(sha)?.lines ?? 0) / blockTotal : 0,
      recent: recent.get(sha) ?? 0,
      overlap: files.length ? (touched.get(sha) ?? 0) / files.length : 0,
      age: Math.log1p(Math.max(0, baseTime - time) / 86400),
      size: Math.log1p(size),
      age2: 0,
      fresh: baseTime - time < 3 * 86400 ? 1 : 0,
      historyOnly: byBlame.has(sha) || block.has(sha) ? 0 : 1,
      tokens: names.get(sha) ?? 0,
      testDir: testDirs.get(sha) ?? 0,
    };
    features.age2 = (features.age * features.age) / 10;
    out.push({ sha, time, lines: byBlame.get(sha)?.lines ?? [], score: rankScore(features, opts.weights ?? FITTED), features });
  }
  return out.sort((a, b) => b.score - a.score || b.time - a.time);
}

/**
 * For each candidate, the share of the names on the fix's changed lines that the candidate's own
 * changes to the fixed files hold: a commit that deleted, renamed or rewrote what the fix uses shares
 * them even when blame never reaches it. Two git calls per fix.
 */
async function namesShared(clone: string, fix: { baseSha: string; mergeSha: string }, files: FixedLines[], shas: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!files.length || !shas.length) return out;
  const paths = files.map((f) => f.file);
  const fixNames = changedNames(await git(clone, ['diff', '-U0', '--no-color', '--no-ext-diff', '--end-of-options', fix.baseSha, fix.mergeSha, '--', ...paths]));
  if (!fixNames.size) return out;
  const shown = await git(clone, ['show', '--format=%x1e%H', '-U0', '--no-color', '--no-ext-diff', '--end-of-options', ...shas, '--', ...paths]);
  for (const rec of shown.split('\x1e')) {
    const nl = rec.indexOf('\n');
    const sha = (nl < 0 ? rec : rec.slice(0, nl)).trim();
    if (!sha) continue;
    const theirs = changedNames(nl < 0 ? '' : rec.slice(nl + 1));
    let n = 0;
    for (const name of fixNames) if (theirs.has(name)) n++;
    out.set(sha, n / fixNames.size);
  }
  return out;
}

/** For each candidate, the share of the directories of the fix's test files in which it changed a file. Two git calls. */
async function testDirsShared(clone: string, fix: { baseSha: string; mergeSha: string }, shas: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!shas.length) return out;
  const changed = await git(clone, ['diff', '--name-only', '--no-renames', '--end-of-options', fix.baseSha, fix.mergeSha]);
  const dirOf = (p: string): string => p.slice(0, p.lastIndexOf('/') + 1);
  const dirs = new Set(changed.split('\n').filter((p) => p && fileKind(p) === 'test').map(dirOf));
  if (!dirs.size) return out;
  const shown = await git(clone, ['show', '--name-only', '--no-renames', '--format=%x1e%H', '--end-of-options', ...shas]);
  for (const rec of shown.split('\x1e')) {
    const [sha = '', ...paths] = rec.split('\n').map((l) => l.trim()).filter(Boolean);
    if (!sha) continue;
    const theirs = new Set(paths.map(dirOf));
    out.set(sha, [...dirs].filter((d) => theirs.has(d)).length / dirs.size);
  }
  return out;
}
