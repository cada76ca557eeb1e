/**
 * The `validate.chain` job: what one chain's validation carries through the work queue, and what comes back.
 *
 * The job carries nothing secret: the extracted chain, the repository and where to clone it from, the
 * configuration that enters validate's cache key. Its result is the validated chain (attribution included:
 * validate-and-attribute.ts) with the counts validate's stats add up. This process runs it when no queue URL
 * is set (local-handler.ts), a `foresight worker` otherwise (worker-handler.ts).
 */
import { z } from 'zod';
import { ConfigSchema, type Config } from '../../core/foundation/config.ts';
import { CHANGE_UNITS, TRACKERS } from '../../core/foundation/settings.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { ExtractedChainSchema } from '../../core/foundation/model/extracted.ts';
import { ValidatedChainSchema } from '../../core/foundation/model/validated.ts';
import { defineJobKind, InfraError } from '../../core/queue/index.ts';

/** The configuration a chain's validation reads: validate's own, and what attribution lists and re-extracts with. */
const ChainJobConfigSchema = z.object({
  validate: ConfigSchema.shape.validate,
  discover: z.object({ branch: z.string(), units: z.enum(CHANGE_UNITS), tracker: z.enum(TRACKERS), offline: z.boolean() }),
  sources: ConfigSchema.shape.sources,
});
export type ChainJobConfig = z.infer<typeof ChainJobConfigSchema>;

export const validateChainKind = defineJobKind('validate.chain', {
  payload: z.object({
    repo: z.string(),
    /** Where a worker clones the repository from: the coordinator's clone path, else its URL (no credentials). */
    source: z.object({ path: z.string(), url: z.string().nullable() }),
    chain: ExtractedChainSchema,
    config: ChainJobConfigSchema,
  }),
  result: z.object({
    chain: ValidatedChainSchema,
    stateRuns: z.number().int().nonnegative(),
    backendFallbacks: z.number().int().nonnegative(),
    imagesBuilt: z.array(z.string()),
  }),
});
export type ChainJob = z.infer<typeof validateChainKind.payload>;
export type ChainJobResult = z.infer<typeof validateChainKind.result>;

/** The part of the configuration a chain's job carries. */
export function chainJobConfig(config: Config): ChainJobConfig {
  const { branch, units, tracker, offline } = config.discover;
  return { validate: config.validate, discover: { branch, units, tracker, offline }, sources: config.sources };
}

/** What the coordinator's `foresight run` cloned from: a worker without that path clones from the URL. */
export function cloneSource(config: Config, repo: { name: string; clone: string }): ChainJob['source'] {
  return { path: repo.clone, url: config.discover.offline ? null : `${config.clone.gitUrl.replace(/\/+$/, '')}/${repo.name}.git` };
}

/** The environment's failures (the Docker daemon, a clone) become InfraError: retried on workers, never the chain's; anything else stays what it is. */
export async function infra<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ForesightError && err.external && !(err instanceof InfraError)) throw new InfraError(err.message, { remedy: err.remedy, cause: err });
    throw err;
  }
}
