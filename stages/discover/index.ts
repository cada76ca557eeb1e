import { join } from 'node:path';
import { fingerprint } from '../../pipeline/fingerprint.ts';
import { revParse } from '../../pipeline/git.ts';
import type { StageDef } from '../../pipeline/stage.ts';
import { CandidateSchema, type Advisory, type Candidate, type Reference } from './schema.ts';
import { hasFixKeywords, isRevert } from './sources/git/find-references.ts';
import { listChanges } from './sources/git/index.ts';
import { SOURCES } from './sources/registry.ts';
import type { SourceInput } from './sources/types.ts';

/** Where a source keeps its HTTP cache: data/<repo>/http-cache/<source>/ (outlives stage reruns). */
export function sourceCacheDir(repoDir: string, source: string): string {
  return join(repoDir, 'http-cache', source);
}

/**
 * discover: list the merged changes of a local clone (PRs, or commits for histories without PRs),
 * let every available source annotate them (message references, GitHub, Trac, advisories), and keep
 * the fix candidates (PR2s): fix-like titles, explicit references to earlier changes, advisories.
 * Reverts are kept, marked ineligible, so they cost nothing downstream.
 */
export const discoverStage: StageDef<never, Candidate> = {
  name: 'discover',
  code: ['stages/discover', 'pipeline/chain.ts', 'pipeline/git.ts'],
  config: (cfg) => cfg.discover,
  input: null,
  output: CandidateSchema,
  async source({ repo, config }) {
    // Network sources add to this: their answers are cached by ETag, so a rerun costs almost nothing.
    const enabled = [...SOURCES.values()].filter((s) => s.available(process.env, { repo: repo.name, tracker: 'github' }).ok).map((s) => s.name);
    return fingerprint(repo.name, await revParse(repo.clone, config.discover.branch), enabled);
  },
  async run(_items, ctx) {
    const { repo, config, log } = ctx;
    const listed = await listChanges(repo.clone, config.discover);
    log.info(`${listed.changes.length} ${listed.changes[0]?.number === null ? 'mainline commits (the history records no PRs)' : 'merged PRs'}; tracker: ${listed.tracker}`);
    const references = new Map<string, Reference[]>();
    const reportedAt = new Map<string, string>();
    const advisories = new Map<string, Advisory[]>();
    const numbers = new Map<string, number>();
    for (const source of SOURCES.values()) {
      const avail = source.available(process.env, { repo: repo.name, tracker: listed.tracker });
      if (!avail.ok) {
        log.info(`source ${source.name} skipped: ${avail.reason}`);
        continue;
      }
      const input: SourceInput = {
        repo: repo.name, clone: repo.clone, branch: config.discover.branch, changes: listed.changes,
        cacheDir: sourceCacheDir(ctx.repoDir, source.name), log: log.child({ source: source.name }), tracker: listed.tracker, signal: ctx.signal,
      };
      const result = await source.discover(input);
      for (const [id, refs] of result.references) references.set(id, [...(references.get(id) ?? []), ...refs]);
      for (const [id, at] of result.reportedAt ?? []) if (!reportedAt.has(id) || at < reportedAt.get(id)!) reportedAt.set(id, at);
      for (const [id, advs] of result.advisories ?? []) advisories.set(id, [...(advisories.get(id) ?? []), ...advs]);
      for (const [id, n] of result.prNumbers ?? []) numbers.set(id, n);
      log.info(`source ${source.name}: ${[...result.references.values()].reduce((a, r) => a + r.length, 0)} references`);
    }

    const candidates: Candidate[] = [];
    for (const change of listed.changes) {
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
      candidates.push({
        repo: repo.name,
        pr2,
        references: refs,
        signals,
        reportedAt: reportedAt.get(change.id) ?? null,
        advisories: advs,
        excluded: revert
          ? { reason: 'ineligible', detail: `revert${target?.target ? ` of ${target.target}` : ''}: a revert is not an edge-case fix`, stage: 'discover' }
          : null,
      });
    }
    return {
      items: candidates,
      stats: {
        changes: listed.changes.length,
        candidates: candidates.length,
        reverts: candidates.filter((c) => c.excluded).length,
        with_reference: candidates.filter((c) => c.signals.includes('explicit_reference')).length,
        advisories: candidates.filter((c) => c.advisories.length).length,
      },
    };
  },
};
