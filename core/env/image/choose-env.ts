/**
 * Detected recipes that verify themselves: the install candidates of a repository without a recipe file
 * (recipes/detect.ts) are built in order until one installs AND, when the caller gives a `verify` probe,
 * its runner gives a trustworthy report at the PR's head (its own test files collected without an
 * environment error: a missing module or plugin, an unknown option). An install failure or an unusable
 * report moves to the next candidate; a failing test never does. When every candidate that installs gives
 * an unusable report, the first of them is kept (marked `unverified`): the states then show the problem and
 * validate excludes the chain as env_failed, never as evidence. The outcome of each era (the chosen
 * candidate and its check, the rejected ones with the stage and a one-line reason) is saved in
 * `data/<repo>/env-recipes.json` and reused by the next run: nothing rejected is built or probed again (an
 * offline install is deterministic).
 *
 * An era is keyed by the keys of all its candidates (base image tag, recipe, dependency files' content).
 */
import { readFile } from 'node:fs/promises';
import { writeAtomic } from '../../foundation/artifacts.ts';
import { ForesightError } from '../../foundation/errors.ts';
import { fingerprint } from '../../foundation/fingerprint.ts';
import { readBlob } from '../../foundation/git.ts';
import type { StateRun } from '../container/run-report.ts';
import type { RecipeCandidate } from '../recipes/detect.ts';
import { MAX_DROPPED, unavailableRequirements, withoutRequirements } from '../recipes/drop-unavailable.ts';
import { importedFrom, normaliseDist, type TestImports } from '../recipes/test-imports.ts';
import { getRunner } from '../runners/registry.ts';
import type { EnvImages } from './env-images.ts';
import { logLine } from './docker-image.ts';
import { candidateKey, droppedBy, type Entry, type Retry } from './candidate-queue.ts';
import { ChoiceFileSchema, type ChoiceFile, type Era, type TriedCandidate } from './choice-file.ts';
import { absentPackage, backendUnavailable, checkReport, namesPackage, rejectionReason, type EnvCheck } from './env-check.ts';
import type { EnvImageRequest, EnvImageResult } from './types.ts';

/**
 * Candidates that install but give an unusable report before the first of them is kept: each costs a build
 * and a run, and what the extras and requirement files cannot provide, more of them rarely do.
 */
const MAX_REPORT_REJECTIONS = 3;

/**
 * A project whose pytest config turns warnings into errors meets, offline, newer dependencies than its era's,
 * whose deprecation warnings then fail its imports: the check is run again with them left as warnings (a test
 * asserting a warning still sees it: pytest.warns records whatever the filters say). Not a build field: the
 * same image.
 */
const DEPRECATIONS_AS_WARNINGS = { PYTEST_ADDOPTS: '-W ignore::DeprecationWarning -W ignore::PendingDeprecationWarning' };

/** The candidate with the test-run environment its check needed. */
function withEnv(c: RecipeCandidate, env: Record<string, string> | undefined): RecipeCandidate {
  return env ? { ...c, recipe: { ...c.recipe, env: { ...c.recipe.env, ...env } } } : c;
}


export interface Rejection {
  label: string;
  reason: string;
  /** What failed: the install, the report at the PR's head, or nothing was built (its cause is known). */
  stage: 'install' | 'report' | 'skipped';
  /** True when this run built it; false when the choice file already said so. */
  built: boolean;
}


type Ok = Extract<EnvImageResult, { ok: true }>;
type Failed = Extract<EnvImageResult, { ok: false }>;

export type ChosenEnv =
  | {
      kind: 'ready';
      candidate: RecipeCandidate;
      result: Ok;
      rejected: Rejection[];
      /** The recorded check, e.g. `trustworthy: 12 tests ran`; null: no probe given. */
      check: string | null;
      /** Requirements the install left out, which the offline wheels cannot provide and the PR's tests do not import. */
      dropped: string[];
    }
  | { kind: 'failed'; rejected: Rejection[]; /** The last build that failed in this run, if any. */ last: Failed | null };

/** The project metadata a package name must appear in for an extra to still require it. */
const METADATA_FILES = ['pyproject.toml', 'setup.py', 'setup.cfg'] as const;


