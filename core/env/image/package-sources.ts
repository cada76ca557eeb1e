import type { Config, Secrets } from '../../foundation/config.ts';
import type { PackageSources } from './types.ts';

/** The configuration's package sources, for EnvImages. */
export function packageSources(config: Pick<Config, 'packages'>, secrets: Pick<Secrets, 'npmToken' | 'goProxy'>): PackageSources {
  return { npmRegistry: config.packages.npmRegistry, npmToken: secrets.npmToken, goProxy: secrets.goProxy, goFlags: config.packages.goFlags };
}
