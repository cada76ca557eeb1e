/**
 * `foresight campaign emit`: one dataset from the emitted rows of every repository a campaign mined. Each
 * repository's own emit (data/<owner>__<name>/emit/hf/jsonl/) holds its `test`, `verified` and `funnel` rows;
 * they are merged as they are, except that instance ids (`name__pr1-pr2`) of repositories sharing a name get
 * the owner in front (`owner__name__pr1-pr2`) so every id is unique. The card counts each repository and
 * language and names each repository's license. Beside the dataset go the merged emit records
 * (items.jsonl, every chain with its gold self-check's outcome) and a manifest over them, as a repository's
 * emit writes them: what `foresight publish`'s gate checks the `test` rows against. Each repository's record
 * is taken only when it still hashes to what its emit's manifest says it wrote.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { contentFingerprint, readManifest, repoDataDir, toJsonl, writeAtomic, writeManifest } from '../../core/foundation/artifacts.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { detectLicense, RELEASE_FILE, writeDataset, type DatasetRepo, type Funnel, type ReleaseManifest } from '../../stages/emit/index.ts';
import type { Campaign } from './file.ts';
import { campaignDir, readCampaignState } from './run.ts';

type Row = Record<string, unknown>;
const CONFIGS = ['test', 'verified', 'funnel'] as const;
type ConfigName = (typeof CONFIGS)[number];

/** Where a campaign's dataset is written. */
export function campaignDatasetDir(dataRoot: string, name: string): string {
  return join(campaignDir(dataRoot, name), 'hf');
}

async function readRows(file: string): Promise<Row[] | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Row);
}

/** The funnel one repository's emit recorded in its manifest's stats. */
export function funnelFromStats(stats: Readonly<Record<string, number>>): Funnel {
  return {
    candidates: stats.funnel_candidates ?? null,
    chains: stats.funnel_chains ?? 0,
    gradeable: stats.funnel_gradeable ?? 0,
    judged: stats.funnel_judged ?? 0,
    test: stats.funnel_test ?? 0,
  };
}

/** `owner/name` → the prefix its instance ids get: `name`, or `owner__name` when another repository of the campaign is also `name`. */
export function idPrefixes(repos: readonly string[]): Map<string, { from: string; to: string }> {
  const short = (r: string) => r.split('/')[1]!.toLowerCase();
  const count = new Map<string, number>();
  for (const r of repos) count.set(short(r), (count.get(short(r)) ?? 0) + 1);
  return new Map(repos.map((r) => {
    const [owner, name] = r.split('/') as [string, string];
    return [r, { from: `${name}__`, to: count.get(short(r))! > 1 ? `${owner}__${name}__` : `${name}__` }];
  }));
}

export interface CampaignEmitOptions {
  campaign: Campaign;
  dataRoot: string;
  log: Logger;
  /** The dataset folder (default <data>/campaigns/<name>/hf); the gold self-check record goes beside it. */
  out?: string;
}

export interface CampaignEmitResult {
  dir: string;
  rows: Record<ConfigName, number>;
  perRepo: Array<{ repo: string } & Record<ConfigName, number>>;
}