export interface ChooseEnvOptions {
  images: EnvImages;
  /** The env request without its recipe (each candidate brings its own). */
  req: Omit<EnvImageRequest, 'recipe'>;
  candidates: readonly [RecipeCandidate, ...RecipeCandidate[]];
  /**
   * Runs the candidate's runner at the PR's head in its image on the PR's test files (null: nothing to run,
   * no test file); without it a candidate is chosen when it installs.
   */
  verify?: (image: string, candidate: RecipeCandidate) => Promise<StateRun | null>;
  /**
   * The modules the PR's tests import (their modules and conftest chain, recipes/test-imports.ts). With it, a
   * candidate that fails on requirements the offline wheels cannot provide is tried again without those the
   * tests do not import, and one that left out a requirement they import is rejected.
   */
  testImports?: () => Promise<TestImports>;
  /** Labels of candidates a commit outgrew (left out of `candidates` by the caller): their retries without a requirement are not tried either. */
  without?: readonly string[];
  /** Labels of candidates leaving out a requirement the PR's tests import: not chosen, and the choice is an era of its own. */
  passOver?: readonly string[];
}

/**
 * One repository's choice file, for one run. Reads it once; writes are serialised (chains validated at
 * once resolve eras side by side) and atomic.
 */
export class EnvChoices {
  private state: Promise<ChoiceFile> | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly choosing = new Map<string, Promise<ChosenEnv>>();

  constructor(readonly file: string) {}

