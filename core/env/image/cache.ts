/** The cache policy: when env and base images are removed, and their last use (see core/env/README.md). */
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { CACHE_LEVELS, type CacheLevel } from '../../foundation/settings.ts';
import { baseImageTag, DEFAULT_BASE_ALIAS } from './base.ts';
import { connectDocker } from '../connect.ts';
import { CREATED_LABEL, ENV_REPOSITORY, SERVICE_REPOSITORY } from './key.ts';
import { dockerError, inspectImage, splitRef, statusCode, tagImage } from './docker-image.ts';

export { CACHE_LEVELS, type CacheLevel };
export const DEFAULT_CACHE_LEVEL: CacheLevel = 'env';
export const DEFAULT_ENV_KEEP = 30;

/** Mark an image as used now (re-tagging refreshes Docker's Metadata.LastTagTime). */
export async function touchImage(image: string, docker: Docker = connectDocker()): Promise<void> {
  await tagImage(docker, image, image);
}

export interface CachedImage {
  /** One `repository:tag` of the image. */
  ref: string;
  id: string;
  created: Date;
  lastUsed: Date;
}

/** The images of `repository` (default foresight-env), most recently used first. */
export async function listEnvImages(opts: { docker?: Docker; repository?: string } = {}): Promise<CachedImage[]> {
  const docker = opts.docker ?? connectDocker();
  const repository = opts.repository ?? ENV_REPOSITORY;
  let list: Docker.ImageInfo[];
  try {
    list = await docker.listImages({ filters: { reference: [repository] } });
  } catch (err) {
    throw dockerError('cannot list images', err);
  }
  const out: CachedImage[] = [];
  for (const img of list) {
    const info = await inspectImage(docker, img.Id);
    if (!info) continue;
    const created = new Date(info.Config?.Labels?.[CREATED_LABEL] || info.Created);
    const tagged = new Date((info as { Metadata?: { LastTagTime?: string } }).Metadata?.LastTagTime ?? 0);
    const lastUsed = tagged.getTime() > created.getTime() ? tagged : created;
    for (const ref of img.RepoTags ?? []) {
      if (splitRef(ref).repo === repository) out.push({ ref, id: img.Id, created, lastUsed });
    }
  }
  return out.sort((a, b) => b.lastUsed.getTime() - a.lastUsed.getTime() || (a.ref < b.ref ? -1 : 1));
}

async function removeImage(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).remove({ force: false, noprune: false });
    return true;
  } catch (err) {
    const code = statusCode(err);
    if (code === 404 || code === 409) return false; // gone already, or a container uses it
    throw dockerError(`cannot remove image ${ref}`, err);
  }
}

/**
 * Remove the least recently used env images beyond the `keep` most recent. Images in use by a
 * container are left alone. Returns the refs removed.
 */
export async function pruneImages(opts: { keep: number; docker?: Docker; repository?: string; spare?: readonly string[] }): Promise<string[]> {
  if (!Number.isInteger(opts.keep) || opts.keep < 0) {
    throw new ForesightError(`pruneImages: keep must be a whole number ≥ 0, got ${opts.keep}`, { remedy: 'pass keep: N' });
  }
  const docker = opts.docker ?? connectDocker();
  const images = await listEnvImages({ docker, repository: opts.repository });
  const removed: string[] = [];
  const spare = new Set(opts.spare ?? []);
  for (const img of images.slice(opts.keep)) if (!spare.has(img.ref) && (await removeImage(docker, img.ref))) removed.push(img.ref);
  return removed;
}

export interface CachePolicyOptions {
  /** The env and database service images (refs) this run used. */
  used: readonly string[];
  /** 'env' only: how many env images to keep (default DEFAULT_ENV_KEEP). */
  keep?: number;
  docker?: Docker;
  /** 'none' only: the base image's alias, removed with it (config images.baseAlias). */
  baseAlias?: string;
}

/** Apply the cache policy at the end of a run; returns the refs removed. See core/env/README.md. */
export async function applyCachePolicy(level: CacheLevel, opts: CachePolicyOptions): Promise<string[]> {
  const docker = opts.docker ?? connectDocker();
  // This run's own images are never pruned: the stages after validate (emit's gold check) still need them.
  if (level === 'env') {
    const keep = opts.keep ?? DEFAULT_ENV_KEEP;
    const env = await pruneImages({ keep, docker, spare: opts.used });
    return [...env, ...(await pruneImages({ keep, docker, repository: SERVICE_REPOSITORY, spare: opts.used }))];
  }
  const removed: string[] = [];
  for (const ref of new Set(opts.used)) if (await removeImage(docker, ref)) removed.push(ref);
  if (level === 'none') {
    const base = await baseImageTag();
    const info = await inspectImage(docker, base);
    const alias = opts.baseAlias ?? DEFAULT_BASE_ALIAS;
    const aliasInfo = await inspectImage(docker, alias);
    if (info && aliasInfo?.Id === info.Id && (await removeImage(docker, alias))) removed.push(alias);
    if (info && (await removeImage(docker, base))) removed.push(base);
  }
  return removed;
}