/** Merge the campaign's repositories' emitted rows into one dataset folder. */
export async function emitCampaign(o: CampaignEmitOptions): Promise<CampaignEmitResult> {
  const { campaign, dataRoot } = o;
  const state = await readCampaignState(dataRoot, campaign.name);
  const prefixes = idPrefixes(campaign.repos.map((r) => r.repo));
  const merged: Record<ConfigName, Row[]> = { test: [], verified: [], funnel: [] };
  const repos: DatasetRepo[] = [];
  const perRepo: CampaignEmitResult['perRepo'] = [];
  const records: Row[] = [];
  const sources: Array<{ repo: string; output: string }> = [];
  for (const { repo } of campaign.repos) {
    const mined = state?.repos.find((r) => r.repo === repo);
    const emitDir = join(repoDataDir(dataRoot, repo), 'emit');
    const manifest = await readManifest(emitDir);
    if (!mined || mined.status !== 'mined' || !manifest || mined.clone === null || mined.head === null) {
      throw new ForesightError(`${repo} of campaign ${campaign.name} has no emitted dataset${mined?.status === 'failed' ? ` (its run failed: ${mined.detail ?? ''})` : ''}`, {
        remedy: `run foresight campaign run ${campaign.file}${mined?.status === 'failed' ? ` --repos ${repo}` : ''} first`,
      });
    }
    const { from, to } = prefixes.get(repo)!;
    const recordText = await readFile(join(emitDir, 'items.jsonl'), 'utf8').catch(() => null);
    if (recordText === null || contentFingerprint(recordText) !== manifest.output) {
      throw new ForesightError(`${repo}: ${join(emitDir, 'items.jsonl')} is ${recordText === null ? 'missing' : 'not what its emit wrote'}: its gold self-check record cannot be trusted`, {
        remedy: `rerun its emit: foresight run --repo ${repo} --from emit`,
      });
    }
    const rename = (r: Row): Row => ({ ...r, instance_id: `${to}${String(r.instance_id).slice(from.length)}` });
    records.push(...recordText.split('\n').filter((l) => l.trim() !== '').map((l) => rename(JSON.parse(l) as Row)));
    sources.push({ repo, output: manifest.output });
    const counts = { repo, test: 0, verified: 0, funnel: 0 };
    for (const config of CONFIGS) {
      const rows = await readRows(join(emitDir, 'hf', 'jsonl', `${config}.jsonl`));
      if (rows === null) throw new ForesightError(`${repo}: no ${config} rows in ${join(emitDir, 'hf', 'jsonl')}`, { remedy: `rerun its emit: foresight run --repo ${repo} --from emit` });
      for (const r of rows) {
        const id = String(r.instance_id);
        if (r.repo !== repo || !id.startsWith(from)) {
          throw new ForesightError(`${repo}: row ${id} of ${config} is not one of its own (repo ${String(r.repo)})`, { remedy: `rerun its emit: foresight run --repo ${repo} --from emit` });
        }
        merged[config].push(rename(r));
      }
      counts[config] = rows.length;
    }
    perRepo.push(counts);
    repos.push({ repo, license: await detectLicense(mined.clone, mined.head), funnel: funnelFromStats(manifest.stats) });
  }
  const dir = o.out ?? campaignDatasetDir(dataRoot, campaign.name);
  await writeDataset(dir, {
    title: campaign.title ?? `Fix-chains of ${campaign.repos.length} repositories (${campaign.name})`,
    repoId: null,
    foresightVersion: FORESIGHT_VERSION,
    repos,
    test: merged.test,
    verified: merged.verified,
    funnel: merged.funnel,
    warn: (m) => o.log.warn(`plots: ${m}`),
  });
  // What this (first) release mined, for the next one to start from (published with the dataset).
  const manifest: ReleaseManifest = {
    name: campaign.name,
    created_at: new Date().toISOString(),
    foresight_version: FORESIGHT_VERSION,
    splits: [],
    repos: campaign.repos.map(({ repo }) => {
      const s = state!.repos.find((r) => r.repo === repo)!;
      return { repo, head: s.head!, branch: s.branch, after: s.after, windows: s.windows };
    }),
    changelog: [],
  };
  await writeAtomic(join(dir, RELEASE_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  // The gold self-check record publish's gate reads: the repositories' emit records, their ids as in the dataset.
  const recordDir = dirname(dir);
  const items = toJsonl(records);
  await writeAtomic(join(recordDir, 'items.jsonl'), items);
  await writeManifest(recordDir, {
    stage: 'emit',
    fingerprint: fingerprint('campaign-emit', campaign.name, sources),
    inputs: { upstream: fingerprint(sources), code: fingerprint('campaign-emit', FORESIGHT_VERSION), config: fingerprint(campaign.repos.map((r) => r.repo)) },
    output: contentFingerprint(items),
    items: records.length,
    stats: { test_rows: merged.test.length, verified_rows: merged.verified.length, funnel_rows: merged.funnel.length, repositories: repos.length },
    finishedAt: new Date().toISOString(),
    foresightVersion: FORESIGHT_VERSION,
  });
  o.log.info(`wrote ${dir}: test ${merged.test.length} rows, verified ${merged.verified.length}, funnel ${merged.funnel.length}, from ${repos.length} repositories`);
  return { dir, rows: { test: merged.test.length, verified: merged.verified.length, funnel: merged.funnel.length }, perRepo };
}
