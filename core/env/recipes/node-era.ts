/**
 * Which Node.js a commit gets, and which package manager installs its dependencies (see core/env/README.md,
 * "Node"). Read from the commit alone, best first:
 *  - a pin: `.nvmrc`, else `.node-version`, else package.json's `volta.node` (a version, a major, `lts/*`,
 *    `lts/<codename>`, `lts/-1`, `node`; a range counts as a constraint);
 *  - package.json's `engines.node`, a semver range read by npm's own rules (the `semver` package);
 *  - the commit's date: the newest LTS major whose LTS had begun by then.
 * The preferred major comes first, then the other LTS majors the constraints allow, nearest first (the
 * newer on a tie), at most MAX_NODE_CANDIDATES in all. The package manager is the lockfile's own
 * (`package-lock.json` npm, `yarn.lock` yarn classic or berry, `pnpm-lock.yaml` pnpm), at the version
 * package.json's `packageManager` names, else the one of the lockfile's format (npm: the Node major's).
 * Exact versions are picked from the npm registry when an image is built (image/node-dist.ts).
 */
import semver from 'semver';

/** Node's release lines (nodejs/Release schedule.json): first release, start of LTS, codename. */
export const NODE_RELEASES: Readonly<Record<number, { start: string; lts?: string; codename?: string }>> = {
  6: { start: '2016-04-26', lts: '2016-10-18', codename: 'boron' },
  7: { start: '2016-10-25' },
  8: { start: '2017-05-30', lts: '2017-10-31', codename: 'carbon' },
  9: { start: '2017-10-01' },
  10: { start: '2018-04-24', lts: '2018-10-30', codename: 'dubnium' },
  11: { start: '2018-10-23' },
  12: { start: '2019-04-23', lts: '2019-10-21', codename: 'erbium' },
  13: { start: '2019-10-22' },
  14: { start: '2020-04-21', lts: '2020-10-27', codename: 'fermium' },
  15: { start: '2020-10-20' },
  16: { start: '2021-04-20', lts: '2021-10-26', codename: 'gallium' },
  17: { start: '2021-10-19' },
  18: { start: '2022-04-19', lts: '2022-10-25', codename: 'hydrogen' },
  19: { start: '2022-10-18' },
  20: { start: '2023-04-18', lts: '2023-10-24', codename: 'iron' },
  21: { start: '2023-10-17' },
  22: { start: '2024-04-24', lts: '2024-10-29', codename: 'jod' },
  23: { start: '2024-10-16' },
  24: { start: '2025-05-06', lts: '2025-10-28', codename: 'krypton' },
  25: { start: '2025-10-15' },
  26: { start: '2026-05-05', lts: '2026-10-28' },
};

const MAJORS = Object.keys(NODE_RELEASES).map(Number).sort((a, b) => a - b);
/** The oldest Node an image can have: npm 6, the oldest client here, runs on Node 6 and later. */
export const MIN_NODE = MAJORS[0]!;
const LTS_MAJORS = MAJORS.filter((m) => NODE_RELEASES[m]!.lts !== undefined);
/** Majors tried for one commit: each is a build, and a fourth rarely runs what three did not. */
export const MAX_NODE_CANDIDATES = 3;

export interface NodeEra {
  /** Node majors to try, best first (at least one). */
  order: [number, ...number[]];
  /** What decided it, one line each. */
  reasons: string[];
}

/** What package.json says that matters here; anything of another shape reads as absent. */
export interface PackageJson {
  engines?: { node?: unknown };
  volta?: { node?: unknown };
  packageManager?: unknown;
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
}

