import { changeLabel } from '../../core/foundation/model/change.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import { git, notAnOption, pathShown, revParse } from '../../core/foundation/git.ts';
import type { StageDef } from '../../core/foundation/stage.ts';
import { CandidateSchema, type Advisory, type Candidate, type Reference } from '../../core/foundation/model/candidate.ts';
import { hasFixKeywords, isRevert } from '../../core/sources/git/find-references.ts';
import { listChanges } from '../../core/history/changes.ts';
import { mainlineFiles } from '../../core/history/mainline.ts';
import { patchIds } from './patch-id.ts';
import { isTestFile } from '../../core/foundation/files.ts';
import { availableSources, SOURCE_SETTINGS, sourceCacheDir, sourceSettings } from '../../core/sources/registry.ts';
import type { SourceInput } from '../../core/sources/types.ts';

/**
 * discover: list the merged changes of a local clone (PRs, or commits for histories without PRs),
 * let every available source annotate them (message references, GitHub, Trac, advisories), and keep
 * the fix candidates (PR2s): fix-like titles, explicit references to earlier changes, advisories.
 * Reverts are kept, marked ineligible, so they cost nothing downstream.
 */
export const discoverStage: StageDef<never, Candidate> = {
  name: 'discover',
  entry: import.meta.url,
  // Where the services are (never the token: its presence shows in which sources are enabled).
  config: (cfg) => ({ discover: cfg.discover, sources: cfg.sources }),
  input: null,
  output: CandidateSchema,
  async source({ repo, config, secrets }) {
    // Network sources add to this: their answers are cached by ETag, so a rerun costs almost nothing.
    const settings = sourceSettings(config, secrets);
    const enabled = (['github', 'trac'] as const).flatMap((tracker) =>
      availableSources(settings, { repo: repo.name, tracker, offline: config.discover.offline }).filter((s) => !s.reason).map((s) => s.source.name),
    );
    return fingerprint(repo.name, await revParse(repo.clone, config.discover.branch), [...new Set(enabled)], SOURCE_SETTINGS.map((k) => settings[k] ?? ''));
  },
  async run(_items, ctx) {
    const { repo, config, log } = ctx;
    const listed = await listChanges(repo.clone, config.discover);
    const prCount = listed.changes.filter((c) => c.number !== null).length;
    const commitCount = listed.changes.length - prCount;
    const listedText = !prCount ? `${commitCount} mainline commits (the history records no PRs)` : commitCount ? `${prCount} merged PRs and ${commitCount} direct mainline commits` : `${prCount} merged PRs`;
    log.info(`${listedText}; tracker: ${listed.tracker}`);
    const references = new Map<string, Reference[]>();
    const reportedAt = new Map<string, string>();
    const advisories = new Map<string, Advisory[]>();
    const numbers = new Map<string, number>();
    let complete = true;
    const settings = sourceSettings(config, ctx.secrets);
    for (const { source, reason } of availableSources(settings, { repo: repo.name, tracker: listed.tracker, offline: config.discover.offline })) {
      if (reason) {
        log.info(`source ${source.name} skipped: ${reason}`);
        continue;
      }
      const input: SourceInput = {
        settings, repo: repo.name, clone: repo.clone, branch: config.discover.branch, changes: listed.changes,
        cacheDir: sourceCacheDir(ctx.repoDir, source.name), log: log.child({ source: source.name }), tracker: listed.tracker, signal: ctx.signal,
      };
      let result;
      try {
        result = await source.discover(input);
      } catch (err) {
        // A service that is down or refuses us must not cost the git history's results.
        log.warn(`source ${source.name} failed, continuing without it: ${errorMessage(err)}`);
        complete = false;
        continue;
      }
      for (const [id, refs] of result.references) references.set(id, [...(references.get(id) ?? []), ...refs]);
      for (const [id, at] of result.reportedAt ?? []) if (!reportedAt.has(id) || at < reportedAt.get(id)!) reportedAt.set(id, at);
      for (const [id, advs] of result.advisories ?? []) advisories.set(id, [...(advisories.get(id) ?? []), ...advs]);
      for (const [id, n] of result.prNumbers ?? []) numbers.set(id, n);
      log.info(`source ${source.name}: ${[...result.references.values()].reduce((a, r) => a + r.length, 0)} references`);
    }

    const files = await mainlineFiles(repo.clone, config.discover.branch);
    // A release's new history: the mainline commits after the previous release's head (git checks it is a commit).
    const after = config.discover.after;
    const newer = after === null ? null : new Set((await git(repo.clone, ['rev-list', '--first-parent', `${notAnOption(after)}..${notAnOption(config.discover.branch)}`, '--'])).split('\n').filter(Boolean));
    const candidates: Candidate[] = [];
    const { since, until, windows } = config.discover;
    const within = (at: string, w: { since: string | null; until: string | null }): boolean => (!w.since || at >= w.since) && (!w.until || at < w.until);
    const inWindow = (at: string): boolean => within(at, { since, until }) && (!windows.length || windows.some((w) => within(at, w)));
    for (const change of listed.changes) {
      if (!inWindow(new Date(change.mergedAt).toISOString())) continue;
      if (newer !== null && !newer.has(change.mergeSha)) continue;
      const pr2 = numbers.has(change.id) ? { ...change, number: numbers.get(change.id)! } : change;
      const refs = references.get(change.id) ?? [];
      const advs = advisories.get(change.id) ?? [];
      const signals: Candidate['signals'] = [];
      if (hasFixKeywords(pr2.title)) signals.push('fix_keywords');
      if (refs.some((r) => r.target !== null && r.kind !== 'revert')) signals.push('explicit_reference');
      if (advs.length) signals.push('advisory');
      const revert = isRevert(pr2);
      if (revert) signals.push('revert');
      if (!signals.length) continue;
      const target = refs.find((r) => r.kind === 'revert') ?? refs[0];
      // A fix without a test can never be graded: say so now and spend no blame on it.
      const testless = !(files.get(change.mergeSha) ?? []).some((f) => isTestFile(pathShown(f)));
      candidates.push({
        repo: repo.name,
        tracker: listed.tracker,
        pr2,
        references: refs,
        signals,
        reportedAt: reportedAt.get(change.id) ?? null,
        advisories: advs,
        duplicates: [],
        excluded: revert
          ? { reason: 'ineligible', detail: `revert${target?.target ? ` of ${target.target}` : ''}: a revert is not an edge-case fix`, stage: 'discover' }
          : testless
            ? { reason: 'pr2_no_tests', detail: `${changeLabel(pr2)} touched no test file`, stage: 'discover' }
            : null,
      });
    }
    const kept = await collapseDuplicates(repo.clone, candidates);
    return {
      items: kept,
      complete,
      stats: {
        changes: listed.changes.length,
        candidates: kept.length,
        duplicates: candidates.length - kept.length,
        reverts: candidates.filter((c) => c.excluded?.reason === 'ineligible').length,
        without_tests: candidates.filter((c) => c.excluded?.reason === 'pr2_no_tests').length,
        with_reference: candidates.filter((c) => c.signals.includes('explicit_reference')).length,
        advisories: candidates.filter((c) => c.advisories.length).length,
      },
    };
  },
};

/** Candidates with the same patch-id are one change applied twice (a cherry-pick): keep the first. */
async function collapseDuplicates(clone: string, candidates: Candidate[]): Promise<Candidate[]> {
  const live = candidates.filter((c) => !c.excluded);
  const ids = await patchIds(clone, live.map((c) => c.pr2.mergeSha));
  const first = new Map<string, Candidate>();
  const drop = new Set<Candidate>();
  for (const c of live) {
    const id = ids.get(c.pr2.mergeSha);
    if (!id) continue;
    const original = first.get(id);
    if (original) {
      original.duplicates.push(c.pr2.id);
      drop.add(c);
    } else first.set(id, c);
  }
  return candidates.filter((c) => !drop.has(c));
}
