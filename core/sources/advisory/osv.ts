import { z } from 'zod';
import type { Advisory } from '../../foundation/model/candidate.ts';

/**
 * The parts of an OSV record (https://ossf.github.io/osv-schema/) foresight reads. The GitHub advisory
 * database stores its advisories in this format, and the OSV API answers with it.
 */
export const OsvRecordSchema = z.object({
  id: z.string().min(1),
  aliases: z.array(z.string()).nullish(),
  summary: z.string().nullish(),
  details: z.string().nullish(),
  published: z.string().nullish(),
  modified: z.string().nullish(),
  withdrawn: z.string().nullish(),
  affected: z
    .array(
      z.object({
        package: z.object({ ecosystem: z.string().nullish(), name: z.string().nullish(), purl: z.string().nullish() }).nullish(),
        ranges: z
          .array(
            z.object({
              type: z.string(),
              repo: z.string().nullish(),
              events: z.array(z.record(z.string(), z.string())).nullish(),
            }),
          )
          .nullish(),
      }),
    )
    .nullish(),
  references: z.array(z.object({ type: z.string().nullish(), url: z.string() })).nullish(),
  database_specific: z.record(z.string(), z.unknown()).nullish(),
});
export type OsvRecord = z.infer<typeof OsvRecordSchema>;

/** An ecosystem package, as FORESIGHT_ADVISORY_PACKAGE names it ("PyPI:django", "npm:left-pad"). */
export interface PackageRef {
  ecosystem: string;
  name: string;
}

export function parsePackage(raw: string | undefined): PackageRef | null {
  const v = raw?.trim();
  if (!v) return null;
  const i = v.indexOf(':');
  if (i <= 0 || i === v.length - 1) return null;
  return { ecosystem: v.slice(0, i).trim(), name: v.slice(i + 1).trim() };
}

/** Package names compare case-insensitively; PyPI's also treat runs of "-", "_", "." alike (PEP 503). */
export function samePackage(a: PackageRef, eco: string | null | undefined, name: string | null | undefined): boolean {
  if (!eco || !name || a.ecosystem.toLowerCase() !== eco.toLowerCase()) return false;
  const norm = (s: string) => (eco.toLowerCase() === 'pypi' ? s.toLowerCase().replace(/[-_.]+/g, '-') : s.toLowerCase());
  return norm(a.name) === norm(name);
}

