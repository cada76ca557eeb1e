import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBlankOrComment } from '../../core/files.ts';
import { git } from '../../core/git.ts';
import { blameLines, type BlamedLine, type BlameOptions } from './blame.ts';
import { fixedLines, type FixedLines } from './diff-lines.ts';
import { enclosingBlock } from './enclosing.ts';
import type { MetaChanges } from './meta.ts';

/** A commit blame holds responsible for some of the fixed lines, with its weighted score. */
export interface BlamedCommit {
  sha: string;
  score: number;
  time: number;
  lines: Array<{ file: string; line: number }>;
}

export interface Attribution {
  /** Highest score first; on a tie the more recent commit. */
  commits: BlamedCommit[];
  blamedLines: number;
  /** Weighted lines whose commit was made after the defect was reported (cannot have induced it). */
  filteredByTime: number;
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
}

interface Target {
  line: number;
  weight: number;
}

/** The old-side lines to blame in one file, with weights. */
async function targetsFor(clone: string, base: string, f: FixedLines, variant: SzzVariant, addOnly: boolean): Promise<Target[]> {
  if (variant === 'b-szz') return f.removed.map((r) => ({ line: r.line, weight: 1 }));
  if (!addOnly) return f.removed.filter((r) => !isBlankOrComment(r.text, f.file)).map((r) => ({ line: r.line, weight: 1 }));
  // A fix that only adds lines (a new guard, a missing case): the defect lives in the code around the
  // insertion. Blame the enclosing function, each hunk worth one line, the lines it guards counting most.
  const text = await git(clone, ['show', '--end-of-options', `${base}:${f.file}`]);
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
let graftDir: Promise<string> | undefined;

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
      graftDir ??= mkdtemp(join(tmpdir(), 'foresight-grafts-'));
      const path = join(await graftDir, sha);
      await writeFile(path, `${sha} ${parent}\n`);
      return path;
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

function blameOptions(variant: SzzVariant, ignoreRevs: string[], ignoreRevsFile: string | null): BlameOptions {
  return variant === 'b-szz' ? { whitespace: false, moves: false } : { whitespace: true, moves: true, ignoreRevs, ignoreRevsFile };
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
  const files = selectFiles(await fixedLines(clone, fix.baseSha, fix.mergeSha), opts.variant);
  const addOnly = files.every((f) => f.removed.length === 0);
  const ignoreRevsFile = opts.variant === 'foresight' ? ((await opts.meta?.ignoreRevsFile()) ?? null) : null;
  const reported = opts.reportedAt ? Date.parse(opts.reportedAt) / 1000 : Infinity;
  const byCommit = new Map<string, BlamedCommit>();
  const metaSkipped = new Map<string, string>();
  let blamedLines = 0;
  let filteredByTime = 0;

  for (const f of files) {
    const targets = await targetsFor(clone, fix.baseSha, f, opts.variant, addOnly);
    if (!targets.length) continue;
    const weight = new Map(targets.map((t) => [t.line, t.weight]));
    const lines = targets.map((t) => t.line);
    let ignore: string[] = [];
    let blamed: BlamedLine[] = await blameLines(clone, fix.baseSha, f.file, lines, blameOptions(opts.variant, ignore, ignoreRevsFile));
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
        blamed = await blameLines(clone, fix.baseSha, f.file, lines, blameOptions(opts.variant, ignore, ignoreRevsFile));
        // Only the lines blame leaves on a revert get its graft: lines it did not restore keep their real history.
        for (const [sha, graft] of grafts) {
          const on = blamed.filter((b) => b.sha === sha).map((b) => b.line);
          if (!on.length) continue;
          const again = new Map(
            (await blameLines(clone, fix.baseSha, f.file, on, { ...blameOptions(opts.variant, ignore, ignoreRevsFile), grafts: graft })).map((b) => [b.line, b]),
          );
          blamed = blamed.map((b) => (b.sha === sha ? (again.get(b.line) ?? b) : b));
        }
      }
    }
    for (const b of blamed) {
      if (opts.variant === 'foresight' && isBlankOrComment(b.text, f.file)) continue;
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
  const commits = [...byCommit.values()].sort((a, b) => b.score - a.score || b.time - a.time);
  return { commits, blamedLines, filteredByTime, metaSkipped: [...metaSkipped].map(([sha, reason]) => ({ sha, reason })), addOnly };
}