/** package.json's document; one that is not a JSON object reads as empty (npm cannot install from it either). */
export function readPackageJson(text: string | undefined): PackageJson {
  if (text === undefined) return {};
  try {
    const doc: unknown = JSON.parse(text);
    return typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as PackageJson) : {};
  } catch {
    return {};
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** The newest LTS major whose LTS had begun on `date` (YYYY-MM-DD…); the oldest one before any. */
export function ltsAt(date: string): number {
  const d = date.slice(0, 10);
  return [...LTS_MAJORS].reverse().find((m) => NODE_RELEASES[m]!.lts! <= d) ?? LTS_MAJORS[0]!;
}

/** The newest major released on `date`. */
function newestAt(date: string): number {
  const d = date.slice(0, 10);
  return [...MAJORS].reverse().find((m) => NODE_RELEASES[m]!.start <= d) ?? MAJORS[0]!;
}

type Pin = { major: number } | { range: string } | { problem: string };

/**
 * A version file's or `volta.node`'s text: nvm's aliases resolved at the commit's date (`lts/*` the LTS
 * of the day, `lts/-1` the one before, `lts/iron` by codename, `node`/`stable`/`latest`/`current` the
 * newest release), a version or major as its major, a range as a constraint.
 */
export function readPin(text: string, date: string): Pin {
  const line = text.split('\n').map((l) => l.replace(/#.*$/, '').trim()).find((l) => l !== '') ?? '';
  const v = line.replace(/^v(?=\d)/i, '');
  const lts = /^lts\/(.+)$/i.exec(v);
  if (lts) {
    const what = lts[1]!.toLowerCase();
    const now = ltsAt(date);
    if (what === '*') return { major: now };
    const back = /^-(\d+)$/.exec(what);
    if (back) return { major: LTS_MAJORS[Math.max(0, LTS_MAJORS.indexOf(now) - Number(back[1]))]! };
    const named = LTS_MAJORS.find((m) => NODE_RELEASES[m]!.codename === what);
    return named !== undefined ? { major: named } : { problem: `"${line}" names no LTS line this tier knows` };
  }
  if (/^(node|stable|latest|current)$/i.test(v)) return { major: newestAt(date) };
  const exact = /^(\d+)(?:\.(?:\d+|x|\*))?(?:\.(?:\d+|x|\*))?$/i.exec(v);
  if (exact) return { major: Number(exact[1]) };
  if (v !== '' && semver.validRange(v) !== null) return { range: v };
  return { problem: v === '' ? 'empty' : `"${line}" is neither a version nor a range` };
}

/** Whether some release of `major` satisfies `range`. */
function allows(range: string, major: number): boolean {
  try {
    return semver.intersects(range, `>=${major}.0.0 <${major + 1}.0.0-0`);
  } catch {
    return false;
  }
}

/** `majors` ordered nearest to `from` first, the newer on a tie. */
function nearest(majors: readonly number[], from: number): number[] {
  return [...majors].sort((a, b) => Math.abs(a - from) - Math.abs(b - from) || b - a);
}

export interface NodeVersionFiles {
  /** `.nvmrc`'s text. */
  nvmrc?: string;
  /** `.node-version`'s text. */
  nodeVersion?: string;
  packageJson: PackageJson;
  /** The commit's date (ISO 8601). */
  commitDate: string;
}

/** The Node majors a commit's files ask for, best first (see the module's comment). */
export function nodeEra(files: NodeVersionFiles): NodeEra {
  const reasons: string[] = [];
  const date = files.commitDate;
  const ranges: Array<{ range: string; from: string }> = [];
  let pinned: { major: number; from: string } | null = null;
  for (const [from, text] of [
    ['.nvmrc', files.nvmrc],
    ['.node-version', files.nodeVersion],
    ['package.json volta.node', str(files.packageJson.volta?.node)],
  ] as const) {
    if (text === undefined || pinned !== null) continue;
    const pin = readPin(text, date);
    if ('problem' in pin) reasons.push(`${from}: ${pin.problem}, ignored`);
    else if ('range' in pin) ranges.push({ range: pin.range, from });
    else if (pin.major < MIN_NODE) reasons.push(`${from}: Node ${pin.major} is older than Node ${MIN_NODE}, the oldest this tier has: ignored`);
    else pinned = { major: pin.major, from };
  }
  const engines = files.packageJson.engines?.node;
  if (engines !== undefined) {
    const text = typeof engines === 'string' ? engines.trim() : '';
    if (text !== '' && semver.validRange(text) !== null) ranges.push({ range: text, from: 'package.json engines.node' });
    else reasons.push(`package.json engines.node ${JSON.stringify(engines)} is not a semver range: ignored`);
  }

  // The LTS majors every constraint allows (all of them when a constraint allows none of ours).
  let allowed = [...LTS_MAJORS];
  for (const { range, from } of ranges) {
    const fit = allowed.filter((m) => allows(range, m));
    if (fit.length === 0) reasons.push(`${from} "${range}" allows no LTS Node this tier has (${LTS_MAJORS.join(', ')}): ignored`);
    else {
      allowed = fit;
      reasons.push(`${from} "${range}" allows Node ${fit.join(', ')}`);
    }
  }
  const lts = ltsAt(date);
  let preferred: number;
  if (pinned !== null) {
    preferred = pinned.major;
    reasons.unshift(`${pinned.from}: Node ${preferred}`);
  } else if (allowed.includes(lts)) {
    preferred = lts;
    reasons.push(`commit of ${date.slice(0, 10)}: Node ${lts}, the LTS of the day`);
  } else {
    preferred = nearest(allowed, lts)[0]!;
    reasons.push(`commit of ${date.slice(0, 10)}: the LTS of the day (Node ${lts}) is not allowed; Node ${preferred} is the nearest that is`);
  }
  const order = [preferred, ...nearest(allowed.filter((m) => m !== preferred), preferred)].slice(0, MAX_NODE_CANDIDATES) as [number, ...number[]];
  reasons.push(`Node majors to try: ${order.join(', ')}`);
  return { order, reasons };
}

/** A lockfile's kind (the client that wrote it) and format version. */
export type LockKind = 'npm' | 'yarn' | 'yarn-berry' | 'pnpm';
export interface Lockfile {
  kind: LockKind;
  file: string;
  /** `lockfileVersion` (npm, pnpm), `__metadata.version` (yarn berry); null for yarn classic or when unreadable. */
  version: string | null;
}

/** The lockfiles a client reads, in the order one is taken when a commit has several and `packageManager` names none of theirs. */
export const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json', 'yarn.lock', 'pnpm-lock.yaml'] as const;
export type LockfileName = (typeof LOCKFILES)[number];

function lockOf(file: LockfileName, text: string): Lockfile {
  if (file === 'yarn.lock') {
    // Berry's lockfile is YAML with a __metadata entry; classic's is its own format without one.
    if (!/^__metadata:/m.test(text)) return { kind: 'yarn', file, version: null };
    return { kind: 'yarn-berry', file, version: /^__metadata:\s*\n\s+version:\s*"?(\d+)/m.exec(text)?.[1] ?? null };
  }
  if (file === 'pnpm-lock.yaml') return { kind: 'pnpm', file, version: /^lockfileVersion:\s*['"]?([\d.]+)/m.exec(text)?.[1] ?? null };
  return { kind: 'npm', file, version: /"lockfileVersion"\s*:\s*(\d+)/.exec(text)?.[1] ?? null };
}

/** `packageManager` ("pnpm@8.15.9+sha512.…"): the tool and its exact version, or null. */
export function readPackageManager(v: unknown): { tool: 'npm' | 'yarn' | 'pnpm'; version: string } | null {
  const m = /^(npm|yarn|pnpm)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\+.*)?$/.exec(str(v) ?? '');
  return m ? { tool: m[1] as 'npm' | 'yarn' | 'pnpm', version: m[2]! } : null;
}

const TOOL: Record<LockKind, 'npm' | 'yarn' | 'pnpm'> = { npm: 'npm', yarn: 'yarn', 'yarn-berry': 'yarn', pnpm: 'pnpm' };

/** The lockfile the install uses: the one of the tool `packageManager` names, else the first of LOCKFILES present; null without one. */
export function pickLockfile(texts: Partial<Record<LockfileName, string>>, packageManager: unknown): Lockfile | null {
  const present = LOCKFILES.filter((f) => texts[f] !== undefined).map((f) => lockOf(f, texts[f]!));
  const tool = readPackageManager(packageManager)?.tool;
  return present.find((l) => TOOL[l.kind] === tool) ?? present[0] ?? null;
}

/**
 * npm for a Node major: the one each Node line shipped with, or the first that reads a lockfile of
 * version 2 or 3 (npm 7+) on the Node 10–14 lines. Each runs on its Node (their `engines`).
 */
export function npmMajorFor(node: number, lockfileVersion: string | null): number {
  const modern = Number(lockfileVersion ?? '1') >= 2;
  if (node <= 11) return modern ? 7 : 6;
  if (node <= 14) return modern ? 8 : 6;
  if (node === 15) return 7;
  if (node <= 17) return 8;
  if (node <= 23) return 10;
  return 11;
}

/** pnpm by its lockfile's format: 5.3 pnpm 6, 5.4 pnpm 7, 6.x pnpm 8, 9.x pnpm 9 (older 5.x: pnpm 5). */
export function pnpmMajorFor(lockfileVersion: string | null): number {
  const v = Number(lockfileVersion ?? '9');
  return v < 5.3 ? 5 : v < 5.4 ? 6 : v < 6 ? 7 : v < 7 ? 8 : 9;
}

/** Yarn berry by its lockfile's `__metadata.version`: up to 4 yarn 2, 5–6 yarn 3, later yarn 4. */
export function berryMajorFor(metadataVersion: string | null): number {
  const v = Number(metadataVersion ?? '8');
  return v <= 4 ? 2 : v <= 6 ? 3 : 4;
}

/**
 * The package manager (the recipe's `packageManager`: `<tool>@<version or major>`) that installs a
 * commit's dependencies on Node `node`: the lockfile's tool (npm without one, unless `packageManager`
 * names another), at `packageManager`'s version when it names that tool (npm always at its Node's own:
 * npm reads every lockfile format of its era), else at the lockfile format's.
 */
export function packageManagerFor(lock: Lockfile | null, packageManager: unknown, node: number): { spec: string; reason: string } {
  const pm = readPackageManager(packageManager);
  const tool = lock ? TOOL[lock.kind] : (pm?.tool ?? 'npm');
  const named = pm?.tool === tool ? pm.version : null;
  const from = lock ? `${lock.file}${lock.version ? ` (format ${lock.version})` : ''}` : 'no lockfile';
  if (tool === 'npm') return { spec: `npm@${npmMajorFor(node, lock?.version ?? null)}`, reason: `${from}: npm, Node ${node}'s` };
  if (named !== null) return { spec: `${tool}@${named}`, reason: `${from}: ${tool} ${named} (package.json packageManager)` };
  if (tool === 'pnpm') return { spec: `pnpm@${pnpmMajorFor(lock?.version ?? null)}`, reason: `${from}: pnpm of that format` };
  if (lock?.kind === 'yarn-berry') return { spec: `yarn@${berryMajorFor(lock.version)}`, reason: `${from}: yarn berry of that format` };
  return { spec: 'yarn@1', reason: `${from}: yarn classic` };
}
