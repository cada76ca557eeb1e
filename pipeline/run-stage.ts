import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import PQueue from 'p-queue';
import {
  Checkpoint,
  readJsonl,
  readManifest,
  removeManifest,
  repoDataDir,
  stageDir,
  toJsonl,
  writeAtomic,
  writeManifest,
} from '../core/artifacts.ts';
import type { Config } from '../core/config.ts';
import { ForesightError } from '../core/errors.ts';
import { fingerprint, hashTree, type Fingerprint } from '../core/fingerprint.ts';
import type { Logger } from '../core/log.ts';
import { STAGES, type AnyStage, type RepoContext, type StageContext } from '../core/stage.ts';
import { FORESIGHT_VERSION, PROJECT_ROOT } from '../core/version.ts';

export interface RunStageOptions {
  dataRoot: string;
  repo: RepoContext;
  config: Config;
  log: Logger;
  force?: boolean;
  signal?: AbortSignal;
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
    items = await readJsonl(join(prevDir, OUTPUT_FILE), def.input);
  } else if (def.source) {
    upstream = await def.source({ repo, config });
  } else {
    throw new Error(`stage ${def.name} has neither an input schema nor a source`);
  }

  const code = await hashTree(PROJECT_ROOT, def.code);
  const cfg = fingerprint(def.config(config));
  const fp = fingerprint(def.name, upstream, code, cfg, FORESIGHT_VERSION);

  const previous = await readManifest(dir);
  if (!opts.force && previous?.fingerprint === fp && existsSync(join(dir, OUTPUT_FILE))) {
    log.info(`up to date (${previous.items} items), nothing to do`);
    return { stage: def.name, outcome: 'up-to-date', items: previous.items };
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
    repo,
    config,
    log,
    outDir: dir,
    repoDir: repoDataDir(dataRoot, repo.name),
    signal: opts.signal ?? new AbortController().signal,
    async forEach(list, feOpts, fn) {
      const schema = feOpts.schema ?? def.output;
      const results = new Array(list.length);
      const queue = new PQueue({ concurrency: feOpts.concurrency ?? 1 });
      let done = 0;
      let failure: { error: unknown } | undefined;
      const tasks = list.map((item, i) =>
        queue.add(async () => {
          // Once an item has failed, start no more: the queue would otherwise keep working after the stage failed.
          if (failure) return;
          try {
            ctx.signal.throwIfAborted();
            const key = fingerprint(def.name, code, cfg, item);
            used.add(key);
            if (checkpoint.has(key)) {
              results[i] = schema.parse(checkpoint.get(key));
              reused++;
            } else {
              log.debug(`${feOpts.label}: ${feOpts.id(item)}`);
              const out = schema.parse(await fn(item));
              await checkpoint.put(key, out);
              results[i] = out;
              computed++;
            }
            log.progress(feOpts.label, ++done, list.length);
          } catch (error) {
            failure ??= { error };
          }
        }),
      );
      // Every task settles (the running ones are checkpointed) before the first error is reported.
      await Promise.all(tasks);
      if (failure) throw failure.error;
      return results;
    },
  };

  const started = Date.now();
  const out = await def.run(items, ctx);
  const text = toJsonl(out.items.map((i) => def.output.parse(i)));
  await writeAtomic(join(dir, OUTPUT_FILE), text);
  await writeManifest(dir, {
    stage: def.name,
    // An incomplete output (a service was down) never matches, so the next run tries again.
    fingerprint: out.complete === false ? `incomplete:${fp}` : fp,
    inputs: { upstream, code, config: cfg },
    output: fingerprint(text),
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
