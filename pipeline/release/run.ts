/**
 * `foresight release`: the next release of a campaign's dataset. The previous release (a local folder, or the
 * hub repository it was published to) says per repository the head it mined (release.json); this release
 * mines only the history after it (discover.after), validates every row of the previous release again from
 * the row alone (stages/validate recheckRows), and writes a dataset that keeps every earlier parquet file
 * byte for byte and adds its own split to `verified` and `funnel`: the rows that still hold (`provenance`
 * reused, their published statements and fields unchanged), those that no longer do (kept, `excluded` with
 * the reason), and the new chains; the card gains the release's changelog. `foresight publish --tag NAME`
 * then uploads it.
 */
import { existsSync, statSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { connectDocker, packageSources } from '../../core/env/index.ts';
import { contentFingerprint, readJsonl, readManifest, repoDataDir, toJsonl, writeAtomic, writeManifest } from '../../core/foundation/artifacts.ts';
import type { Config, Secrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { detectLicense, readReleaseManifest, readSplit, RELEASE_NAME, writeRelease, type DatasetRepo, type ReleaseManifest } from '../../stages/emit/index.ts';
import { recheckRows, type PublishedRow, type RowRecheck } from '../../stages/validate/index.ts';
import { campaignDir, emitCampaign, funnelFromStats, repoConfig, runCampaign, type Campaign } from '../campaign/index.ts';
import { downloadRemote, hubFetch } from '../publish/index.ts';

type Row = Record<string, unknown>;
const RowSchema = z.record(z.string(), z.unknown());

export interface ReleaseOptions {
  campaign: Campaign;
  /** This release's name: the split it adds (letters, digits, _). */
  name: string;
  /** The previous release: its local dataset folder, or the hub repository (owner/name) it was published to. */
  previous: string;
  dataRoot: string;
  config: Config;
  secrets: Secrets;
  log: Logger;
  signal: AbortSignal;
}

export interface ReleaseResult {
  dir: string;
  manifest: ReleaseManifest;
  /** Per repository: new rows, rows re-used, rows now excluded (by reason). */
  perRepo: Array<{ repo: string; added: number; reused: number; excluded: Record<string, number>; carried: number }>;
  checks: RowRecheck[];
  /** This release's changelog entry (markdown lines). */
  entry: string[];
}

/** Where a release's dataset folder goes. */
export function releaseDir(dataRoot: string, campaign: string, name: string): string {
  return join(campaignDir(dataRoot, campaign), 'releases', name);
}

/** The previous release as a local folder: the one named, or the hub repository downloaded beside this release. */
async function previousFolder(o: ReleaseOptions): Promise<string> {
  const local = resolve(o.previous);
  const dir = join(releaseDir(o.dataRoot, o.campaign.name, o.name), 'previous');
  // A copy: the campaign's own dataset folder (a likely --previous) is rewritten while this release is made.
  if (existsSync(local) && statSync(local).isDirectory()) {
    if (resolve(dir) !== local) {
      await rm(dir, { recursive: true, force: true });
      await cp(local, dir, { recursive: true });
    }
    return dir;
  }
  if (!/^[\w.-]+\/[\w.-]+$/.test(o.previous)) throw new ForesightError(`--previous ${o.previous} is neither a folder nor a hub repository id`, { remedy: 'pass the folder of the previous release, or its hub repository as owner/name' });
  await rm(dir, { recursive: true, force: true });
  const t = { endpoint: o.config.publish.hfEndpoint, repoId: o.previous, revision: 'main', token: o.secrets.hfToken, fetch: hubFetch({ log: o.log, signal: o.signal }) };
  const got = await downloadRemote(t, dir);
  o.log.info(`previous release: ${got.files} files of ${o.previous}@${got.head.slice(0, 12)}`);
  return dir;
}

/** The changelog lines of this release, per repository. */
function changelogOf(name: string, perRepo: ReleaseResult['perRepo']): string[] {
  const sum = (f: (r: ReleaseResult['perRepo'][number]) => number) => perRepo.reduce((n, r) => n + f(r), 0);
  const excludedN = (r: ReleaseResult['perRepo'][number]) => Object.values(r.excluded).reduce((a, b) => a + b, 0);
  const reasons = (e: Record<string, number>) => Object.entries(e).map(([k, v]) => `${k} ${v}`).join(', ') || '–';
  return [
    `### ${name} (${new Date().toISOString().slice(0, 10)})`,
    '',
    `${sum((r) => r.added)} rows added, ${sum((r) => r.reused)} re-used from the previous release, ${sum(excludedN)} now excluded; split \`${name}\` of \`verified\` and \`funnel\`.`,
    '',
    '| repository | added | re-used | now excluded (reason) | excluded before |',
    '| --- | --- | --- | --- | --- |',
    ...perRepo.map((r) => `| ${r.repo} | ${r.added} | ${r.reused} | ${excludedN(r)} (${reasons(r.excluded)}) | ${r.carried} |`),
    '',
  ];
}

export async function runRelease(o: ReleaseOptions): Promise<ReleaseResult> {
  const { campaign, name, log } = o;
  if (!RELEASE_NAME.test(name) || ['test', 'verified', 'funnel'].includes(name)) {
    throw new ForesightError(`release name ${name} cannot name a split`, { remedy: 'name it with letters, digits and _ (starting with a letter), e.g. r2026_01' });
  }
  const previous = await previousFolder(o);
  const manifest = await readReleaseManifest(previous);
  if (!manifest) throw new ForesightError(`${previous} has no release.json: it is not a release of a campaign`, { remedy: 'pass the dataset foresight campaign emit or foresight release wrote (or its hub repository)' });
  if (manifest.splits.includes(name)) throw new ForesightError(`the previous release already has a split ${name}`, { remedy: 'name this release differently' });
  const gone = manifest.repos.filter((r) => !campaign.repos.some((c) => c.repo === r.repo));
  if (gone.length) throw new ForesightError(`${gone.map((r) => r.repo).join(', ')} of the previous release are not in campaign ${campaign.name}`, { remedy: 'keep every repository of the previous release in the campaign file: its rows are validated again' });

  // The previous release's rows, as published (its latest `verified` split).
  const previousRows = (await readSplit(previous, 'verified', manifest.splits.at(-1) ?? 'verified')) as Row[];

  // New history only: each repository from the head the previous release mined.
  const after = new Map(manifest.repos.map((r) => [r.repo, r.head]));
  const state = await runCampaign({ campaign, dataRoot: o.dataRoot, config: o.config, secrets: o.secrets, log, signal: o.signal, after });
  const failed = state.repos.filter((r) => r.status === 'failed');
  if (failed.length) throw new ForesightError(`mining failed for ${failed.map((r) => `${r.repo} (${r.detail ?? ''})`).join('; ')}`, { remedy: `fix it and rerun foresight release (finished stages are reused)` });
  // This release's new chains as a dataset of their own (its gold self-check record beside it).
  const freshDir = join(releaseDir(o.dataRoot, campaign.name, name), 'new');
  const fresh = await emitCampaign({ campaign, dataRoot: o.dataRoot, log, out: join(freshDir, 'hf') });
  const newVerified = await readJsonl(join(fresh.dir, 'jsonl', 'verified.jsonl'), RowSchema);
  const newFunnel = await readJsonl(join(fresh.dir, 'jsonl', 'funnel.jsonl'), RowSchema);

  // Every row that held in the previous release, validated again from the row alone.
  const docker = connectDocker(o.config.docker.host);
  const checks: RowRecheck[] = [];
  for (const c of campaign.repos) {
    const rows = previousRows.filter((r) => r.repo === c.repo && r.excluded !== true) as unknown as PublishedRow[];
    if (!rows.length) continue;
    const mined = state.repos.find((r) => r.repo === c.repo)!;
    const config = repoConfig(o.config, c);
    log.info(`release ${name}: validating ${rows.length} row(s) of ${c.repo} again`);
    checks.push(
      ...(await recheckRows(rows, {
        repo: { name: c.repo, clone: mined.clone! }, repoDir: repoDataDir(o.dataRoot, c.repo), validate: config.validate, discover: config.discover,
        sourceSettings: sourceSettings(config, o.secrets), images: config.images, packages: packageSources(config, o.secrets), docker, log, signal: o.signal,
        onResult: (r) => log.info(`${r.instance_id}: ${r.verdict === 'holds' ? 'holds' : r.verdict === 'fails' ? `no longer holds: ${r.reason} (${r.detail})` : `could not run: ${r.detail}`}`),
      })),
    );
  }
  const errors = checks.filter((c) => c.verdict === 'error');
  if (errors.length) {
    throw new ForesightError(`${errors.length} row(s) of the previous release could not be validated again (no evidence either way): ${errors.slice(0, 3).map((e) => `${e.instance_id}: ${e.verdict === 'error' ? e.detail : ''}`).join('; ')}`, {
      remedy: 'fix what stopped them (Docker, the clone) and rerun foresight release; mined stages are reused',
      external: true,
    });
  }
  const checkOf = new Map(checks.map((c) => [c.instance_id, c]));
  const reused: Row[] = previousRows.map((r) => {
    const c = checkOf.get(String(r.instance_id));
    if (!c) return r; // excluded in the previous release: carried as it was
    if (c.verdict === 'fails') return { ...r, provenance: 'reused', excluded: true, exclusion_reason: c.reason, exclusion_detail: `release ${name}: ${c.detail}` };
    return { ...r, provenance: 'reused' };
  });
  const clash = newVerified.filter((r) => previousRows.some((p) => p.instance_id === r.instance_id));
  if (clash.length) throw new ForesightError(`new rows ${clash.map((r) => String(r.instance_id)).join(', ')} have the ids of earlier rows`, { remedy: 'this release mined history the previous one had: check release.json heads and the campaign windows' });
  const verified = [...reused, ...newVerified].sort((a, b) => String(a.instance_id).localeCompare(String(b.instance_id)));

  const perRepo: ReleaseResult['perRepo'] = campaign.repos.map(({ repo }) => {
    const excluded: Record<string, number> = {};
    for (const c of checks) if (c.verdict === 'fails' && previousRows.some((r) => r.instance_id === c.instance_id && r.repo === repo)) excluded[c.reason] = (excluded[c.reason] ?? 0) + 1;
    return {
      repo,
      added: newVerified.filter((r) => r.repo === repo).length,
      reused: checks.filter((c) => c.verdict === 'holds' && previousRows.some((r) => r.instance_id === c.instance_id && r.repo === repo)).length,
      excluded,
      carried: previousRows.filter((r) => r.repo === repo && r.excluded === true).length,
    };
  });
  const entry = changelogOf(name, perRepo);
  const next: ReleaseManifest = {
    name,
    created_at: new Date().toISOString(),
    foresight_version: FORESIGHT_VERSION,
    splits: [...manifest.splits, name],
    repos: state.repos.map((r) => ({ repo: r.repo, head: r.head!, branch: r.branch, after: r.after, windows: r.windows })),
    changelog: [...entry, ...manifest.changelog],
  };
  const repos: DatasetRepo[] = [];
  for (const r of state.repos) {
    const emitted = await readManifest(join(repoDataDir(o.dataRoot, r.repo), 'emit'));
    repos.push({ repo: r.repo, license: await detectLicense(r.clone!, r.head!), funnel: funnelFromStats(emitted?.stats ?? {}) });
  }
  const dir = join(releaseDir(o.dataRoot, campaign.name, name), 'hf');
  const { test } = await writeRelease(dir, {
    previous, manifest: next, title: campaign.title ?? `Fix-chains of ${campaign.repos.length} repositories (${campaign.name})`, repoId: null, foresightVersion: FORESIGHT_VERSION,
    repos, verified, funnel: newFunnel, warn: (m) => log.warn(`plots: ${m}`),
  });
  // The gold self-check record publish's gate reads beside the folder: the frozen `test` rows' (as the
  // previous release published them, each on its eval image) and this release's new chains' (their emit's).
  const testIds = new Set(test.map((r) => r.instance_id));
  const firstVerified = manifest.splits.length ? await readSplit(previous, 'verified', 'verified') : previousRows;
  const record = [...firstVerified.filter((r) => testIds.has(r.instance_id)), ...(await readJsonl(join(freshDir, 'items.jsonl'), RowSchema))];
  const items = toJsonl(record);
  const recordDir = releaseDir(o.dataRoot, campaign.name, name);
  await writeAtomic(join(recordDir, 'items.jsonl'), items);
  await writeManifest(recordDir, {
    stage: 'emit', fingerprint: fingerprint('release', campaign.name, name, contentFingerprint(items)),
    inputs: { upstream: fingerprint(next.repos), code: fingerprint('release', FORESIGHT_VERSION), config: fingerprint(campaign.repos.map((r) => r.repo)) },
    output: contentFingerprint(items), items: record.length,
    stats: { verified_rows: verified.length, funnel_rows: newFunnel.length, reused: checks.filter((c) => c.verdict === 'holds').length, now_excluded: checks.filter((c) => c.verdict === 'fails').length, added: newVerified.length },
    finishedAt: new Date().toISOString(), foresightVersion: FORESIGHT_VERSION,
  });
  log.info(`wrote release ${name}: ${dir}`);
  return { dir, manifest: next, perRepo, checks, entry };
}
