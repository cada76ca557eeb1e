import { ForesightError } from '../../foundation/errors.ts';
import type { Logger } from '../../foundation/log.ts';
import type { HttpCache } from '../../http/fetch-cache.ts';
import { fetchWithRetry, type RetryOptions } from '../../http/retry.ts';
import { OsvRecordSchema, type OsvRecord, type PackageRef } from './osv.ts';

export interface OsvApiOptions {
  /** e.g. https://api.osv.dev */
  baseUrl: string;
  /** GET /v1/vulns/{id} goes through this cache (ETag revalidation). */
  cache: HttpCache;
  log: Logger;
  retry?: Omit<RetryOptions, 'log' | 'signal'>;
  signal?: AbortSignal;
  /** Stop after this many pages (a server repeating tokens must not loop forever). */
  maxPages?: number;
}

/**
 * Every OSV record of a package: POST /v1/query {package: {name, ecosystem}}, following
 * `next_page_token` (sent back as `page_token`) until the answer has none. A listed record that carries
 * neither `affected` nor `references` (a compact listing) is completed with GET /v1/vulns/{id}.
 * Records that fail the schema are logged and skipped.
 */
export async function* queryOsvPackage(pkg: PackageRef, opts: OsvApiOptions): AsyncGenerator<OsvRecord> {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const url = `${base}/v1/query`;
  const seen = new Set<string>();
  let token: string | undefined;
  for (let page = 1; ; page++) {
    if (page > (opts.maxPages ?? 200)) {
      opts.log.warn(`OSV: stopped after ${page - 1} pages for ${pkg.ecosystem}:${pkg.name}`);
      return;
    }
    const payload = { package: { name: pkg.name, ecosystem: pkg.ecosystem }, ...(token ? { page_token: token } : {}) };
    const { res, body } = await fetchWithRetry(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(payload) },
      { ...opts.retry, log: opts.log, signal: opts.signal },
    );
    if (res.status !== 200) {
      throw new ForesightError(`OSV answered HTTP ${res.status} to ${url} for ${pkg.ecosystem}:${pkg.name}: ${body.slice(0, 200)}`, {
        remedy: 'check FORESIGHT_OSV_URL (e.g. https://api.osv.dev) and FORESIGHT_ADVISORY_PACKAGE (Ecosystem:name, e.g. PyPI:django)',
        external: true,
      });
    }
    let json: { vulns?: unknown[]; next_page_token?: string };
    try {
      json = JSON.parse(body) as typeof json;
    } catch (err) {
      throw new ForesightError(`OSV answered ${url} with something other than JSON`, { remedy: 'check FORESIGHT_OSV_URL', external: true, cause: err });
    }
    for (const raw of json.vulns ?? []) {
      let rec = OsvRecordSchema.safeParse(raw);
      if (rec.success && !rec.data.affected && !rec.data.references) {
        const full = await getVuln(base, rec.data.id, opts);
        if (full) rec = OsvRecordSchema.safeParse(full);
      }
      if (!rec.success) {
        opts.log.warn(`OSV record ${(raw as { id?: string })?.id ?? '?'} does not follow the OSV schema; skipped`);
        continue;
      }
      yield rec.data;
    }
    const next = json.next_page_token;
    if (!next) return;
    if (seen.has(next)) {
      opts.log.warn(`OSV repeated page token ${next.slice(0, 16)}...; stopping`);
      return;
    }
    seen.add(next);
    token = next;
  }
}

/** GET /v1/vulns/{id}, cached; null when OSV does not know the id. */
export async function getVuln(base: string, id: string, opts: OsvApiOptions): Promise<unknown | null> {
  const url = `${base.replace(/\/+$/, '')}/v1/vulns/${encodeURIComponent(id)}`;
  const res = await opts.cache.get(url, { headers: { accept: 'application/json' }, signal: opts.signal });
  if (res.status === 404) return null;
  if (res.status !== 200) throw new ForesightError(`OSV answered HTTP ${res.status} for ${url}`, { remedy: 'check FORESIGHT_OSV_URL', external: true });
  try {
    return JSON.parse(res.body);
  } catch {
    opts.log.warn(`OSV answered ${url} with invalid JSON; skipped`);
    return null;
  }
}
