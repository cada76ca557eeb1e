import type { PullRequest } from '../foundation/model/change.ts';
import type { Logger } from '../foundation/log.ts';
import type { Advisory, Comment, LinkedIssue, Reference } from '../foundation/model/candidate.ts';

/** The settings a source reads, by their documented names (see sourceSettings in registry.ts). */
export type SourceSettings = Readonly<Record<string, string | undefined>>;

export interface SourceInput {
  /** Where the services are and the GitHub token (built from Config and Secrets). */
  settings: SourceSettings;
  /** owner/name */
  repo: string;
  clone: string;
  branch: string;
  /** The merged changes the git history lists, oldest first (every source annotates these). */
  changes: readonly PullRequest[];
  /** A folder this source may use as its on-disk HTTP cache. */
  cacheDir: string;
  log: Logger;
  tracker: 'github' | 'trac';
  signal?: AbortSignal;
}

/** What a source adds to the changes, each keyed by change id (PullRequest.id). */
export interface SourceResult {
  /** References from a change to earlier work. */
  references: Map<string, Reference[]>;
  /** Earliest report (issue, ticket, advisory) of the defect a change fixes: ISO time. */
  reportedAt?: Map<string, string>;
  /** PR numbers of changes the history shows only as commits (GitHub's commit -> PR association). */
  prNumbers?: Map<string, number>;
  /** Advisories whose fix is the change: makes it a candidate. */
  advisories?: Map<string, Advisory[]>;
}

/** The human discussion around one change, for the pr_comments and linked_issues columns. */
export interface ChangeContext {
  comments: Comment[];
  linkedIssues: LinkedIssue[];
}

/** A discovery source (git messages, GitHub, Trac, advisories): narrow operations on the listed changes. */
export interface Source {
  readonly name: string;
  /** Whether this source can run here (e.g. a token is configured); a one-line reason when not. */
  available(settings: SourceSettings, input: Pick<SourceInput, 'repo' | 'tracker'>): { ok: true } | { ok: false; reason: string };
  discover(input: SourceInput): Promise<SourceResult>;
  /** Discussion around a change; sources without any omit it. */
  context?(input: SourceInput, change: PullRequest): Promise<ChangeContext>;
}
