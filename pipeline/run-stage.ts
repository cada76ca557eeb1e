import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  Checkpoint,
  contentFingerprint,
  readJsonl,
  readManifest,
  removeManifest,
  repoDataDir,
  stageDir,
  toJsonl,
  writeAtomic,
  writeManifest,
} from '../core/foundation/artifacts.ts';
import { codeClosure } from '../core/foundation/code-closure.ts';
import { NO_SECRETS, type Config, type Secrets } from '../core/foundation/config.ts';
import { redact } from '../core/foundation/secrets.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import { resumableMap } from '../core/foundation/resumable.ts';
import { fingerprint, type Fingerprint } from '../core/foundation/fingerprint.ts';
import type { Logger } from '../core/foundation/log.ts';
import { STAGES, type AnyStage, type RepoContext, type StageContext } from '../core/foundation/stage.ts';
import { FORESIGHT_VERSION, PROJECT_ROOT } from '../core/foundation/version.ts';

export interface RunStageOptions {
  dataRoot: string;
  repo: RepoContext;
  config: Config;
  /** Credentials for the stages that talk to services (default: none). */
  secrets?: Secrets;
  log: Logger;
  force?: boolean;
  signal?: AbortSignal;
  /** The project whose files a stage's code fingerprint names (default: this project). */
  codeRoot?: string;
}

export type StageResult =
  | { stage: string; outcome: 'up-to-date'; items: number }
  | { stage: string; outcome: 'ran'; items: number; reused: number; computed: number; stats: Record<string, number> };

const OUTPUT_FILE = 'items.jsonl';

export function stageOutputPath(dataRoot: string, repo: string, stage: string): string {
  return join(stageDir(dataRoot, repo, stage), OUTPUT_FILE);
}

