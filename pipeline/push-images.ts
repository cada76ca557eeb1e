/**
 * `foresight push-images --repo owner/name --registry HOST[:PORT]/NAMESPACE`: the eval
 * images leave the machine and the rows name the pushed references. This is emit run again with
 * `images.registry` set, not a separate writer of rows: emit already owns which chains get an eval image
 * and what `docker_image` says, and its fingerprint includes the registry, so a later `foresight run`
 * with the same registry finds it up to date. Eval images are cached, so the rerun costs the pushes.
 */
import type { Config, Secrets } from '../core/foundation/config.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import type { Logger } from '../core/foundation/log.ts';
import type { RepoContext } from '../core/foundation/stage.ts';
import { runPipeline } from './pipeline.ts';
import type { StageResult } from './run-stage.ts';

export interface PushImagesOptions {
  dataRoot: string;
  repo: RepoContext;
  /** Its `images.registry` is where the images go (required). */
  config: Config;
  secrets?: Secrets;
  log: Logger;
  signal?: AbortSignal;
}

/** Pushes every gradeable chain's eval image and rewrites the emitted rows to name the pushed references. */
export async function pushImages(opts: PushImagesOptions): Promise<StageResult> {
  const registry = opts.config.images.registry;
  if (!registry) {
    throw new ForesightError('push-images needs a registry to push to', {
      remedy: 'pass --registry HOST[:PORT]/NAMESPACE (such as 127.0.0.1:5000/foresight) or set FORESIGHT_REGISTRY',
    });
  }
  opts.log.info(`pushing the eval images of ${opts.repo.name} to ${registry}`);
  const [result] = await runPipeline({ ...opts, only: 'emit', force: true });
  return result!;
}
