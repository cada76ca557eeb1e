import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { stageDir } from '../../core/foundation/artifacts.ts';
import type { Config, Secrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { hfDir } from '../../stages/emit/index.ts';
import { publish, type PublishOutcome } from './publish.ts';

/** `foresight publish` flags as commander hands them over. */
export interface PublishCliOptions {
  repoId: string;
  dataset?: string;
  repo?: string;
  data?: string;
  private?: boolean;
  dryRun?: boolean;
  /** With --dry-run: `hub`, or a folder holding a copy of the hub repository. */
  remote?: string;
  revision: string;
  /** Tag the published revision. */
  tag?: string;
  /** Published configs this publish may rewrite, comma-separated. */
  replace?: string;
  verbose?: boolean;
  quiet?: boolean;
}

/** The dataset folder and emit's folder beside it, from --dataset or from --repo (+ --data). */
function locate(o: PublishCliOptions, dataRoot: string): { dataset: string; emitDir: string } {
  if (Boolean(o.dataset) === Boolean(o.repo)) {
    throw new ForesightError('publish needs exactly one of --dataset <dir> and --repo <owner/name>', {
      remedy: 'pass --dataset data/<owner>__<name>/emit/hf, or --repo owner/name [--data DIR] for the dataset emit wrote there',
    });
  }
  if (o.dataset && o.data) throw new ForesightError('--data goes with --repo, not with --dataset', { remedy: 'drop --data, or pass --repo owner/name --data DIR instead of --dataset' });
  if (o.dataset) {
    const dataset = resolve(o.dataset);
    if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
      throw new ForesightError(`--dataset ${o.dataset} is not a folder`, { remedy: 'pass the emitted dataset folder (data/<owner>__<name>/emit/hf)' });
    }
    return { dataset, emitDir: dirname(dataset) };
  }
  if (!/^[\w.][\w.-]*\/[\w.][\w.-]*$/.test(o.repo!)) throw new ForesightError(`--repo ${o.repo} is not a repository name`, { remedy: 'pass --repo owner/name, e.g. --repo django/django' });
  const emitDir = stageDir(dataRoot, o.repo!, 'emit');
  const dataset = hfDir(emitDir);
  if (!existsSync(dataset)) throw new ForesightError(`no emitted dataset at ${dataset}`, { remedy: `run foresight run --repo ${o.repo} (or pass --data DIR where it was mined)` });
  return { dataset, emitDir };
}

export async function runPublishCommand(o: PublishCliOptions, settings: { config: Config; secrets: Secrets }, signal: AbortSignal): Promise<PublishOutcome> {
  const { config, secrets } = settings;
  const log = createLogger(config.log);
  const { dataset, emitDir } = locate(o, resolve(config.data));
  return publish({
    dataset,
    emitDir,
    repoId: o.repoId,
    revision: o.revision,
    private: o.private ?? false,
    dryRun: o.dryRun ?? false,
    // `hub` reads the hub; anything else names a folder (`./hub` for a folder called hub).
    remote: o.remote === undefined ? undefined : o.remote === 'hub' ? 'hub' : { dir: resolve(o.remote) },
    endpoint: config.publish.hfEndpoint,
    token: secrets.hfToken,
    pyVenv: config.publish.pyVenv,
    ...(o.tag ? { tag: o.tag } : {}),
    replace: o.replace?.split(',').map((x) => x.trim()).filter(Boolean) ?? [],
    log,
    print: (text) => process.stdout.write(text + '\n'),
    signal,
  });
}
