/**
 * Detected recipes that verify themselves: the install candidates of a repository without a recipe file
 * (recipes/detect.ts) are built in order until one installs. An install failure moves to the next
 * candidate (a failing test never does: tests do not run here). The outcome of each era (the chosen
 * candidate, the rejected ones with a one-line reason) is saved in `data/<repo>/env-recipes.json` and
 * reused by the next run: a rejected candidate is not built again (an offline install is deterministic).
 *
 * An era is keyed by the keys of all its candidates (base image tag, recipe, dependency files' content).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeAtomic } from '../../artifacts.ts';
import { ForesightError } from '../../errors.ts';
import { fingerprint } from '../../fingerprint.ts';
import type { RecipeCandidate } from '../recipes/detect.ts';
import { BASE_SCRIPT, baseImageTag } from './base.ts';
import type { EnvImages } from './env-images.ts';
import { releaseOf } from './release.ts';
import { logLine } from './docker-image.ts';
import { envImageKey } from './key.ts';
import type { EnvImageRequest, EnvImageResult } from './types.ts';

/** The choice file's name under data/<repo>/. */
export const CHOICE_FILE = 'env-recipes.json';

const TriedSchema = z.object({
  label: z.string(),
  /** The candidate's env key computed on the base's tag (not the env image's tag, which uses the base's id). */
  envKey: z.string(),
  outcome: z.enum(['chosen', 'rejected']),
  /** Why it was rejected (one line), or the env image it chose (`foresight-env:<key>`). */
  reason: z.string(),
  install: z.array(z.string()),
});

const EraSchema = z.object({
  /** The commit at which the era was first resolved. */
  commit: z.string(),
  chosen: z.string().nullable(),
  tried: z.array(TriedSchema),
  updated: z.string(),
});

const ChoiceFileSchema = z.object({ version: z.literal(1), eras: z.record(z.string(), EraSchema) });

export type ChoiceFile = z.infer<typeof ChoiceFileSchema>;
export type TriedCandidate = z.infer<typeof TriedSchema>;

export interface Rejection {
  label: string;
  reason: string;
  /** True when this run built it; false when the choice file already said so. */
  built: boolean;
}

type Ok = Extract<EnvImageResult, { ok: true }>;
type Failed = Extract<EnvImageResult, { ok: false }>;

export type ChosenEnv =
  | { kind: 'ready'; candidate: RecipeCandidate; result: Ok; rejected: Rejection[] }
  | { kind: 'failed'; rejected: Rejection[]; /** The last build that failed in this run, if any. */ last: Failed | null };

/**
 * The telling line of a failed build's detail: pip's last `ERROR:` line (not its closing "for help visit" /
 * "Command errored out" ones), else the last Python exception (`SyntaxError: …` from a setup.py), else pip's
 * last `×` summary, else the last line.
 */
export function rejectionReason(detail: string): string {
  const lines = detail.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('[foresight]'));
  const tiers = [
    (l: string) => /^ERROR\b/.test(l) && !/for help visit|Command errored out/.test(l),
    (l: string) => /^[A-Za-z_.]*(Error|Exception): /.test(l),
    (l: string) => /^(ERROR|error)\b|^×/.test(l),
  ];
  for (const tier of tiers) {
    const hit = [...lines].reverse().find(tier);
    if (hit) return hit.slice(0, 300);
  }
  return (lines.at(-1) ?? 'install failed').slice(0, 300);
}

/** The build backend itself could not be installed (an isolated build's pin the offline wheels lack). */
export function backendUnavailable(detail: string): boolean {
  return /(?:build|backend) dependencies: finished with status 'error'|to install (?:build|backend) dependencies did not run successfully/.test(detail);
}

export interface ChooseEnvOptions {
  images: EnvImages;
  /** The env request without its recipe (each candidate brings its own). */
  req: Omit<EnvImageRequest, 'recipe'>;
  candidates: readonly [RecipeCandidate, ...RecipeCandidate[]];
}

/**
 * One repository's choice file, for one run. Reads it once; writes are serialised (chains validated at
 * once resolve eras side by side) and atomic.
 */
export class EnvChoices {
  private state: Promise<ChoiceFile> | null = null;
  private writing: Promise<void> = Promise.resolve();

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

  private save(eraKey: string, era: z.infer<typeof EraSchema>): Promise<void> {
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

  /** The first candidate that installs at `req.commit`, reusing what earlier runs learned. */
  async choose(opts: ChooseEnvOptions): Promise<ChosenEnv> {
    const { images, req, candidates } = opts;
    // Keyed by the base's tag (the build script's hash per release), not its id: no base is built to look up a choice.
    const keys = await Promise.all(
      candidates.map(async (c) => (await envImageKey({ clone: req.clone, commit: req.commit, recipe: c.recipe, baseId: await baseImageTag(BASE_SCRIPT, releaseOf(c.recipe.python)) })).key),
    );
    const eraKey = fingerprint('foresight-env-choice/1', keys).slice(0, 24);
    const known = (await this.load()).eras[eraKey];
    const before = new Map((known?.tried ?? []).map((t) => [t.envKey, t]));

    const tried: TriedCandidate[] = [];
    const rejected: Rejection[] = [];
    let last: Failed | null = null;
    const backendMissing = new Map<string, string>();
    for (const [i, c] of candidates.entries()) {
      const key = keys[i]!;
      const prior = before.get(key);
      const reject = async (reason: string, built: boolean): Promise<void> => {
        tried.push({ label: c.label, envKey: key, outcome: 'rejected', reason, install: c.recipe.install });
        rejected.push({ label: c.label, reason, built });
      };
      if (prior?.outcome === 'rejected') {
        await reject(prior.reason, false);
        continue;
      }
      const missing = backendMissing.get(c.recipe.python);
      if (c.isolated && missing !== undefined) {
        await reject(`not built: the build backend cannot be installed offline (${missing})`, false);
        continue;
      }
      if (i > 0 && prior === undefined) logLine(req.log, `trying install candidate ${i + 1}/${candidates.length} "${c.label}" at ${req.commit.slice(0, 10)}`);
      const res = await images.envImageFor({ ...req, recipe: c.recipe });
      if (res.ok) {
        tried.push({ label: c.label, envKey: key, outcome: 'chosen', reason: res.image, install: c.recipe.install });
        const changed = !known || known.chosen !== c.label || rejected.some((r) => r.built);
        if (changed) await this.save(eraKey, { commit: known?.commit ?? req.commit, chosen: c.label, tried, updated: new Date().toISOString() });
        if (rejected.some((r) => r.built)) logLine(req.log, `install candidate "${c.label}" chosen at ${req.commit.slice(0, 10)} (rejected: ${rejected.map((r) => `"${r.label}": ${r.reason}`).join('; ')})`);
        return { kind: 'ready', candidate: c, result: res, rejected };
      }
      last = res;
      const reason = rejectionReason(res.detail);
      if (c.isolated && backendUnavailable(res.detail)) backendMissing.set(c.recipe.python, `"${c.label}": ${reason}`);
      await reject(reason, true);
    }
    if (!known || rejected.some((r) => r.built)) await this.save(eraKey, { commit: known?.commit ?? req.commit, chosen: null, tried, updated: new Date().toISOString() });
    return { kind: 'failed', rejected, last };
  }
}