/** "https://github.com/Owner/Name.git/" -> "owner/name", or null for anything else. */
export function githubRepoOf(url: string): string | null {
  const m = /^(?:https?:\/\/|git:\/\/|git@)(?:www\.)?github\.com[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/i.exec(url.trim());
  return m ? `${m[1]}/${m[2]}`.toLowerCase() : null;
}

export interface FixPointers {
  /** Fix commits in this repository: GIT ranges' `fixed` events and FIX/WEB references to /commit/<sha>. */
  fixShas: string[];
  /** PR numbers of FIX/WEB references to /pull/<n>. */
  prs: number[];
  /** GIT ranges' `introduced` events in this repository (evidence only). */
  introduced: string[];
  /** Whether anything in the record points at this repository. */
  mentionsRepo: boolean;
  /** Whether a GIT range names this repository (the record is about its code, whatever the package). */
  gitRange: boolean;
  /** Whether the record names the configured package among its affected packages. */
  matchesPackage: boolean;
}

const COMMIT_URL = /^https?:\/\/(?:www\.)?github\.com\/([\w.-]+)\/([\w.-]+)\/commits?\/([0-9a-f]{7,40})\b/i;
const PULL_URL = /^https?:\/\/(?:www\.)?github\.com\/([\w.-]+)\/([\w.-]+)\/pull\/(\d+)(?:\/commits\/([0-9a-f]{7,40})\b)?/i;
const HEX = /^[0-9a-f]{7,40}$/i;

/** What an advisory says about fixes in `repo` (owner/name). Other repositories' commits and PRs are ignored. */
export function fixPointers(rec: OsvRecord, repo: string, pkg: PackageRef | null): FixPointers {
  const want = repo.toLowerCase();
  const fix = new Set<string>();
  const prs = new Set<number>();
  const introduced = new Set<string>();
  let mentionsRepo = false;
  let gitRange = false;
  let matchesPackage = false;
  for (const a of rec.affected ?? []) {
    if (pkg && samePackage(pkg, a.package?.ecosystem, a.package?.name)) matchesPackage = true;
    for (const r of a.ranges ?? []) {
      if (r.type.toUpperCase() !== 'GIT' || !r.repo || githubRepoOf(r.repo) !== want) continue;
      mentionsRepo = gitRange = true;
      for (const ev of r.events ?? []) {
        if (ev.fixed && HEX.test(ev.fixed)) fix.add(ev.fixed.toLowerCase());
        if (ev.introduced && HEX.test(ev.introduced)) introduced.add(ev.introduced.toLowerCase());
      }
    }
  }
  for (const ref of rec.references ?? []) {
    const type = (ref.type ?? '').toUpperCase();
    if (type !== 'FIX' && type !== 'WEB') continue;
    const c = COMMIT_URL.exec(ref.url);
    if (c && `${c[1]}/${c[2]}`.toLowerCase() === want) {
      mentionsRepo = true;
      fix.add(c[3]!.toLowerCase());
      continue;
    }
    const p = PULL_URL.exec(ref.url);
    if (p && `${p[1]}/${p[2]}`.toLowerCase() === want) {
      mentionsRepo = true;
      prs.add(Number(p[3]));
      if (p[4]) fix.add(p[4].toLowerCase());
    }
  }
  return { fixShas: [...fix], prs: [...prs], introduced: [...introduced], mentionsRepo, gitRange, matchesPackage };
}

function iso(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const t = Date.parse(raw);
  return Number.isNaN(t) ? null : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * When the advisory was first made public: its `published` time, or GitHub's `nvd_published_at` when
 * that is earlier (GitHub's own `published` for old CVEs is the day GitHub imported them, years later).
 */
export function firstPublished(rec: OsvRecord): string | null {
  const dates = [iso(rec.published), iso(typeof rec.database_specific?.nvd_published_at === 'string' ? rec.database_specific.nvd_published_at : null)].filter((d): d is string => d !== null);
  return dates.sort()[0] ?? null;
}

export function advisoryUrl(id: string): string {
  return /^GHSA-/i.test(id) ? `https://github.com/advisories/${id}` : `https://osv.dev/vulnerability/${id}`;
}

export function toAdvisory(rec: OsvRecord): Advisory {
  const summary = rec.summary?.trim() || (rec.details ?? '').trim().split('\n')[0]!.slice(0, 300);
  return { id: rec.id, aliases: [...new Set(rec.aliases ?? [])].filter((a) => a !== rec.id), summary, url: advisoryUrl(rec.id), published: iso(rec.published) };
}

/**
 * Merge advisories that are one vulnerability under several ids (GHSA-..., PYSEC-..., CVE-... naming each
 * other as aliases). The GHSA record leads; aliases are pooled.
 */
export function mergeAdvisories(list: readonly Advisory[]): Advisory[] {
  const groups: Advisory[][] = [];
  for (const a of list) {
    const names = new Set([a.id, ...a.aliases]);
    const hits = groups.filter((g) => g.some((b) => names.has(b.id) || b.aliases.some((x) => names.has(x))));
    const merged = [...hits.flat(), a];
    for (const h of hits) groups.splice(groups.indexOf(h), 1);
    groups.push(merged);
  }
  return groups.map((g) => {
    const lead = g.find((a) => /^GHSA-/i.test(a.id)) ?? g[0]!;
    const aliases = [...new Set(g.flatMap((a) => [a.id, ...a.aliases]))].filter((x) => x !== lead.id).sort();
    return { ...lead, aliases, summary: lead.summary || g.find((a) => a.summary)?.summary || '' };
  });
}
