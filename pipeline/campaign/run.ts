/**
 * `foresight campaign run`: the pipeline on each repository of a campaign, one after the other, each with the
 * campaign's options over the run's configuration. Per-repository artifacts and caches are the ones `foresight
 * run` uses (data/<owner>__<name>/), so one repository or one stage reruns as before. With `--queue`, each
 * repository's validate runs its chains on the queue's workers. A repository that fails is recorded with its
 * error and the others still run; the campaign's state file says, per repository, what was mined: the head
 * commit, the windows, the counts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { readManifest, repoDataDir, writeAtomic } from '../../core/foundation/artifacts.ts';
import { ConfigSchema, type Config, type Secrets } from '../../core/foundation/config.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import { revParse } from '../../core/foundation/git.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { ensureClone } from '../clone.ts';
import { runPipeline } from '../pipeline.ts';
import { cloneSource, type Campaign, type CampaignRepo } from './file.ts';

/** Where a campaign's own files go: its state, its dataset. */
export function campaignDir(dataRoot: string, name: string): string {
  return join(dataRoot, 'campaigns', name);
}

const RepoStateSchema = z.object({
  repo: z.string(),
  status: z.enum(['mined', 'failed']),
  /** The error of a failed repository, one line. */
  detail: z.string().nullable(),
  /** The clone mined. */
  clone: z.string().nullable(),
  /** The branch's head commit the run mined: where a later release's history starts. */
  head: z.string().nullable(),
  branch: z.string(),
  /** The commit its fixes were mined after (a release's previous head), or null: all of its history. */
  after: z.string().nullable().default(null),
  windows: z.array(z.object({ since: z.string().nullable(), until: z.string().nullable() })),
  /** Fix candidates, chains, rows of each config, from the stages' manifests. */
  counts: z.record(z.string(), z.number()),
  wall_ms: z.number(),
  finished_at: z.string(),
});
export type RepoState = z.infer<typeof RepoStateSchema>;

export const CampaignStateSchema = z.object({ name: z.string(), file: z.string(), repos: z.array(RepoStateSchema) });
export type CampaignState = z.infer<typeof CampaignStateSchema>;

export function stateFile(dataRoot: string, name: string): string {
  return join(campaignDir(dataRoot, name), 'state.json');
}

export async function readCampaignState(dataRoot: string, name: string): Promise<CampaignState | null> {
  const text = await readFile(stateFile(dataRoot, name), 'utf8').catch(() => null);
  if (text === null) return null;
  const parsed = CampaignStateSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : null;
}

/**
 * The run's configuration with one repository's campaign options over it, checked as a whole; `after`, a
 * release's starting commit in it (the head the previous release mined).
 */
export function repoConfig(base: Config, r: CampaignRepo, after: string | null = null): Config {
  return ConfigSchema.parse({
    ...base,
    discover: {
      ...base.discover,
      ...(r.branch ? { branch: r.branch } : {}),
      ...(r.units ? { units: r.units } : {}),
      ...(r.tracker ? { tracker: r.tracker } : {}),
      ...(r.windows ? { windows: r.windows.map((w) => ({ since: w.since ?? null, until: w.until ?? null })) } : {}),
      ...(after ? { after } : {}),
    },
    sources: { ...base.sources, ...(r.trac_url ? { tracUrl: r.trac_url } : {}) },
    validate: { ...base.validate, ...(r.recipes ? { recipes: r.recipes } : {}), ...(r.language ? { language: r.language } : {}) },
  });
}

/** The counts a repository's manifests hold (0 where a stage has not run). */
async function countsOf(dataRoot: string, repo: string): Promise<Record<string, number>> {
  const dir = repoDataDir(dataRoot, repo);
  const stats = async (stage: string) => (await readManifest(join(dir, stage)))?.stats ?? {};
  const discover = await stats('discover');
  const validate = await readManifest(join(dir, 'validate'));
  const emit = await stats('emit');
  return {
    fix_candidates: discover.candidates ?? 0,
    chains: validate?.items ?? 0,
    funnel_rows: emit.funnel_rows ?? emit.verified_rows ?? 0,
    verified_rows: emit.verified_rows ?? 0,
    test_rows: emit.test_rows ?? 0,
  };
}

