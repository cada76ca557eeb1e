import type { PullRequest } from '../../../pipeline/chain.ts';
import type { Logger } from '../../../pipeline/log.ts';
import type { Reference } from '../schema.ts';

export interface SourceInput {
  clone: string;
  branch: string;
  log: Logger;
}

/** What one source knows about the repository's merged PRs. */
export interface SourceResult {
  prs: PullRequest[];
  /** References from a PR (by number) to earlier work. */
  references: Map<number, Reference[]>;
}

/** A discovery source (git history, GitHub, Trac, advisories): one narrow operation. */
export interface Source {
  readonly name: string;
  /** Whether this source can run here (e.g. a token is configured); a reason when not. */
  available(env: NodeJS.ProcessEnv): { ok: true } | { ok: false; reason: string };
  discover(input: SourceInput): Promise<SourceResult>;
}
