import { join } from 'node:path';
import { GraphqlResponseError } from '@octokit/graphql';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
// bottleneck is @octokit/plugin-throttling's own scheduler (a dependency of it): used to space GraphQL calls.
import Bottleneck from 'bottleneck';
import { ForesightError } from '../../foundation/errors.ts';
import type { Logger } from '../../foundation/log.ts';
import { cacheKey, conditionalHeaders, HttpCacheStore, responseEntry, type CacheEntry } from '../../http/cache-store.ts';
import { JsonDocuments } from '../../http/documents.ts';
import { sleep, withRetry } from '../../http/retry.ts';

export const DEFAULT_API_URL = 'https://api.github.com';

const GithubOctokit = Octokit.plugin(throttling);
export type GithubOctokit = InstanceType<typeof GithubOctokit>;

/** Where the API is and how to authenticate, from the environment. */
export interface GithubApi {
  /** REST base URL, no trailing slash; GraphQL is `<baseUrl>/graphql`. */
  baseUrl: string;
  token: string | undefined;
}

export function githubApi(env: Readonly<Record<string, string | undefined>>): GithubApi {
  return { baseUrl: (env.FORESIGHT_GITHUB_API_URL || DEFAULT_API_URL).replace(/\/+$/, ''), token: env.GITHUB_TOKEN || undefined };
}

