/** Which base image (Debian release) a recipe's Python runs on. */
import { BASE_RELEASES, DEFAULT_RELEASE, type BasePython, type BaseRelease } from './base.ts';

/** The Debian release whose python3 is the recipe's Python (`auto` not yet resolved: the default, bookworm). */
export function releaseOf(python: string): BaseRelease {
  return python in BASE_RELEASES ? BASE_RELEASES[python as BasePython] : DEFAULT_RELEASE;
}
