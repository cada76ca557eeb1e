import { join } from 'node:path';
import type { PullRequest } from '../../foundation/model/change.ts';
import { ForesightError } from '../../foundation/errors.ts';
import { assertGitRepo, git } from '../../foundation/git.ts';
import type { Logger } from '../../foundation/log.ts';
import type { Advisory } from '../../foundation/model/candidate.ts';
import { commitToChange, prefixLookup } from '../../history/changes.ts';
import { HttpCache } from '../../http/fetch-cache.ts';
import type { RetryOptions } from '../../http/retry.ts';
import type { Source, SourceInput, SourceResult, SourceSettings } from '../types.ts';
import { reviewedFolder, scanAdvisoryDb, type ScanStats } from './local-db.ts';
import { queryOsvPackage } from './osv-api.ts';
import { firstPublished, fixPointers, mergeAdvisories, parsePackage, toAdvisory, type OsvRecord, type PackageRef } from './osv.ts';

export { reviewedFolder, scanAdvisoryDb } from './local-db.ts';
export { queryOsvPackage } from './osv-api.ts';
export { firstPublished, fixPointers, mergeAdvisories, OsvRecordSchema, parsePackage, type OsvRecord, type PackageRef } from './osv.ts';

export interface AdvisorySourceOptions {
  /** FORESIGHT_ADVISORY_* / FORESIGHT_OSV_URL (default: the run's settings, SourceInput.settings). */
  settings?: SourceSettings;
  /** Advisory files read at once from a local database. Default 32. */
  concurrency?: number;
  /** Retry/timeout settings and an injectable fetch (tests). */
  http?: Omit<RetryOptions, 'log' | 'signal'>;
}

interface Settings {
  db: string | null;
  osv: string | null;
  pkg: PackageRef | null;
}

/** Which advisory records can be read here, or why none can. */
export function advisorySettings(env: SourceSettings): { ok: true; settings: Settings; notes: string[] } | { ok: false; reason: string } {
  const dbRaw = env.FORESIGHT_ADVISORY_DB?.trim() || null;
  const osvRaw = env.FORESIGHT_OSV_URL?.trim() || null;
  const pkgRaw = env.FORESIGHT_ADVISORY_PACKAGE?.trim() || null;
  const pkg = parsePackage(pkgRaw ?? undefined);
  if (pkgRaw && !pkg) return { ok: false, reason: `FORESIGHT_ADVISORY_PACKAGE=${pkgRaw} is not Ecosystem:name (e.g. PyPI:django)` };
  if (!dbRaw && !osvRaw) {
    return { ok: false, reason: 'neither FORESIGHT_ADVISORY_DB (a checkout of github/advisory-database) nor FORESIGHT_OSV_URL (e.g. https://api.osv.dev) is set' };
  }
  const notes: string[] = [];
  let db: string | null = null;
  if (dbRaw) {
    db = reviewedFolder(dbRaw);
    if (!db) return { ok: false, reason: `FORESIGHT_ADVISORY_DB=${dbRaw} holds no advisories/github-reviewed folder (a checkout of github/advisory-database)` };
  }
  let osv: string | null = null;
  if (osvRaw) {
    try {
      const u = new URL(osvRaw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      return { ok: false, reason: `FORESIGHT_OSV_URL=${osvRaw} is not an http(s) URL` };
    }
    if (pkg) osv = osvRaw.replace(/\/+$/, '');
    else if (!db) {
      return {
        ok: false,
        reason:
          'FORESIGHT_OSV_URL is set but FORESIGHT_ADVISORY_PACKAGE is not: the OSV API is queried by package (Ecosystem:name, e.g. PyPI:django for django/django), and foresight does not guess which package a repository publishes',
      };
    } else notes.push('FORESIGHT_OSV_URL ignored: the OSV API needs FORESIGHT_ADVISORY_PACKAGE (Ecosystem:name)');
  }
  return { ok: true, settings: { db, osv, pkg }, notes };
}

/** Full commit message subject without a release-branch prefix ("[4.2.x] Fixed CVE-..." -> "Fixed CVE-..."). */
const bareSubject = (s: string) => s.replace(/^\[[\w.]+\]\s*/, '').trim();

/**
 * Fix commits that are not on the mined history (backports on release branches, cherry-picks): read from the
 * clone, mapped to the mainline change they came from via "Backport of <sha> from main" / "(cherry picked from
 * commit <sha>)", else via an identical subject. Returns sha -> change id.
 */
async function resolveOffHistory(
  clone: string,
  shas: readonly string[],
  resolve: (sha: string) => string | null,
  changes: readonly PullRequest[],
  log: Logger,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!shas.length) return out;
  try {
    await assertGitRepo(clone);
  } catch {
    log.debug(`advisory: ${shas.length} fix commits are not in the history and ${clone} is not a clone to look them up in`);
    return out;
  }
  const byTitle = new Map<string, string | null>();
  for (const c of changes) {
    const t = bareSubject(c.title);
    byTitle.set(t, byTitle.has(t) ? null : c.id); // ambiguous titles resolve to nothing
  }
  await Promise.all(
    shas.map(async (sha) => {
      let msg: string;
      try {
        msg = await git(clone, ['show', '-s', '--format=%B', '--end-of-options', sha]); // the sha comes from an advisory record
      } catch {
        return; // not in this clone (another fork, or a branch not fetched)
      }
      for (const m of msg.matchAll(/(?:Backport of|cherry picked from commit)\s+([0-9a-f]{7,40})/gi)) {
        const id = resolve(m[1]!.toLowerCase());
        if (id) {
          out.set(sha, id);
          return;
        }
      }
      const id = byTitle.get(bareSubject(msg.split('\n')[0] ?? ''));
      if (id) out.set(sha, id);
    }),
  );
  return out;
}