/** A server on this machine (a test server): usable without a token. */
export function isLoopback(url: string | undefined): boolean {
  if (!url) return false;
  try {
    return ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}

export interface ClientOptions extends GithubApi {
  /** The on-disk cache: REST answers under http/, GraphQL pages under graphql/. */
  cacheDir: string;
  log: Logger;
  signal?: AbortSignal;
  /** Milliseconds per second of any wait (retry-after, rate-limit reset, 5xx backoff); tests shrink it. */
  secondMs?: number;
  /** Retries per request, for rate limits and for 5xx / network failures alike. */
  maxRetries?: number;
  /** Longest rate-limit wait honoured, in seconds (a primary limit resets within the hour). */
  maxWaitSec?: number;
  /** Minimum spacing of GraphQL requests (octokit's default, per GitHub's advice on POSTs: 1 s). */
  graphqlSpacingMs?: number;
}

export interface GithubClient {
  octokit: GithubOctokit;
  /** Cached GraphQL pages (POSTs are not HTTP-cacheable). */
  pages: JsonDocuments;
  stats: CacheStats;
  baseUrl: string;
  token: string | undefined;
}

// One spacer per spacing, shared by every client of the process (GitHub's advice is per user, not per client).
const spacers = new Map<number, Bottleneck.Group>();
function graphqlSpacer(minTime: number): Bottleneck.Group {
  let g = spacers.get(minTime);
  if (!g) spacers.set(minTime, (g = new Bottleneck.Group({ maxConcurrent: 1, minTime })));
  return g;
}

/** An Octokit with throttling (rate limits), retries (5xx, network), and the conditional-GET cache. */
export function createGithubClient(o: ClientOptions): GithubClient {
  const secondMs = o.secondMs ?? 1000;
  const maxRetries = o.maxRetries ?? 4;
  const maxWaitSec = o.maxWaitSec ?? 3700;
  const log = o.log;
  const onLimit = (kind: string) => (retryAfter: number, options: { method: string; url: string }, _octokit: unknown, retryCount: number): boolean => {
    const where = `${options.method} ${options.url}`;
    if (retryCount >= maxRetries || retryAfter > maxWaitSec) {
      log.warn(`GitHub ${kind} on ${where}: giving up after ${retryCount} retries (asked to wait ${retryAfter}s)`);
      return false;
    }
    log.warn(`GitHub ${kind} on ${where}: waiting ${retryAfter}s before retry ${retryCount + 1}/${maxRetries}`);
    return true;
  };
  const quiet = (): void => {};
  const octokit = new GithubOctokit({
    auth: o.token,
    baseUrl: o.baseUrl,
    userAgent: 'foresight',
    request: { signal: o.signal },
    // octokit's error lines are per failed attempt ("POST /graphql - 502 ..."): the outcome is reported
    // once, as a rate-limit warning or a ForesightError, so they go to the debug log.
    log: { debug: quiet, info: quiet, warn: (m: string) => log.warn(scrub(m, o.token)), error: (m: string) => log.debug(scrub(m, o.token)) },
    throttle: {
      onRateLimit: onLimit('rate limit'),
      onSecondaryRateLimit: onLimit('secondary rate limit'),
      retryAfterBaseValue: secondMs,
      write: graphqlSpacer(o.graphqlSpacingMs ?? 1000),
    },
  });
  installRetries(octokit, { maxRetries, secondMs, maxWaitSec, log, signal: o.signal });
  const stats: CacheStats = { fetched: 0, notModified: 0 };
  installHttpCache(octokit, new HttpCacheStore(join(o.cacheDir, 'http')), stats);
  const pages = new JsonDocuments(new HttpCacheStore(join(o.cacheDir, 'graphql')), `${o.baseUrl}/graphql`);
  return { octokit, pages, stats, baseUrl: o.baseUrl, token: o.token };
}

/** Answers never worth another attempt; rate limits (403/429) are the throttling plugin's, which waits them out itself. */
const DO_NOT_RETRY = [400, 401, 403, 404, 410, 422, 429, 451];

/**
 * 5xx answers and network failures (octokit reports those as status 500) retried, around the throttling
 * plugin and inside the cache hook (installed after it). The waits are @octokit/plugin-retry's, which this
 * replaces: 1 s, 4 s, 9 s, ... (the square of the retry), or the answer's Retry-After.
 */
function installRetries(octokit: Octokit, o: { maxRetries: number; secondMs: number; maxWaitSec: number; log: Logger; signal?: AbortSignal }): void {
  octokit.hook.wrap('request', (request, options) =>
    withRetry(
      async () => {
        const res = await request(options);
        // GitHub's transient GraphQL failure comes as a 200 with this error: a 500 in all but name.
        const first = (res.data as { errors?: Array<{ message?: string }> } | undefined)?.errors?.[0];
        if (first?.message && /Something went wrong while executing your query/.test(first.message)) {
          throw Object.assign(new Error(first.message), { status: 500, request: options, response: res });
        }
        return res;
      },
      {
        attempts: o.maxRetries + 1,
        backoff: (n) => n * n * 1000,
        retryable: (err) => {
          const status = statusOf(err);
          return (err as { request?: unknown }).request !== undefined && status !== undefined && status >= 400 && !DO_NOT_RETRY.includes(status);
        },
        maxRetryAfterMs: o.maxWaitSec * 1000,
        signal: o.signal,
        // Waits are in GitHub's seconds, each o.secondMs long (tests shrink them).
        sleep: (ms, signal) => sleep((ms / 1000) * o.secondMs, signal),
        onRetry: ({ error, attempt, delayMs }) =>
          o.log.debug(`GitHub answered ${statusOf(error)} to ${options.method} ${octokit.request.endpoint.parse(options).url}: retry ${attempt}/${o.maxRetries} in ${delayMs / 1000}s`),
      },
    ),
  );
}

export interface CacheStats {
  /** GETs answered with a full body (200). */
  fetched: number;
  /** GETs answered 304 Not Modified and served from the cache (free on GitHub's rate limit). */
  notModified: number;
}

/** The HTTP status of an octokit error, if any. */
export function statusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : undefined;
}

/** The cached answer and its body parsed back from JSON text; a body that is not JSON is a miss. */
function usable(entry: CacheEntry | null): { entry: CacheEntry; data: unknown } | null {
  if (!entry) return null;
  try {
    return { entry, data: JSON.parse(entry.body) as unknown };
  } catch {
    return null;
  }
}

/**
 * Conditional GETs through the shared HTTP cache store (core/http/cache-store.ts), as the outermost
 * `request` hook (so it sits around the throttling and retry plugins and before authentication is
 * added, which keeps the token out of keys and entries): a cached answer's validators go out as
 * If-None-Match / If-Modified-Since; a 304 (which @octokit/request throws) refreshes the entry and is
 * answered from it; a 200 carrying a validator replaces the entry, its data kept as JSON text.
 */
