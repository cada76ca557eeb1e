import { InvalidArgumentError } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { envSetting, loadConfig, loadSecrets, processEnv, type Config, type Secrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { enableGitProfile } from '../../core/foundation/git.ts';
import { flagsFor, type Command, type Flags } from '../../core/foundation/settings.ts';

export const DEMO_REPO = 'demo/minilib';

export interface CommonOpts extends Flags {
  repo: string;
  clone?: string;
  force?: boolean;
  from?: string;
  only?: string;
}

/** The exit code of the signal that stopped a command (130 SIGINT, 143 SIGTERM), when one did. */
export const exitState: { signal: number | null } = { signal: null };

export function repoName(name: string): string {
  if (!/^[\w.][\w.-]*\/[\w.][\w.-]*$/.test(name)) {
    throw new ForesightError(`--repo ${name} is not a repository name`, { remedy: 'pass --repo owner/name, e.g. --repo django/django' });
  }
  return name;
}

/** The artifact root: a folder (created on demand), never a file. */
export function dataRootOf(config: Config): string {
  const root = resolve(config.data);
  if (existsSync(root) && !statSync(root).isDirectory()) {
    throw new ForesightError(`--data ${config.data} is a file, not a folder`, { remedy: 'pass --data <a folder> (FORESIGHT_DATA); it is created when missing' });
  }
  return root;
}

/** Remove `dir` and then its parents up to (and including) `stop` while they are empty: a failed run leaves no empty folders. */
export async function removeEmpty(dir: string, stop: string): Promise<void> {
  for (let d = dir; d.startsWith(stop); d = resolve(d, '..')) {
    const entries = await readdir(d).catch(() => null);
    if (entries === null || entries.length > 0) return;
    await rmdir(d).catch(() => undefined);
    if (d === stop) return;
  }
}

/** The configuration the command loaded, for the error handler. */
let loaded: Config | null = null;

/**
 * How every command gets its settings: the flags the settings table gives `command` (others in `opts` are
 * the command's own), then the environment, then the defaults. `forced` flags win over what was typed (the
 * demo is always offline).
 */
export function settings(command: Command, opts: object, forced: Flags = {}): { config: Config; secrets: Secrets } {
  const config = loadConfig(processEnv(), { ...flagsFor(command, opts), ...forced });
  const secrets = loadSecrets(processEnv());
  if (config.debug.profileGit) enableGitProfile();
  loaded = config;
  return { config, secrets };
}

/** Whether the terminal takes JSON lines (--log-format json): also for the error that ended the command. */
export function jsonTerminal(): boolean {
  return (loaded?.log.format ?? envSetting('log.format')) === 'json';
}

/** Whether an error that ended the command is printed with its stack (FORESIGHT_DEBUG): also when the command loaded no configuration, or a bad one. */
export function stackTraces(): boolean {
  return loaded?.debug.stack ?? envSetting('debug.stack');
}

export function wholeNumber(min: number): (v: string) => number {
  return (v) => {
    const n = /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
    return n;
  };
}

/** A whole number checked when the flags are parsed, kept as typed: core/foundation/config.ts owns the value (and its environment fallback). */
export function wholeNumberText(min: number): (v: string) => string {
  const check = wholeNumber(min);
  return (v) => {
    check(v);
    return v;
  };
}
