import { join } from 'node:path';
import { advisorySource } from './advisory/index.ts';
import { gitSource } from './git/index.ts';
import { githubSource } from './github/index.ts';
import { tracSource } from './trac/index.ts';
import type { Config, Secrets } from '../foundation/config.ts';
import type { Source, SourceSettings } from './types.ts';

/** Every discovery source, by name. The git source needs nothing; the others say when they cannot run. */
export const SOURCES: ReadonlyMap<string, Source> = new Map<string, Source>([
  [gitSource.name, gitSource],
  [githubSource.name, githubSource],
  [tracSource.name, tracSource],
  [advisorySource.name, advisorySource],
]);

/** Settings the network sources read (never tokens): part of discover's fingerprint. */
export const SOURCE_SETTINGS = [
  'FORESIGHT_GITHUB_API_URL',
  'FORESIGHT_TRAC_URL',
  'FORESIGHT_ADVISORY_DB',
  'FORESIGHT_OSV_URL',
  'FORESIGHT_ADVISORY_PACKAGE',
] as const;

/**
 * What the sources read, under the names the README documents them by: a view of the one Config (and
 * of the GitHub token from Secrets), never read from the process environment.
 */
export function sourceSettings(config: Config, secrets: Secrets): SourceSettings {
  const s = config.sources;
  const out: Record<string, string> = { FORESIGHT_GITHUB_API_URL: s.githubApiUrl, FORESIGHT_TRAC_MAX_AGE_SEC: String(s.tracMaxAgeSec) };
  if (secrets.githubToken) out.GITHUB_TOKEN = secrets.githubToken;
  if (s.tracUrl) out.FORESIGHT_TRAC_URL = s.tracUrl;
  if (s.advisoryDb) out.FORESIGHT_ADVISORY_DB = s.advisoryDb;
  if (s.osvUrl) out.FORESIGHT_OSV_URL = s.osvUrl;
  if (s.advisoryPackage) out.FORESIGHT_ADVISORY_PACKAGE = s.advisoryPackage;
  return out;
}

/** The sources that can run for this repository, git first; only git when offline. */
export function availableSources(
  settings: SourceSettings,
  input: { repo: string; tracker: 'github' | 'trac'; offline: boolean },
): Array<{ source: Source; reason: string | null }> {
  return [...SOURCES.values()].map((source) => {
    if (input.offline && source.name !== 'git') return { source, reason: 'offline run: git history only' };
    const a = source.available(settings, input);
    return { source, reason: a.ok ? null : a.reason };
  });
}

/** Where a source keeps its HTTP cache: data/<repo>/http-cache/<source>/ (outlives stage reruns). */
export function sourceCacheDir(repoDir: string, source: string): string {
  return join(repoDir, 'http-cache', source);
}