/** Run one stage if anything it depends on changed (or when forced); otherwise do nothing. */
export async function runStage(def: AnyStage, opts: RunStageOptions): Promise<StageResult> {
  const { dataRoot, repo, config } = opts;
  const log = opts.log.child({ stage: def.name });
  const dir = stageDir(dataRoot, repo.name, def.name);

  let upstream: Fingerprint;
  let items: unknown[] = [];
  if (def.input) {
    const prev = STAGES[STAGES.indexOf(def.name) - 1]!;
    const prevDir = stageDir(dataRoot, repo.name, prev);
    const prevManifest = await readManifest(prevDir);
    if (!prevManifest) {
      throw new ForesightError(`stage ${def.name} needs the ${prev} artifact, which is missing or unfinished in ${prevDir}`, {
        remedy: `run it first: foresight run --repo ${repo.name} (or --from ${prev})`,
      });
    }
    // What the upstream stage produced, not what it was asked: a rerun with identical output costs nothing downstream.
    upstream = prevManifest.output as Fingerprint;
    const prevOutput = join(prevDir, OUTPUT_FILE);
    // A file cut at a line boundary still parses, as fewer records: only its recorded hash tells.
    const actual = await outputFingerprint(prevOutput);
    if (actual !== upstream) {
      const what = actual === null ? 'was deleted' : 'changed or was truncated';
      throw new ForesightError(`${prevOutput} ${what} after ${prev} finished (it no longer matches ${prev}'s manifest)`, {
        remedy: `rerun it: foresight run --repo ${repo.name} --from ${prev}`,
      });
    }
    items = await readJsonl(prevOutput, def.input);
  } else if (def.source) {
    upstream = await def.source({ repo, config, secrets: opts.secrets ?? NO_SECRETS });
  } else {
    throw new Error(`stage ${def.name} has neither an input schema nor a source`);
  }

  const closure = await codeClosure(def.entry, opts.codeRoot ?? PROJECT_ROOT);
  const code = closure.fingerprint;
  log.debug(`code: ${closure.files.length} files, ${closure.packages.length} packages`, { code, files: closure.files, packages: closure.packages });
  const cfg = fingerprint(def.config(config));
  // Earlier stages' manifests the stage reads: what produced them, their output and stats (missing: null, so running them changes the key).
  const reads = await Promise.all(
    (def.reads ?? []).map(async (s) => {
      const m = await readManifest(stageDir(dataRoot, repo.name, s));
      return { stage: s, manifest: m && { fingerprint: m.fingerprint, output: m.output, stats: m.stats } };
    }),
  );
  const fp = reads.length ? fingerprint(def.name, upstream, code, cfg, FORESIGHT_VERSION, reads) : fingerprint(def.name, upstream, code, cfg, FORESIGHT_VERSION);

  const previous = await readManifest(dir);
  if (!opts.force && previous?.fingerprint === fp) {
    // The output must still be what the manifest recorded: an edited or truncated file is rebuilt, not passed on.
    if ((await outputFingerprint(join(dir, OUTPUT_FILE))) === previous.output) {
      log.info(`up to date (${previous.items} items), nothing to do`);
      return { stage: def.name, outcome: 'up-to-date', items: previous.items };
    }
    log.warn(`${join(dir, OUTPUT_FILE)} is missing or no longer matches the manifest: rebuilding it`);
  }

  // Invalidate before running: a crash mid-way must never leave an old manifest over new output.
  await removeManifest(dir);
  const cpPath = join(dir, 'checkpoint.jsonl');
  if (opts.force) await rm(cpPath, { force: true });
  const checkpoint = await Checkpoint.open(cpPath);
  const used = new Set<string>();
  let reused = 0;
  let computed = 0;

  const ctx: StageContext = {
    secrets: opts.secrets ?? NO_SECRETS,
    repo,
    config,
    log,
    outDir: dir,
    repoDir: repoDataDir(dataRoot, repo.name),
    signal: opts.signal ?? new AbortController().signal,
    async forEach(list, feOpts, fn) {
      const r = await resumableMap(list, {
        checkpoint,
        label: feOpts.label,
        log,
        signal: ctx.signal,
        concurrency: feOpts.concurrency,
        key: (item) => fingerprint(def.name, code, cfg, item),
        id: feOpts.id,
        schema: feOpts.schema ?? def.output,
        compute: (item, key) => fn(item, key),
      });
      for (const k of r.keys) used.add(k);
      reused += r.reused;
      computed += r.computed;
      return r.results;
    },
  };

  const started = Date.now();
  const out = await def.run(items, ctx);
  // Hashed as written: writeAtomic redacts secrets, and the manifest must match the file.
  const text = redact(toJsonl(out.items.map((i) => def.output.parse(i))));
  const outPath = join(dir, OUTPUT_FILE);
  await writeAtomic(outPath, text);
  // Read back, so the manifest records exactly what every later check will read.
  const output = await outputFingerprint(outPath);
  if (output === null) throw new Error(`${outPath} vanished right after it was written`);
  await writeManifest(dir, {
    stage: def.name,
    // An incomplete output (a service was down) never matches, so the next run tries again.
    fingerprint: out.complete === false ? `incomplete:${fp}` : fp,
    inputs: { upstream, code, config: cfg },
    output,
    items: out.items.length,
    stats: out.stats,
    finishedAt: new Date().toISOString(),
    foresightVersion: FORESIGHT_VERSION,
  });
  await checkpoint.compact(used);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  const statText = Object.entries(out.stats).map(([k, v]) => `${k}=${v}`).join(' ');
  const work = computed + reused ? ` (${computed} computed, ${reused} reused from checkpoint)` : '';
  if (out.complete === false) log.warn('the output is incomplete (see the warnings above): the next run will redo this stage');
  log.info(`done in ${secs}s: ${out.items.length} items${work}${statText ? ` — ${statText}` : ''}`);
  return { stage: def.name, outcome: 'ran', items: out.items.length, reused, computed, stats: out.stats };
}

/** The fingerprint a manifest records for an output file's text; null when the file is missing. */
async function outputFingerprint(path: string): Promise<Fingerprint | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : contentFingerprint(text);
}
