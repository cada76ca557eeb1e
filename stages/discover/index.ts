import { fingerprint } from '../../pipeline/fingerprint.ts';
import { revParse } from '../../pipeline/git.ts';
import type { StageDef } from '../../pipeline/stage.ts';
import { CandidateSchema, type Candidate, type Reference } from './schema.ts';
import { hasFixKeywords, isRevert } from './sources/git/find-references.ts';
import { SOURCES } from './sources/registry.ts';

/**
 * discover: list the merged PRs of a local clone and keep the fix candidates (PR2s): PRs whose
 * title reads as a fix or whose message points to an earlier PR. Reverts are kept, marked
 * ineligible, so they cost nothing downstream.
 */
export const discoverStage: StageDef<never, Candidate> = {
  name: 'discover',
  code: ['stages/discover', 'pipeline/chain.ts', 'pipeline/git.ts'],
  config: (cfg) => cfg.discover,
  input: null,
  output: CandidateSchema,
  async source({ repo, config }) {
    return fingerprint(repo.name, await revParse(repo.clone, config.discover.branch));
  },
  async run(_items, ctx) {
    const { repo, config, log } = ctx;
    const prsByNumber = new Map<number, Candidate['pr2']>();
    const references = new Map<number, Reference[]>();
    for (const source of SOURCES.values()) {
      const avail = source.available(process.env);
      if (!avail.ok) {
        log.info(`source ${source.name} skipped: ${avail.reason}`);
        continue;
      }
      const result = await source.discover({ clone: repo.clone, branch: config.discover.branch, log });
      for (const pr of result.prs) if (!prsByNumber.has(pr.number)) prsByNumber.set(pr.number, pr);
      for (const [n, refs] of result.references) references.set(n, [...(references.get(n) ?? []), ...refs]);
      log.info(`source ${source.name}: ${result.prs.length} merged PRs`);
    }

    const candidates: Candidate[] = [];
    for (const pr of [...prsByNumber.values()].sort((a, b) => a.number - b.number)) {
      const refs = references.get(pr.number) ?? [];
      const signals: Candidate['signals'] = [];
      if (hasFixKeywords(pr.title)) signals.push('fix_keywords');
      if (refs.some((r) => r.pr !== null)) signals.push('explicit_reference');
      const revert = isRevert(pr);
      if (revert) signals.push('revert');
      if (!signals.length) continue;
      const target = refs.find((r) => r.kind === 'revert') ?? refs[0];
      candidates.push({
        repo: repo.name,
        pr2: pr,
        references: refs,
        signals,
        excluded: revert
          ? { reason: 'ineligible', detail: `revert${target?.pr ? ` of #${target.pr}` : ''}: a revert is not an edge-case fix`, stage: 'discover' }
          : null,
      });
    }
    return {
      items: candidates,
      stats: {
        merged_prs: prsByNumber.size,
        candidates: candidates.length,
        reverts: candidates.filter((c) => c.excluded).length,
      },
    };
  },
};