export interface CampaignRunOptions {
  campaign: Campaign;
  dataRoot: string;
  /** The run's configuration (flags, environment): each repository's options go over it. */
  config: Config;
  secrets: Secrets;
  log: Logger;
  signal: AbortSignal;
  /** Per repository (owner/name), the commit after which its fixes are mined: a release's previous head. */
  after?: ReadonlyMap<string, string>;
  /** Mine only these repositories (owner/name); default every one. */
  only?: readonly string[];
  force?: boolean;
}

/** Mine each repository in turn; resolves to the campaign's state (also written to its state file). */
export async function runCampaign(o: CampaignRunOptions): Promise<CampaignState> {
  const { campaign, dataRoot, log } = o;
  const previous = await readCampaignState(dataRoot, campaign.name);
  const states = new Map((previous?.repos ?? []).map((r) => [r.repo, r]));
  const chosen = campaign.repos.filter((r) => !o.only?.length || o.only.includes(r.repo));
  const save = async (): Promise<CampaignState> => {
    // In the file's order; repositories no longer in the file are dropped.
    const state = { name: campaign.name, file: campaign.file, repos: campaign.repos.flatMap((r) => states.get(r.repo) ?? []) };
    await writeAtomic(stateFile(dataRoot, campaign.name), `${JSON.stringify(state, null, 2)}\n`);
    return state;
  };
  for (const [i, r] of chosen.entries()) {
    o.signal.throwIfAborted();
    const t0 = Date.now();
    const config = repoConfig(o.config, r, o.after?.get(r.repo) ?? null);
    const windows = config.discover.windows;
    log.info(`campaign ${campaign.name}: ${r.repo} (${i + 1} of ${chosen.length})${windows.length ? `, windows ${windows.map((w) => `[${w.since?.slice(0, 10) ?? '…'}, ${w.until?.slice(0, 10) ?? '…'})`).join(' ')}` : ''}`);
    let clone: string | null = null;
    let head: string | null = null;
    try {
      const src = cloneSource(campaign, r);
      clone = await ensureClone({
        repo: r.repo, dataRoot, log, gitUrl: config.clone.gitUrl, credentials: o.secrets.gitUrlCredentials, offline: config.discover.offline,
        ...(src.kind === 'path' ? { explicit: src.path } : src.kind === 'url' ? { url: src.url } : {}),
      });
      head = await revParse(clone, config.discover.branch);
      await runPipeline({ dataRoot, repo: { name: r.repo, clone }, config, secrets: o.secrets, log, signal: o.signal, force: o.force });
      states.set(r.repo, {
        repo: r.repo, status: 'mined', detail: null, clone, head, branch: config.discover.branch, after: config.discover.after, windows,
        counts: await countsOf(dataRoot, r.repo), wall_ms: Date.now() - t0, finished_at: new Date().toISOString(),
      });
    } catch (err) {
      if (o.signal.aborted) throw err;
      const detail = errorMessage(err).split('\n')[0]!;
      log.error(`campaign ${campaign.name}: ${r.repo} failed: ${detail}`);
      states.set(r.repo, {
        repo: r.repo, status: 'failed', detail, clone, head, branch: config.discover.branch, after: config.discover.after, windows,
        counts: await countsOf(dataRoot, r.repo), wall_ms: Date.now() - t0, finished_at: new Date().toISOString(),
      });
    }
    await save();
  }
  return save();
}

/** The per-repository table a campaign run ends with. */
export function campaignTable(state: CampaignState): string {
  const header = ['repository', 'status', 'fix candidates', 'chains', 'test rows', 'wall'];
  const rows = state.repos.map((r) => [
    r.repo, r.status === 'mined' ? 'mined' : `failed: ${r.detail ?? ''}`.slice(0, 80), String(r.counts.fix_candidates ?? 0), String(r.counts.chains ?? 0), String(r.counts.test_rows ?? 0), `${Math.round(r.wall_ms / 1000)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