  private load(): Promise<ChoiceFile> {
    this.state ??= readFile(this.file, 'utf8').then(
      (text) => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        const res = ChoiceFileSchema.safeParse(json);
        // A file of the wrong shape is only a cache: the candidates are tried again.
        return res.success ? res.data : { version: 1 as const, eras: {} };
      },
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return { version: 1 as const, eras: {} };
        throw new ForesightError(`cannot read ${this.file}: ${err.message}`, { remedy: 'check its permissions, or delete it to try the install candidates again', cause: err });
      },
    );
    return this.state;
  }

  private save(eraKey: string, era: Era): Promise<void> {
    this.writing = this.writing.then(async () => {
      const state = await this.load();
      state.eras[eraKey] = era;
      await writeAtomic(this.file, `${JSON.stringify(state, null, 2)}\n`);
    });
    return this.writing;
  }

  /** The recorded outcome of every era (for tests and reports). */
  async read(): Promise<ChoiceFile> {
    await this.writing;
    return this.load();
  }

  /** The first candidate that installs at `req.commit` (and gives a usable report there), reusing what earlier runs learned. */
  async choose(opts: ChooseEnvOptions): Promise<ChosenEnv> {
    const { req, candidates } = opts;
    // The run's sources: a Go candidate rejected without a proxy is another candidate with one.
    const keys = await Promise.all(candidates.map((c) => candidateKey(req, c, opts.images.sources)));
    const passOver = opts.passOver ?? [];
    const eraKey = (passOver.length ? fingerprint('foresight-env-choice/1', keys, [...passOver].sort()) : fingerprint('foresight-env-choice/1', keys)).slice(0, 24);
    // Chains of one era asking at once (validate's jobs, its image look-ahead) share one choice: one build, one check.
    const inflight = this.choosing.get(eraKey);
    if (inflight) return inflight;
    const choice = this.chooseEra(opts, keys, eraKey).finally(() => this.choosing.delete(eraKey));
    this.choosing.set(eraKey, choice);
    return choice;
  }

  private async chooseEra(opts: ChooseEnvOptions, keys: string[], eraKey: string): Promise<ChosenEnv> {
    const { images, req, candidates, verify } = opts;
    const known = (await this.load()).eras[eraKey];
    const before = new Map((known?.tried ?? []).map((t) => [t.envKey, t]));

    const tried: TriedCandidate[] = [];
    const rejected: Rejection[] = [];
    let last: Failed | null = null;
    let learned = false;
    // The first candidate that installed but gave an unusable report: kept when none gives a usable one.
    let fallback: { at: number; candidate: RecipeCandidate; result: Ok; detail: string; dropped: string[] } | null = null;
    const backendMissing = new Map<string, string>();
    const editableUnsupported = new Map<string, string>();
    // Labels of the isolated candidates that installed: their no-isolation twin installs the same packages.
    const installed = new Set<string>();
    let reportRejections = 0;
    const short = req.commit.slice(0, 10);
    // Candidates another era of this repository could not install for a package the offline wheels lack
    // entirely (a dev-only tool): not built again while this commit's metadata still names the package.
    const absentElsewhere = new Map<string, { pkg: string; commit: string; reason: string }>();
    for (const [k, era] of Object.entries((await this.load()).eras)) {
      if (k === eraKey) continue;
      for (const t of era.tried) {
        const pkg = t.outcome === 'rejected' && (t.stage ?? 'install') === 'install' ? absentPackage(t.reason) : null;
        if (pkg !== null && !absentElsewhere.has(t.label)) absentElsewhere.set(t.label, { pkg, commit: era.commit, reason: t.reason });
      }
    }
    let metadata: Promise<string> | null = null;
    const readMetadata = (): Promise<string> =>
      (metadata ??= Promise.all(METADATA_FILES.map((f) => readBlob(req.clone, req.commit, f))).then((bs) => bs.map((b) => b?.toString('utf8') ?? '').join('\n')));
    let imports: Promise<TestImports> | null = null;
    const testImports = opts.testImports;
    const needs = async (dist: string, runner: string): Promise<string | null> => {
      if (runner === 'pytest' && normaliseDist(dist) === 'pytest') return 'the test runner';
      return testImports ? importedFrom(dist, await (imports ??= testImports())) : null;
    };
    const without = new Set([...(opts.without ?? []), ...(opts.passOver ?? [])]);
    /** Whether a label, its isolated twin or (for a retry) its detected candidate's is not to be chosen. */
    const passedOver = (e: Pick<Entry, 'c' | 'origin'>): boolean =>
      [e.c.label, e.origin.label].some((l) => without.has(l) || without.has(l.replace('no-isolation ', '')));
    const record = async (chosen: string | null): Promise<void> => {
      if (!known || known.chosen !== chosen || learned) await this.save(eraKey, { commit: known?.commit ?? req.commit, chosen, tried, updated: new Date().toISOString() });
    };
    const ready = async (c: RecipeCandidate, res: Ok, check: string | null, dropped: string[]): Promise<ChosenEnv> => {
      await record(c.label);
      if (learned && rejected.length) logLine(req.log, `install candidate "${c.label}" chosen at ${short}${check ? ` (${check})` : ''} (rejected: ${rejected.map((r) => `"${r.label}" [${r.stage}]: ${r.reason}`).join('; ')})`);
      return { kind: 'ready', candidate: c, result: res, rejected, check, dropped };
    };

    // The detected candidates in order; a candidate without the requirements it could not install goes right after it.
    const queue: Entry[] = candidates.map((c, i) => ({ c, key: keys[i]!, origin: c, drop: [], relax: [] }));
    const queued = new Set(keys);
    /**
     * After `e` failed to install for `why`: when pip found nothing for requirements the PR's tests do not
     * import, or no version satisfying a requirement's pin, `e`'s origin without the former (and those `e`
     * already left out) and with the latter unpinned is tried next. `recorded`: the retry an earlier run made
     * of it, taken again as it was. Returns what to add to the rejection's reason (why it is not retried, or
     * as what it is) and the retry made, or null.
     */
    const retryWithout = async (at: number, e: Entry, why: string, recorded?: Retry): Promise<{ note: string; retry?: Retry } | null> => {
      if (!testImports) return null;
      const has = (list: readonly string[], n: string): boolean => list.some((d) => normaliseDist(d) === normaliseDist(n));
      let next: Retry;
      let freshDrop: string[] = [];
      let freshRelax: string[] = [];
      if (recorded) next = recorded;
      else {
        const found = unavailableRequirements(why).filter((u) => !has(e.drop, u.name));
        // One already unpinned that pip still pins out is pinned by another requirement: unpinning it again changes nothing.
        freshRelax = found.filter((u) => u.pinnedOut && !has(e.relax, u.name)).map((u) => u.name);
        freshDrop = found.filter((u) => !u.pinnedOut).map((u) => u.name);
        if (!freshDrop.length && !freshRelax.length) return null;
        next = { drop: [...e.drop, ...freshDrop], relax: [...e.relax.filter((r) => !has(freshDrop, r)), ...freshRelax] };
      }
      const derived = next.drop.length <= MAX_DROPPED ? withoutRequirements(e.origin, next.drop, next.relax) : null;
      const key = derived === null ? null : await candidateKey(req, derived, opts.images.sources);
      const them = (n: string[]): string => (n.length > 1 ? 'them' : 'it');
      const parts = [
        ...(freshDrop.length ? [`without ${freshDrop.join(', ')} (the offline wheels cannot provide ${them(freshDrop)}; the PR's tests do not import ${them(freshDrop)})`] : []),
        ...(freshRelax.length ? [`with ${freshRelax.join(', ')} unpinned (no offline version satisfies the pin)`] : []),
      ];
      const retried = recorded ? `retried as "${derived?.label ?? ''}" (as recorded)` : `retried ${parts.join(' and ')}`;
      const enqueue = (): { note: string; retry?: Retry } | null => {
        if (derived === null || key === null || queued.has(key) || passedOver({ c: derived, origin: e.origin })) return null;
        queued.add(key);
        queue.splice(at + 1, 0, { c: derived, key, origin: e.origin, drop: next.drop, relax: next.relax });
        return { note: retried, retry: next };
      };
      // A retry on record is taken again whatever this PR's tests import: its outcome and what it left out are
      // recorded, and a choice that leaves out what they import is passed over by the caller (era.ts).
      if (recorded || (key !== null && before.has(key))) return enqueue();
      const needed: string[] = [];
      for (const n of freshDrop) {
        const where = await needs(n, e.c.recipe.runner);
        if (where !== null) needed.push(`${n} is needed: ${where}`);
      }
      if (needed.length) return { note: `not left out: ${needed.join('; ')}` };
      if (next.drop.length > MAX_DROPPED) return { note: `not retried: more than ${MAX_DROPPED} requirements unavailable` };
      return enqueue();
    };

    for (let at = 0; at < queue.length; at++) {
      const e = queue[at]!;
      const { c, key } = e;
      const prior = before.get(key);
      const origin = e.origin !== c ? { from: e.origin.label } : {};
      const unpinned = e.relax.length ? { unpinned: e.relax } : {};
      const reject = (reason: string, stage: Rejection['stage'], built: boolean, dropped: string[] = e.drop, retry?: Retry): void => {
        tried.push({ label: c.label, envKey: key, outcome: 'rejected', reason, install: c.recipe.install, stage, ...origin, ...(dropped.length ? { dropped } : {}), ...unpinned, ...(retry ? { retry } : {}) });
        rejected.push({ label: c.label, reason, stage, built });
      };
      /** A rejection for an install that did not give what the tests need, with the retry it leads to. */
      const rejectInstall = async (reason: string, stage: Rejection['stage'], built: boolean, detail: string = reason): Promise<void> => {
        const r = await retryWithout(at, e, detail);
        reject(r === null ? reason : `${reason} (${r.note})`, stage, built, e.drop, r?.retry);
        if (r !== null) logLine(req.log, `install candidate "${c.label}" at ${short}: ${r.note}`);
      };
      if (passedOver(e)) continue;
      if (prior?.outcome === 'rejected') {
        // Its retry without what it could not install is derived again (same key: its own record is reused).
        const r = (prior.stage ?? 'install') !== 'report' ? await retryWithout(at, e, prior.reason, prior.retry) : null;
        reject(prior.reason, prior.stage ?? 'install', false, prior.dropped ?? e.drop, r?.retry ?? prior.retry);
        continue;
      }
      const noEditable = editableUnsupported.get(c.recipe.python);
      if (noEditable !== undefined) {
        reject(`not built: this Python's pip cannot install the project in editable mode (${noEditable})`, 'skipped', false);
        continue;
      }
      const missing = backendMissing.get(c.recipe.python);
      if (c.isolated && missing !== undefined) {
        reject(`not built: the build backend cannot be installed offline (${missing})`, 'skipped', false);
        continue;
      }
      const twin = c.label.replace('no-isolation ', '');
      if (!c.isolated && installed.has(twin)) {
        reject(`not built: "${twin}" installs the same packages`, 'skipped', false);
        continue;
      }
      const absent = prior === undefined && e.origin === c ? absentElsewhere.get(c.label) : undefined;
      if (absent !== undefined && namesPackage(await readMetadata(), absent.pkg)) {
        learned = true;
        await rejectInstall(`not built: at ${absent.commit.slice(0, 10)} it failed on ${absent.pkg}, which the offline wheels lack and this commit still names (${absent.reason})`, 'skipped', false, absent.reason);
        continue;
      }
      if (fallback && reportRejections >= MAX_REPORT_REJECTIONS) {
        reject(`not built: ${MAX_REPORT_REJECTIONS} candidates installed without a usable report`, 'skipped', false);
        continue;
      }
      if (at > 0 && prior === undefined) logLine(req.log, `trying install candidate ${at + 1}/${queue.length} "${c.label}" at ${short}`);
      const res = await images.envImageFor({ ...req, recipe: c.recipe });
      if (!res.ok) {
        last = res;
        learned = true;
        const reason = rejectionReason(res.detail);
        if (c.isolated && backendUnavailable(res.detail)) backendMissing.set(c.recipe.python, `"${c.label}": ${reason}`);
        // An old pip (bullseye's 20.3) and a pyproject-only project: every editable candidate of this Python fails alike.
        if (/cannot be installed in editable mode/.test(reason)) editableUnsupported.set(c.recipe.python, `"${c.label}"`);
        await rejectInstall(reason, 'install', true, res.detail);
        continue;
      }
      if (c.isolated) installed.add(c.label);
      // What the install left out: the requirements this candidate drops, and what its best-effort steps skipped.
      const dropped = prior?.outcome === 'chosen' ? (prior.dropped ?? []) : await droppedBy(e, res);
      if (prior === undefined && dropped.length) {
        const needed: string[] = [];
        for (const d of dropped) {
          const where = await needs(d, c.recipe.runner);
          if (where !== null) needed.push(`${d} (${where})`);
        }
        if (needed.length) {
          learned = true;
          reject(`installed without what the PR's tests need, which the offline wheels cannot provide: ${needed.join('; ')}`, 'install', true, dropped);
          continue;
        }
      }
      // A check recorded by an earlier run is reused; a choice recorded before probes existed is probed now.
      let check = prior?.check ?? null;
      let env = prior?.env;
      if (check === null && verify) {
        logLine(req.log, `checking install candidate "${c.label}" at ${short}: its runner on the PR's test files`);
        const probe = async (cand: RecipeCandidate): Promise<EnvCheck> => {
          const run = await verify(res.image, cand);
          return run === null ? { kind: 'inconclusive', detail: 'no test file to run' } : checkReport(run, getRunner(cand.recipe.runner).exitCodes);
        };
        let v = await probe(c);
        if (v.kind === 'unusable' && c.recipe.runner === 'pytest' && /\b(Pending)?DeprecationWarning\b/.test(v.detail) && c.recipe.env['PYTEST_ADDOPTS'] === undefined) {
          const relaxed = await probe(withEnv(c, DEPRECATIONS_AS_WARNINGS));
          if (relaxed.kind !== 'unusable') {
            env = DEPRECATIONS_AS_WARNINGS;
            v = { kind: relaxed.kind, detail: `${relaxed.detail}; deprecation warnings left as warnings (${v.detail})` };
          }
        }
        learned = true;
        if (v.kind === 'unusable') {
          fallback ??= { at: tried.length, candidate: c, result: res, detail: v.detail, dropped };
          reportRejections++;
          reject(`unusable report: ${v.detail}`, 'report', true, dropped);
          continue;
        }
        check = `${v.kind}: ${v.detail}`;
      }
      tried.push({ label: c.label, envKey: key, outcome: 'chosen', reason: res.image, install: c.recipe.install, ...origin, ...(dropped.length ? { dropped } : {}), ...unpinned, ...(env ? { env } : {}), ...(check !== null ? { check } : {}) });
      if (dropped.length) logLine(req.log, `install candidate "${c.label}" at ${short} leaves out ${dropped.join(', ')}: the offline wheels cannot provide ${dropped.length > 1 ? 'them' : 'it'} and the PR's tests do not import ${dropped.length > 1 ? 'them' : 'it'}`);
      return ready(withEnv(c, env), res, check, dropped);
    }
    if (fallback) {
      // Every candidate that installs gives an unusable report: the first is kept, and says so.
      const check = `unverified: no candidate gave a usable report (${fallback.detail})`;
      const { candidate: c, result: res, dropped } = fallback;
      const at = tried[fallback.at]!;
      tried[fallback.at] = { label: c.label, envKey: at.envKey, outcome: 'chosen', reason: res.image, install: c.recipe.install, ...(at.from ? { from: at.from } : {}), ...(dropped.length ? { dropped } : {}), ...(at.unpinned ? { unpinned: at.unpinned } : {}), check };
      rejected.splice(rejected.findIndex((r) => r.label === c.label), 1);
      return ready(c, res, check, dropped);
    }
    await record(null);
    return { kind: 'failed', rejected, last };
  }
}
