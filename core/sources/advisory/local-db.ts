import { existsSync, statSync } from 'node:fs';
import { opendir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '../../foundation/log.ts';
import { OsvRecordSchema, type OsvRecord } from './osv.ts';

/**
 * The reviewed advisories of a github/advisory-database checkout: <root>/advisories/github-reviewed
 * (also accepted: the advisories folder itself, or github-reviewed itself). Null when there is none.
 * Only this folder is read: advisories/unreviewed (most of the ~200k files) has no package data.
 */
export function reviewedFolder(root: string): string | null {
  const candidates = basename(root) === 'github-reviewed' ? [root] : [join(root, 'advisories', 'github-reviewed'), join(root, 'github-reviewed')];
  for (const c of candidates) {
    try {
      if (existsSync(c) && statSync(c).isDirectory()) return c;
    } catch {
      // unreadable: try the next
    }
  }
  return null;
}

/** The JSON files under the layout YYYY/MM/GHSA-xxxx/GHSA-xxxx.json, streamed (one directory handle at a time). */
async function* advisoryFiles(folder: string): AsyncGenerator<string> {
  const sorted = async (dir: string, pattern: RegExp): Promise<string[]> => {
    const names: string[] = [];
    for await (const d of await opendir(dir)) if (d.isDirectory() && pattern.test(d.name)) names.push(d.name);
    return names.sort();
  };
  for (const year of await sorted(folder, /^\d{4}$/)) {
    for (const month of await sorted(join(folder, year), /^\d{2}$/)) {
      const monthDir = join(folder, year, month);
      for await (const d of await opendir(monthDir)) {
        if (!d.isDirectory()) continue;
        const file = join(monthDir, d.name, `${d.name}.json`);
        yield file;
      }
    }
  }
}

export interface ScanStats {
  files: number;
  read: number;
  bad: number;
}

/**
 * Stream the reviewed advisories that may concern this repository: a file is parsed only when its text
 * names `github.com/<owner>/<name>` or one of `needles` (the package name), so the scan costs a read per
 * file and a parse per candidate. Files that are not valid JSON or not OSV records are logged and skipped.
 */
export async function* scanAdvisoryDb(
  folder: string,
  opts: { repo: string; needles?: string[]; log: Logger; concurrency?: number; stats?: ScanStats; signal?: AbortSignal },
): AsyncGenerator<OsvRecord> {
  const stats = opts.stats ?? { files: 0, read: 0, bad: 0 };
  const needles = [`github.com/${opts.repo}`.toLowerCase(), ...(opts.needles ?? []).map((n) => n.toLowerCase())];
  const width = Math.max(1, opts.concurrency ?? 32);
  const files = advisoryFiles(folder);
  const inFlight = new Set<Promise<void>>();
  const ready: OsvRecord[] = [];
  let done = false;

  const load = async (file: string): Promise<void> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        stats.bad++;
        opts.log.warn(`advisory file ${file} could not be read: ${(err as Error).message}; skipped`);
      }
      return;
    }
    stats.files++;
    const lower = text.toLowerCase();
    if (!needles.some((n) => lower.includes(n))) return;
    stats.read++;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      stats.bad++;
      opts.log.warn(`advisory file ${file} is not valid JSON (${(err as Error).message}); skipped`);
      return;
    }
    const rec = OsvRecordSchema.safeParse(json);
    if (!rec.success) {
      stats.bad++;
      opts.log.warn(`advisory file ${file} is not an OSV record (${rec.error.issues[0]?.path.join('.') || 'root'}: ${rec.error.issues[0]?.message}); skipped`);
      return;
    }
    ready.push(rec.data);
  };

  while (!done || inFlight.size || ready.length) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    while (ready.length) yield ready.shift()!;
    while (!done && inFlight.size < width) {
      const next = await files.next();
      if (next.done) {
        done = true;
        break;
      }
      const p: Promise<void> = load(next.value).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    if (inFlight.size) await Promise.race(inFlight);
  }
}
