import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonl, repoDataDir, stageDir, toJsonl, writeAtomic } from '../../core/foundation/artifacts.ts';
import { assertDockerReachable, connectDocker, packageSources, removeStaleContainers } from '../../core/env/index.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/foundation/model/validated.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { recheckChains, type RecheckResult } from '../../stages/validate/index.ts';
import { ensureClone } from '../clone.ts';
import { abortOnSignals } from '../signals.ts';
import { dataRootOf, exitState, repoName, settings, type CommonOpts } from './shared.ts';

export interface RecheckOpts extends CommonOpts {
  ids?: string;
  all?: boolean;
}

/** Which stored chains to validate again: the named ones, every validated one, or (default) the rows of `test`. */
async function selection(repoDir: string, validated: ValidatedChain[], o: RecheckOpts): Promise<ValidatedChain[]> {
  const ran = validated.filter((c) => c.excluded?.stage !== 'extract');
  if (o.ids) {
    const byId = new Map(ran.map((c) => [c.instance_id, c]));
    const ids = o.ids.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = ids.filter((id) => !byId.has(id));
    if (unknown.length) {
      throw new ForesightError(`--ids: no validated chain ${unknown.join(', ')}`, { remedy: `name instance ids from ${join(repoDir, 'validate', 'items.jsonl')} (chains excluded at extract never ran)` });
    }
    return ids.map((id) => byId.get(id)!);
  }
  if (o.all) return ran;
  const testRows = join(repoDir, 'emit', 'hf', 'jsonl', 'test.jsonl');
  if (existsSync(testRows)) {
    const ids = new Set((await readJsonl(testRows, z.object({ instance_id: z.string() }).passthrough())).map((r) => r.instance_id));
    return ran.filter((c) => ids.has(c.instance_id));
  }
  return ran.filter((c) => c.gradeable && !c.excluded);
}

function describe(r: RecheckResult): string {
  if (r.verdict === 'same') return 'same sets, same exclusion';
  if (r.verdict === 'error') return `could not run: ${r.detail}`;
  const parts = r.sets.map((d) => `${d.field}: ${d.stored.length ? `-${d.stored.join(' -')}` : ''}${d.stored.length && d.rerun.length ? ' ' : ''}${d.rerun.length ? `+${d.rerun.join(' +')}` : ''}`);
  if (r.exclusion) parts.push(`exclusion ${r.exclusion.stored ?? 'none'} -> ${r.exclusion.rerun ?? 'none'}${r.exclusion.rerunDetail ? ` (${r.exclusion.rerunDetail})` : ''}`);
  if (r.backend) parts.push(`backend ${r.backend.stored} -> ${r.backend.rerun}`);
  if (r.s1) parts.push(`S1 decided by ${r.s1.stored} -> ${r.s1.rerun}`);
  return parts.join('; ');
}

/**
 * `foresight recheck`: validate stored chains again from scratch and report whether each one's sets and
 * exclusion hold (report in data/<repo>/recheck/report.jsonl). Exit 1 when any differs or could not run.
 */
export async function recheckCommand(o: RecheckOpts): Promise<void> {
  const { config, secrets } = settings('recheck', o);
  const log = createLogger(config.log);
  const dataRoot = dataRootOf(config);
  const name = repoName(o.repo);
  const repoDir = repoDataDir(dataRoot, name);
  const items = join(stageDir(dataRoot, name, 'validate'), 'items.jsonl');
  if (!existsSync(items)) {
    throw new ForesightError(`no validated chains of ${name} under ${dataRoot}`, { remedy: `run the pipeline first (foresight run --repo ${name} --data ${config.data})` });
  }
  const chosen = await selection(repoDir, await readJsonl(items, ValidatedChainSchema), o);
  if (!chosen.length) {
    log.info('no chain to recheck (no row in test; pass --all or --ids)');
    return;
  }
  const docker = connectDocker(config.docker.host);
  const owner = abortOnSignals({ docker, log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed`) });
  try {
    const clone = await ensureClone({ repo: name, dataRoot, explicit: o.clone, log, gitUrl: config.clone.gitUrl, credentials: secrets.gitUrlCredentials, offline: config.discover.offline });
    await assertDockerReachable(docker);
    const stale = await removeStaleContainers(docker);
    if (stale.length) log.info(`removed ${stale.length} container(s) left by a killed run`);
    log.progress('rechecking chains', 0, chosen.length);
    const results = await recheckChains(chosen, {
      repo: { name, clone }, repoDir, validate: config.validate, discover: config.discover, sourceSettings: sourceSettings(config, secrets),
      images: config.images, packages: packageSources(config, secrets), docker, log, signal: owner.signal,
      onResult: (r, done, total) => {
        log.info(`${r.instance_id}: ${describe(r)} (${(r.wallMs / 1000).toFixed(1)} s)`);
        log.progress('rechecking chains', done, total);
      },
    });
    const out = join(repoDir, 'recheck', 'report.jsonl');
    await writeAtomic(out, toJsonl(results));
    const same = results.filter((r) => r.verdict === 'same').length;
    const differs = results.filter((r) => r.verdict === 'differs').length;
    const errors = results.length - same - differs;
    process.stdout.write(`${results.map((r) => `${r.verdict.padEnd(7)} ${r.instance_id}  ${describe(r)}`).join('\n')}\n`);
    process.stdout.write(`recheck: ${same} of ${results.length} held, ${differs} differ, ${errors} could not run (report: ${out})\n`);
    if (same !== results.length) process.exitCode = 1;
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}
