import { connectDocker } from '../../core/env/index.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { campaignTable, emitCampaign, loadCampaign, runCampaign } from '../campaign/index.ts';
import { runRelease } from '../release/index.ts';
import { abortOnSignals } from '../signals.ts';
import { dataRootOf, exitState, settings } from './shared.ts';
import type { Flags } from '../../core/foundation/settings.ts';

export interface CampaignRunOpts extends Flags {
  repos?: string;
  force?: boolean;
}

/** `foresight campaign run FILE`: mine each repository of the campaign; exit 1 when any failed. */
export async function campaignRunCommand(file: string, o: CampaignRunOpts): Promise<void> {
  const { config, secrets } = settings('campaign', o);
  const log = createLogger(config.log);
  const campaign = await loadCampaign(file);
  const only = o.repos?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((r) => !campaign.repos.some((c) => c.repo === r)) ?? [];
  if (unknown.length) throw new ForesightError(`--repos: ${unknown.join(', ')} not in campaign ${campaign.name}`, { remedy: `name repositories the file lists: ${campaign.repos.map((r) => r.repo).join(', ')}` });
  const owner = abortOnSignals({ docker: connectDocker(config.docker.host), log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished items are kept`) });
  try {
    const state = await runCampaign({ campaign, dataRoot: dataRootOf(config), config, secrets, log, signal: owner.signal, only, force: o.force });
    process.stdout.write(`${campaignTable(state)}\n`);
    if (state.repos.some((r) => r.status === 'failed')) process.exitCode = 1;
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}

/** `foresight campaign emit FILE`: one dataset from the repositories' emitted rows. */
export async function campaignEmitCommand(file: string, o: Flags): Promise<void> {
  const { config } = settings('campaign-emit', o);
  const log = createLogger(config.log);
  const campaign = await loadCampaign(file);
  const res = await emitCampaign({ campaign, dataRoot: dataRootOf(config), log });
  const lines = res.perRepo.map((r) => `  ${r.repo}: test ${r.test}, verified ${r.verified}, funnel ${r.funnel}`);
  process.stdout.write(`${['campaign dataset: ' + res.dir, ...lines, `  all: test ${res.rows.test}, verified ${res.rows.verified}, funnel ${res.rows.funnel}`].join('\n')}\n`);
}

export interface ReleaseOpts extends Flags {
  campaign: string;
  name: string;
  previous: string;
}

/** `foresight release`: the next release of a campaign's dataset, written beside it for `foresight publish --tag`. */
export async function releaseCommand(o: ReleaseOpts): Promise<void> {
  const { config, secrets } = settings('release', o);
  const log = createLogger(config.log);
  const campaign = await loadCampaign(o.campaign);
  const owner = abortOnSignals({ docker: connectDocker(config.docker.host), log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished items are kept`) });
  try {
    const res = await runRelease({ campaign, name: o.name, previous: o.previous, dataRoot: dataRootOf(config), config, secrets, log, signal: owner.signal });
    process.stdout.write(`${[`release ${o.name}: ${res.dir}`, ...res.entry, `next: foresight publish --repo-id <owner/name> --dataset ${res.dir} --tag ${o.name}`].join('\n')}\n`);
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}
