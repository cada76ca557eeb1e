/**
 * The host's pip configuration (`pip config list`, which merges the config files and PIP_* variables),
 * turned into what an offline build container needs: the local package sources bind-mounted
 * read-only at their own paths, and PIP_* variables pointing at them. Remote indexes are dropped:
 * builds install from the local wheels only. Nothing here names a path: it all comes from pip.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { splitCredentials } from '../../foundation/config.ts';
import { registerSecret } from '../../foundation/secrets.ts';
import { BUILD_USER } from './build-scripts.ts';

export interface PipSources {
  /** PIP_* variables for `pip` in the build container. */
  env: string[];
  /** Docker binds `host:container:ro` (same path on both sides). */
  binds: string[];
  /** What was kept and dropped, one line each (for the build log). */
  notes: string[];
}

/** `pip config list` output → key → value, e.g. `global.find-links` → `/opt/wheels`. */
export function parsePipConfigList(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([^=\s]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let v = m[2]!.trim();
    if ((v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"'))) {
      v = v.slice(1, -1).replace(/\\(['"\\])/g, '$1');
    }
    out.set(m[1]!, v);
  }
  return out;
}

function run(cmd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 30_000, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => resolve(err ? null : stdout));
  });
}

/** The host's merged pip configuration, or an empty map when no pip answers. */
export async function hostPipConfig(): Promise<Map<string, string>> {
  for (const [cmd, ...args] of [
    ['python3', '-m', 'pip', 'config', 'list'],
    ['pip3', 'config', 'list'],
    ['pip', 'config', 'list'],
  ] as const) {
    const out = await run(cmd, args);
    if (out !== null) return parsePipConfigList(out);
  }
  return new Map();
}

/** A setting as the install command sees it: PIP_* variable, then [install], then [global]. */
function setting(cfg: Map<string, string>, key: string): string | undefined {
  return cfg.get(`:env:.${key}`) ?? cfg.get(`install.${key}`) ?? cfg.get(`global.${key}`);
}

function words(v: string | undefined): string[] {
  return v ? v.split(/\s+/).filter(Boolean) : [];
}

/** A local path for a pip location (absolute path, relative path or file:// URL), null when remote. */
function localPath(v: string): string | null {
  if (/^file:/i.test(v)) {
    try {
      return fileURLToPath(v);
    } catch {
      return null;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return null;
  return path.resolve(v);
}

function commonAncestor(paths: string[]): string {
  let parts = paths[0]!.split('/');
  for (const p of paths.slice(1)) {
    const q = p.split('/');
    let i = 0;
    while (i < parts.length && i < q.length && parts[i] === q[i]) i++;
    parts = parts.slice(0, i);
  }
  return parts.join('/') || '/';
}

const HREF = /href\s*=\s*["']([^"'#?]+)/gi;

/**
 * The directory to mount for a PEP 503 index at `dir`: its pages may link outside it
 * (`../../files/x.whl`), so mount the common ancestor of the index and every file it links to.
 */
export async function indexMountRoot(dir: string): Promise<string[]> {
  const targets = [dir];
  const pages = [path.join(dir, 'index.html')];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) pages.push(path.join(dir, e.name, 'index.html'));
  for (const page of pages) {
    const html = await readFile(page, 'utf8').catch(() => null);
    if (html === null) continue;
    for (const m of html.matchAll(HREF)) {
      const href = decodeURIComponent(m[1]!);
      let target: string | null;
      if (/^file:/i.test(href)) target = localPath(href);
      else if (/^[a-z][a-z0-9+.-]*:/i.test(href)) target = null; // remote link
      else if (href.startsWith('/')) target = href;
      else target = path.resolve(path.dirname(page), href);
      if (target) targets.push(path.dirname(target));
    }
  }
  const resolved = [...new Set(targets.map((t) => path.resolve(t)))];
  const root = commonAncestor(resolved);
  // Links into unrelated trees: mount each directory rather than a shared ancestor such as /.
  return root.split('/').filter(Boolean).length >= 2 ? [root] : resolved;
}

/** Container paths a host source must not be mounted over (or above). */
const RESERVED = ['/', '/bin', '/sbin', '/lib', '/lib64', '/usr', '/etc', '/var', '/root', '/tmp', '/src', '/opt/venv', '/proc', '/sys', '/dev'];

function reserved(p: string): boolean {
  return p === '/' || RESERVED.some((r) => r === p || r.startsWith(`${p}/`));
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null)) !== null;
}

/** The install step runs as an unprivileged user: a source is of use only when others may read it (and enter it). */
async function othersMayRead(p: string): Promise<boolean> {
  const st = await stat(p).catch(() => null);
  if (!st) return false;
  return (st.mode & 0o004) !== 0 && (!st.isDirectory() || (st.mode & 0o001) !== 0);
}

/** Drop mounts inside other mounts. */
function outermost(paths: string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q === '/' ? '/' : `${q}/`)));
}