export function installHttpCache(octokit: Octokit, store: HttpCacheStore, stats: CacheStats): void {
  octokit.hook.wrap('request', async (request, options) => {
    if (options.method !== 'GET') return request(options);
    const key = cacheKey('GET', octokit.request.endpoint.parse(options).url, String(options.headers.accept ?? ''));
    const cached = usable(await store.read(key));
    // The hooks inside this one are bound to this very options object (before-after-hook ignores what is
    // passed to `request`), so the validators go onto it rather than onto a copy.
    options.headers = { ...options.headers, ...conditionalHeaders(cached?.entry ?? null) };
    try {
      const res = await request(options);
      stats.fetched++;
      const entry = responseEntry(res.url, res.status, res.headers, JSON.stringify(res.data));
      if (res.status === 200 && (entry.etag || entry.lastModified)) await store.write(key, entry);
      return res;
    } catch (err) {
      if (cached && statusOf(err) === 304) {
        stats.notModified++;
        const refreshed = await store.refresh(key, cached.entry, (err as { response?: { headers?: Record<string, string | number | undefined> } }).response?.headers ?? {});
        return { url: refreshed.url, status: refreshed.status, headers: { ...refreshed.headers }, data: cached.data };
      }
      throw err;
    }
  });
}

/** Replace the token wherever it might appear. */
export function scrub(text: string, token: string | undefined): string {
  return token && token.length >= 4 ? text.split(token).join('<GITHUB_TOKEN>') : text;
}

function repoNotFound(repo: string, cause: unknown): ForesightError {
  return new ForesightError(`GitHub has no repository ${repo}, or GITHUB_TOKEN cannot see it`, {
    remedy: `check that ${repo} is the clone's GitHub owner/name (pass --repo owner/name) and that the token can read it`,
    cause,
  });
}

/** A GitHub failure as a ForesightError (one line, no token); aborts and ForesightErrors pass through. */
export function githubError(err: unknown, repo: string, token: string | undefined): unknown {
  if (err instanceof ForesightError || (err instanceof Error && err.name === 'AbortError')) return err;
  if (err instanceof GraphqlResponseError) {
    if (err.errors?.some((e) => e.type === 'NOT_FOUND' && e.path?.[0] === 'repository')) return repoNotFound(repo, err);
    return new ForesightError(`GitHub GraphQL query failed: ${scrub(err.errors?.[0]?.message ?? err.message, token)}`, {
      remedy: 'rerun later (pages fetched so far are cached); if it persists, the query needs updating for the GitHub API',
      external: true,
      cause: err,
    });
  }
  const status = statusOf(err);
  if (status === undefined) return err;
  const req = (err as { request?: { method?: string; url?: string } }).request;
  const where = scrub(`${req?.method ?? 'GET'} ${req?.url ?? '(unknown URL)'}`, token);
  const said = scrub((err as Error).message ?? '', token).split('\n')[0]!.slice(0, 200);
  if (status === 401) {
    return new ForesightError('GitHub rejected GITHUB_TOKEN (401 Bad credentials)', {
      remedy: 'set GITHUB_TOKEN to a valid, unexpired token (read access to the repository is enough), or unset it to mine git history only',
      cause: err,
    });
  }
  if (status === 404 && req?.url?.endsWith('/graphql') !== true) return repoNotFound(repo, err);
  if ((status === 403 || status === 429) && /rate limit/i.test(said)) {
    return new ForesightError(`GitHub kept rate-limiting ${where} (${status}) after the allowed retries`, {
      remedy: 'wait for the limit to reset and rerun: answers so far are cached, so the rerun resumes cheaply',
      external: true,
      cause: err,
    });
  }
  if (status === 403) {
    return new ForesightError(`GitHub refused ${where} (403: ${said})`, { remedy: `check that GITHUB_TOKEN can read ${repo}`, cause: err });
  }
  if ((err as { response?: unknown }).response === undefined) {
    return new ForesightError(`Could not reach GitHub for ${where} (${said})`, {
      remedy: 'check the network and FORESIGHT_GITHUB_API_URL, then rerun (answers so far are cached)',
      external: true,
      cause: err,
    });
  }
  if (status < 500) {
    return new ForesightError(`GitHub answered ${status} to ${where} (${said})`, {
      remedy: 'check FORESIGHT_GITHUB_API_URL points at a GitHub API (https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise)',
      external: true,
      cause: err,
    });
  }
  return new ForesightError(`GitHub answered ${status} to ${where} after the allowed retries (${said})`, {
    remedy: 'GitHub is failing: rerun later (answers so far are cached)',
    external: true,
    cause: err,
  });
}
