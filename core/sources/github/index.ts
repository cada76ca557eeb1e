import type { PullRequest } from '../../foundation/model/change.ts';
import type { ChangeContext, Source, SourceInput, SourceSettings } from '../types.ts';
import { createGithubClient, githubApi, githubError, isLoopback, type ClientOptions, type GithubClient } from './client.ts';
import { fetchContext } from './context.ts';
import { linkPrs } from './link.ts';
import { listGithubPrs, type ListedPrs } from './list-prs.ts';

export const NO_TOKEN_REASON = 'GITHUB_TOKEN is not set: using git history only (set it to add GitHub PRs, issues and discussion)';
const REPO_NAME = /^[\w.-]+\/[\w.-]+$/;

export interface GithubSourceOptions {
  /** GITHUB_TOKEN / FORESIGHT_GITHUB_API_URL (default: the run's settings, SourceInput.settings). */
  settings?: SourceSettings;
  /** PRs per GraphQL page (100). */
  pageSize?: number;
  /** Items per REST page (100). */
  perPage?: number;
  /** Client tuning (tests shrink the waits). */
  client?: Pick<ClientOptions, 'secondMs' | 'maxRetries' | 'maxWaitSec' | 'graphqlSpacingMs'>;
}

/**
 * GitHub as a discovery source: merged PRs (GraphQL, cached per page) tied to the history's changes by
 * merge commit, giving cross-references between them, report times and PR numbers; and, per change,
 * the PR discussion and linked issues (REST, cached by ETag).
 */
export function createGithubSource(opts: GithubSourceOptions = {}): Source {
  // The PR list of a run, shared by discover and the context calls that follow it.
  const listed = new Map<string, Promise<ListedPrs>>();

  const open = (input: SourceInput): { client: GithubClient; key: string } => {
    const api = githubApi(opts.settings ?? input.settings);
    const client = createGithubClient({ ...api, ...opts.client, cacheDir: input.cacheDir, log: input.log, signal: input.signal });
    return { client, key: `${api.baseUrl}\0${input.repo}\0${input.cacheDir}` };
  };
  const list = (client: GithubClient, input: SourceInput): Promise<ListedPrs> =>
    listGithubPrs(client, input.repo, { log: input.log, pageSize: opts.pageSize });

  return {
    name: 'github',

    available(settings, { repo }) {
      const s = opts.settings ?? settings;
      if (!s.GITHUB_TOKEN && !isLoopback(s.FORESIGHT_GITHUB_API_URL)) return { ok: false, reason: NO_TOKEN_REASON };
      if (!REPO_NAME.test(repo)) return { ok: false, reason: `${repo} is not a GitHub owner/name: using git history only` };
      return { ok: true };
    },

    async discover(input) {
      const { client, key } = open(input);
      try {
        const run = list(client, input);
        listed.set(key, run);
        run.catch(() => listed.delete(key));
        const { prs, pages, requests } = await run;
        const linked = linkPrs(input.changes, prs);
        input.log.info(
          `GitHub: ${prs.length} merged PRs (${pages} pages, ${requests} fetched, ${pages - requests} from cache), ` +
            `${linked.changeOf.size} matched to the history's ${input.changes.length} changes`,
        );
        return { references: linked.references, reportedAt: linked.reportedAt, prNumbers: linked.prNumbers };
      } catch (err) {
        throw githubError(err, input.repo, client.token);
      }
    },

    async context(input: SourceInput, change: PullRequest): Promise<ChangeContext> {
      const { client, key } = open(input);
      try {
        let run = listed.get(key);
        if (!run) {
          run = list(client, input);
          listed.set(key, run);
          run.catch(() => listed.delete(key));
        }
        const { prs } = await run;
        const number = change.number ?? linkPrs([change], prs).prNumbers.get(change.id) ?? null;
        if (number === null) return { comments: [], linkedIssues: [] };
        const pr = prs.find((p) => p.number === number);
        return await fetchContext(client, input.repo, number, pr, change.body, {
          log: input.log, tracker: input.tracker, perPage: opts.perPage, knownPrs: new Set(prs.map((p) => p.number)),
        });
      } catch (err) {
        throw githubError(err, input.repo, client.token);
      }
    },
  };
}

/** The source the registry lists: reads GITHUB_TOKEN and FORESIGHT_GITHUB_API_URL from the run's settings. */
export const githubSource: Source = createGithubSource();