/**
 * A pip location as it may be shown: `https://user:token@host/simple` loses its credentials, which are
 * registered as secrets so that any other text carrying them (pip's own output in a build log) is redacted.
 */
function withoutCredentials(location: string): string {
  const { url, credentials } = splitCredentials(location);
  if (credentials) {
    registerSecret('pip index credentials', credentials);
    registerSecret('pip index credentials', credentials.split(':').slice(1).join(':'));
  }
  return url;
}

export async function pipSources(cfg?: Map<string, string>): Promise<PipSources> {
  const conf = cfg ?? (await hostPipConfig());
  const notes: string[] = [];
  const mounts: string[] = [];
  const noIndex = /^(1|true|yes|on)$/i.test(setting(conf, 'no-index') ?? '');

  const indexes: string[] = [];
  const candidates = noIndex ? [] : [...words(setting(conf, 'index-url')), ...words(setting(conf, 'extra-index-url'))];
  for (const url of candidates) {
    const p = localPath(url);
    if (p === null) {
      notes.push(`pip index ${withoutCredentials(url)}: remote, not used (builds are offline)`);
      continue;
    }
    if (!(await exists(p))) {
      notes.push(`pip index ${p}: missing, not used`);
      continue;
    }
    indexes.push(pathToFileURL(p).href);
    mounts.push(...(await indexMountRoot(p)));
  }

  const findLinks: string[] = [];
  for (const v of words(setting(conf, 'find-links'))) {
    const p = localPath(v);
    if (p === null) {
      notes.push(`pip find-links ${withoutCredentials(v)}: remote, not used (builds are offline)`);
      continue;
    }
    if (!(await exists(p))) {
      notes.push(`pip find-links ${p}: missing, not used`);
      continue;
    }
    findLinks.push(p);
    mounts.push((await stat(p)).isDirectory() ? p : path.dirname(p));
  }

  const constraints: string[] = [];
  for (const v of words(setting(conf, 'constraint'))) {
    const p = localPath(v);
    if (p === null || !(await exists(p))) {
      notes.push(`pip constraint ${withoutCredentials(v)}: not a local file, not used`);
      continue;
    }
    constraints.push(p);
    mounts.push(p);
  }

  const env = [
    'PIP_NO_CACHE_DIR=1',
    'PIP_RETRIES=0',
    'PIP_DISABLE_PIP_VERSION_CHECK=1',
    'PIP_NO_INPUT=1',
    'PIP_PROGRESS_BAR=off',
  ];
  if (indexes.length > 0) {
    env.push(`PIP_INDEX_URL=${indexes[0]}`);
    if (indexes.length > 1) env.push(`PIP_EXTRA_INDEX_URL=${indexes.slice(1).join(' ')}`);
  } else {
    env.push('PIP_NO_INDEX=1');
    notes.push('no local pip index: pip installs from find-links only');
  }
  if (findLinks.length > 0) env.push(`PIP_FIND_LINKS=${findLinks.join(' ')}`);
  if (constraints.length > 0) env.push(`PIP_CONSTRAINT=${constraints.join(' ')}`);
  const binds: string[] = [];
  for (const m of outermost(mounts)) {
    if (reserved(m)) notes.push(`pip source ${m}: would hide a system directory of the image, not mounted`);
    else {
      binds.push(`${m}:${m}:ro`);
      if (!(await othersMayRead(m))) notes.push(`pip source ${m}: not readable by others, so not by the build's install user (${BUILD_USER}): make it readable (chmod -R o+rX ${m})`);
    }
  }
  notes.unshift(`pip sources: ${[...indexes, ...findLinks].join(' ') || '(none)'}${constraints.length ? `; constraints ${constraints.join(' ')}` : ''}`);
  return { env, binds, notes };
}
