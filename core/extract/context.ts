import type { PullRequest } from '../foundation/model/change.ts';
import { errorMessage } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';
import { availableSources, sourceCacheDir } from '../sources/registry.ts';
import type { Source, SourceInput, SourceSettings } from '../sources/types.ts';
import type { ExtractedChain } from '../foundation/model/extracted.ts';

type Discussion = Pick<ExtractedChain, 'pr_comments' | 'linked_issues'>;

export interface ContextCollector {
  /** Discussion around PR1 (introducer) and PR2 (fixer); `complete` is false when a source failed. */
  collect(pr1: PullRequest, pr2: PullRequest): Promise<Discussion & { complete: boolean }>;
}

/** Asks every available source that has discussion (GitHub, Trac) about both PRs of a chain. */
export function contextCollector(opts: {
  repo: string;
  clone: string;
  repoDir: string;
  tracker: 'github' | 'trac';
  offline: boolean;
  log: Logger;
  /** Where the services are and the token (sourceSettings of the run's Config and Secrets). */
  settings: SourceSettings;
}): ContextCollector {
  const sources: Source[] = availableSources(opts.settings, opts)
    .filter((s) => !s.reason && s.source.context)
    .map((s) => s.source);
  const inputFor = (source: Source): SourceInput => ({
    settings: opts.settings, repo: opts.repo, clone: opts.clone, branch: 'HEAD', changes: [], cacheDir: sourceCacheDir(opts.repoDir, source.name),
    log: opts.log.child({ source: source.name }), tracker: opts.tracker,
  });
  return {
    async collect(pr1, pr2) {
      if (!sources.length) return { pr_comments: null, linked_issues: null, complete: true };
      const out: Discussion & { complete: boolean } = { pr_comments: [], linked_issues: [], complete: true };
      for (const source of sources) {
        for (const [role, change] of [['introducer', pr1], ['fixer', pr2]] as const) {
          try {
            const ctx = await source.context!(inputFor(source), change);
            out.pr_comments!.push(...ctx.comments.map((c) => ({ ...c, role })));
            out.linked_issues!.push(...ctx.linkedIssues.map((i) => ({ ...i, role })));
          } catch (err) {
            opts.log.warn(`source ${source.name}: no discussion for ${change.id}: ${errorMessage(err)}`);
            out.complete = false;
          }
        }
      }
      return out;
    },
  };
}
