import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';

/**
 * `release.json` beside a campaign's dataset (and published with it): what each release mined, so the next
 * one starts where it stopped, and the splits and changelog the card shows.
 */
export const RELEASE_FILE = 'release.json';

/** A split name the hub takes, and a folder-safe file prefix: `r2026_01`. */
export const RELEASE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export const ReleaseManifestSchema = z.object({
  /** This release's name: the first is its campaign's, each later one the split it added. */
  name: z.string(),
  created_at: z.string(),
  foresight_version: z.string(),
  /** The splits later releases added to `verified` and `funnel`, oldest first (the first release's are `verified`, `funnel`). */
  splits: z.array(z.string()),
  /** Per repository: the head its history was mined to, and from where. */
  repos: z.array(
    z.object({
      repo: z.string(),
      head: z.string(),
      branch: z.string(),
      after: z.string().nullable(),
      windows: z.array(z.object({ since: z.string().nullable(), until: z.string().nullable() })),
    }),
  ),
  /** The card's Changelog section, newest release first. */
  changelog: z.array(z.string()),
});
export type ReleaseManifest = z.infer<typeof ReleaseManifestSchema>;

/** The release.json of a dataset folder, or null when it has none (a single repository's emit). */
export async function readReleaseManifest(dir: string): Promise<ReleaseManifest | null> {
  const text = await readFile(join(dir, RELEASE_FILE), 'utf8').catch(() => null);
  if (text === null) return null;
  const parsed = ReleaseManifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new ForesightError(`${join(dir, RELEASE_FILE)} is not a release manifest: ${parsed.error.issues[0]?.message ?? ''}`, { remedy: 'pass a dataset foresight campaign emit or foresight release wrote' });
  return parsed.data;
}