/**
 * Security advisories whose fix is a change of the history: records of the GitHub advisory database
 * (a local checkout, FORESIGHT_ADVISORY_DB) and/or the OSV API (FORESIGHT_OSV_URL, queried by
 * FORESIGHT_ADVISORY_PACKAGE). A record's fix commits (GIT ranges' `fixed` events, FIX/WEB references
 * to github.com/<owner>/<name>/commit/<sha>) and PRs (/pull/<n>) are mapped to the changes; fix commits
 * only on release branches are traced back to their mainline change through the clone. Each fixing
 * change gets the advisory and a report time (the earliest publication). No references: which change
 * introduced the vulnerability is left to SZZ (GIT `introduced` events are only logged, as evidence).
 */
export function createAdvisorySource(opts: AdvisorySourceOptions = {}): Source {
  return {
    name: 'advisory',

    available(e) {
      const s = advisorySettings(e);
      return s.ok ? { ok: true } : { ok: false, reason: s.reason };
    },

    async discover(input: SourceInput): Promise<SourceResult> {
      const { changes, log, repo } = input;
      const s = advisorySettings(opts.settings ?? input.settings);
      if (!s.ok) throw new ForesightError(`the advisory source cannot run: ${s.reason}`, { remedy: 'set FORESIGHT_ADVISORY_DB or FORESIGHT_OSV_URL with FORESIGHT_ADVISORY_PACKAGE, or leave the advisory source out' });
      for (const n of s.notes) log.info(n);
      const { db, osv, pkg } = s.settings;

      // 1. Records, deduplicated by id (the newest `modified` wins).
      const records = new Map<string, OsvRecord>();
      const keep = (r: OsvRecord) => {
        const prev = records.get(r.id);
        if (!prev || (r.modified ?? '') > (prev.modified ?? '')) records.set(r.id, r);
      };
      const stats: ScanStats = { files: 0, read: 0, bad: 0 };
      if (db) {
        for await (const r of scanAdvisoryDb(db, { repo, needles: pkg ? [`"${pkg.name}"`] : [], log, concurrency: opts.concurrency, stats, signal: input.signal })) keep(r);
        log.info(`advisory database: ${stats.files} reviewed advisories scanned, ${stats.read} parsed, ${stats.bad} unreadable`);
      }
      if (osv && pkg) {
        const cache = new HttpCache({ dir: join(input.cacheDir, 'http'), log, signal: input.signal, userAgent: 'foresight (advisory reader)', ...opts.http });
        let n = 0;
        for await (const r of queryOsvPackage(pkg, { baseUrl: osv, cache, log, retry: opts.http, signal: input.signal })) {
          keep(r);
          n++;
        }
        log.info(`OSV: ${n} records for ${pkg.ecosystem}:${pkg.name}`);
      }

      // 2. Their fixes, mapped onto the changes.
      const byCommit = commitToChange(changes);
      const sorted = [...byCommit.keys()].sort();
      const resolveSha = (raw: string): string | null => {
        const sha = prefixLookup(sorted, raw.toLowerCase());
        return sha ? byCommit.get(sha) ?? null : null;
      };
      const byNumber = new Map<number, string>();
      for (const c of changes) if (c.number !== null) byNumber.set(c.number, c.id);

      const pointers = [...records.values()]
        .filter((r) => !r.withdrawn)
        .map((r) => ({ rec: r, ptr: fixPointers(r, repo, pkg) }))
        // With a package configured, another package's advisory that merely links one of our commits is not ours.
        .filter(({ ptr }) => ptr.mentionsRepo && (!pkg || ptr.matchesPackage || ptr.gitRange));
      const offHistory = [...new Set(pointers.flatMap(({ ptr }) => ptr.fixShas.filter((x) => !resolveSha(x))))];
      const traced = await resolveOffHistory(input.clone, offHistory, resolveSha, changes, log);

      const found = new Map<string, Advisory[]>();
      const reportedAt = new Map<string, string>();
      let unmapped = 0;
      for (const { rec, ptr } of pointers) {
        const ids = new Set<string>();
        for (const x of ptr.fixShas) {
          const id = resolveSha(x) ?? traced.get(x);
          if (id) ids.add(id);
        }
        for (const n of ptr.prs) {
          const id = byNumber.get(n);
          if (id) ids.add(id);
        }
        if (!ids.size) {
          unmapped++;
          log.debug(`advisory ${rec.id}: none of its fixes (${[...ptr.fixShas.map((x) => x.slice(0, 10)), ...ptr.prs.map((n) => `#${n}`)].join(', ') || 'none named'}) is a change of the history`);
          continue;
        }
        const intro = ptr.introduced.map((x) => resolveSha(x)).filter((x): x is string => x !== null);
        if (intro.length) log.debug(`advisory ${rec.id}: GIT range introduced in ${intro.join(', ')} (evidence only; SZZ attributes)`);
        const adv = toAdvisory(rec);
        const at = firstPublished(rec);
        for (const id of ids) {
          found.set(id, [...(found.get(id) ?? []), adv]);
          if (at && (!reportedAt.has(id) || at < reportedAt.get(id)!)) reportedAt.set(id, at);
        }
      }
      const advisories = new Map<string, Advisory[]>();
      for (const [id, list] of found) advisories.set(id, mergeAdvisories(list).sort((a, b) => (a.id < b.id ? -1 : 1)));
      log.info(
        `advisories: ${pointers.length} concern ${repo}; ${pointers.length - unmapped} map to ${advisories.size} changes` +
          (traced.size ? ` (${traced.size} fix commits traced from release branches)` : '') +
          (unmapped ? `; ${unmapped} name no change of the history` : ''),
      );
      return { references: new Map(), reportedAt, advisories };
    },
  };
}

/** The advisory source, configured from the environment. */
export const advisorySource: Source = createAdvisorySource();
