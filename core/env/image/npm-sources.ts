/**
 * What a Node env build's deps step needs to reach the registry: the registry URL (the configuration's,
 * FORESIGHT_NPM_REGISTRY, else the host's `npm config get registry`), the CA bundle npm trusts (`cafile`,
 * else the CA file Node itself is told to trust), bind-mounted read-only, and the registry's token (the
 * configuration's, FORESIGHT_NPM_TOKEN, else the host's npmrc files' `//<registry>/:_authToken`, `${VAR}`
 * expanded as npm does). All of it reaches the build only as variables of the deps step's exec: never a
 * command line, an image's ENV or a build log (the token is registered for redaction).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { processEnv, splitCredentials } from '../../foundation/config.ts';
import { registerSecret } from '../../foundation/secrets.ts';
import { BUILD_USER } from './build-scripts.ts';

/** Where the CA bundle is mounted in the build container. */
export const NPM_CA_PATH = '/foresight-npm-ca.pem';
/** npm's own default, when the host's npm does not answer. */
const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';

export interface NpmSources {
  /** The registry URL, credentials removed. */
  registry: string;
  /** Host path of the CA bundle mounted at NPM_CA_PATH, or null. */
  caFile: string | null;
  /** Docker binds `host:container:ro`. */
  binds: string[];
  /** The deps step's exec variables (FORESIGHT_NPM_REGISTRY, the CA's, FORESIGHT_NPM_TOKEN): secret, never logged. */
  env: string[];
  /** What was found, one line each (for the build log; no credential). */
  notes: string[];
}

/** `npm config get a b` output → key → value; npm prints `null` / `undefined` for unset keys. */
export function parseNpmConfigGet(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([^=\s]+)=(.*)$/.exec(line.trim());
    if (m && m[2]!.trim() !== '' && !['null', 'undefined'].includes(m[2]!.trim())) out.set(m[1]!, m[2]!.trim());
  }
  return out;
}

/** npm's "nerf dart" of a registry URL: `//host[:port]/path/`, the key prefix of its credentials. */
export function nerfDart(registry: string): string {
  const u = new URL(registry);
  return `//${u.host}${u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`}`;
}

/**
 * The `_authToken` an npmrc's text gives `registry` (its own path, else a parent path's, as npm matches
 * them), `${VAR}` references expanded from `env`; null when none, or when a reference is unset.
 */
export function tokenFor(npmrc: string, registry: string, env: Readonly<Record<string, string | undefined>>): string | null {
  const values = new Map<string, string>();
  for (const line of npmrc.split('\n')) {
    const m = /^\s*([^=#;\s][^=]*?)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) values.set(m[1]!, m[2]!.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'));
  }
  let dart = nerfDart(registry);
  for (;;) {
    const raw = values.get(`${dart}:_authToken`);
    if (raw !== undefined) {
      let unset = false;
      const token = raw.replace(/(\\*)\$\{([^}]+)\}/g, (all, esc: string, name: string) => {
        if (esc.length % 2 === 1) return all.slice(1);
        const v = env[name];
        if (v === undefined) unset = true;
        return `${esc}${v ?? ''}`;
      });
      return unset || token === '' ? null : token;
    }
    const up = dart.replace(/[^/]+\/$/, '');
    if (up === dart || up === '//') return null;
    dart = up;
  }
}

function runNpm(args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    // Away from any project: its .npmrc is not the host's configuration.
    execFile('npm', args, { timeout: 60_000, maxBuffer: 1024 * 1024, cwd: tmpdir() }, (err, stdout) => resolve(err ? null : stdout));
  });
}

async function othersMayRead(p: string): Promise<boolean> {
  const st = await stat(p).catch(() => null);
  return st !== null && st.isFile() && (st.mode & 0o004) !== 0;
}

export interface NpmSourcesOptions {
  /** Runs the host's npm (tests pass a fake); resolves to stdout, null on failure. */
  npm?: (args: string[]) => Promise<string | null>;
  /** The environment `${VAR}` references in npmrc files and NODE_EXTRA_CA_CERTS are read from (default: this process's). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The configured registry (FORESIGHT_NPM_REGISTRY): wins over the host npm's. */
  registry?: string | null;
  /** The configured token (FORESIGHT_NPM_TOKEN): wins over the host npmrc's for the registry. */
  token?: string | null;
}

/** The registry, CA bundle and token of the deps step: the configured ones, else the host's (see the module's comment). */
export async function npmSources(opts: NpmSourcesOptions = {}): Promise<NpmSources> {
  const env = opts.env ?? processEnv();
  const out = await (opts.npm ?? runNpm)(['config', 'get', 'registry', 'cafile', 'userconfig', 'globalconfig']);
  const cfg = parseNpmConfigGet(out ?? '');
  const notes: string[] = out === null ? ['npm config get failed on the host: npm defaults used'] : [];
  const configured = opts.registry || null;
  let registry = configured ?? cfg.get('registry') ?? DEFAULT_REGISTRY;
  let from = configured !== null ? 'the configuration (FORESIGHT_NPM_REGISTRY)' : cfg.has('registry') ? "the host's npm (npm config get registry)" : "npm's default";
  try {
    const u = new URL(registry);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(u.protocol);
  } catch {
    notes.push(`npm registry "${registry}" is not an http(s) URL: ${DEFAULT_REGISTRY} used`);
    registry = DEFAULT_REGISTRY;
    from = "npm's default";
  }
  notes.push(`npm registry from ${from}`);
  const { url, credentials } = splitCredentials(registry);
  if (credentials) {
    registerSecret('npm registry credentials', credentials);
    registerSecret('npm registry credentials', credentials.split(':').slice(1).join(':'));
  }
  const secretEnv = [`FORESIGHT_NPM_REGISTRY=${registry}`];

  let token: string | null = opts.token || null;
  if (token !== null) notes.push(`npm token for ${nerfDart(url)} from the configuration (FORESIGHT_NPM_TOKEN): passed to the deps step only`);
  for (const key of token === null ? ['userconfig', 'globalconfig'] : []) {
    const file = cfg.get(key);
    const text = file === undefined ? null : await readFile(file, 'utf8').catch(() => null);
    token = text === null ? null : tokenFor(text, url, env);
    if (token !== null) {
      notes.push(`npm token for ${nerfDart(url)} from ${file}: passed to the deps step only`);
      break;
    }
  }
  if (token !== null) {
    registerSecret('npm registry token', token);
    secretEnv.push(`FORESIGHT_NPM_TOKEN=${token}`);
  }

  const caFile = cfg.get('cafile') ?? env['NODE_EXTRA_CA_CERTS'] ?? null;
  const binds: string[] = [];
  if (caFile !== null) {
    if (!(await stat(caFile).catch(() => null))) notes.push(`npm CA bundle ${caFile}: missing, not mounted`);
    else {
      binds.push(`${caFile}:${NPM_CA_PATH}:ro`);
      secretEnv.push(`NODE_EXTRA_CA_CERTS=${NPM_CA_PATH}`, `npm_config_cafile=${NPM_CA_PATH}`);
      if (!(await othersMayRead(caFile))) notes.push(`npm CA bundle ${caFile}: not readable by others, so not by the deps step's user (${BUILD_USER}): chmod o+r ${caFile}`);
    }
  }
  notes.unshift(`npm registry ${url}; CA bundle ${binds.length ? caFile : '(none: Node\'s own)'}; token ${token !== null ? 'yes' : 'none'}`);
  return { registry: url, caFile: binds.length ? caFile : null, binds, env: secretEnv, notes };
}
