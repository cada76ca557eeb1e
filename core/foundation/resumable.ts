/**
 * One resumable map: the per-item loop that stages, `foresight eval` and `szz-eval --execute` share. Each
 * item's result is checkpointed under a key that covers the code computing it (the import closure of the
 * module that computes it, core/foundation/code-closure.ts), the settings it depends on and the item itself;
 * a rerun reuses every result whose key is unchanged and redoes the rest. No version constant is bumped by
 * hand: changing a line of that code changes every key.
 *
 * Its rules, in one place:
 *  - a checkpointed value that no longer fits the result schema is redone, never a crash;
 *  - the first failure latches: no new item starts, the running ones settle (and are checkpointed), then
 *    that failure is thrown;
 *  - an abort (SIGINT, SIGTERM) stops at once, and a result that finished after it is never kept (it may
 *    come from killed containers);
 *  - a result the caller marks `keep: false` (our infrastructure failed: never evidence) is returned but
 *    not checkpointed, so the next run tries again;
 *  - progress counts computed items only (reused ones took no time), so the rate and ETA are honest.
 */
import PQueue from 'p-queue';
import type { z } from 'zod';
import { Checkpoint } from './artifacts.ts';
import { codeClosure } from './code-closure.ts';
import type { Fingerprint } from './fingerprint.ts';
import type { Logger } from './log.ts';
import { PROJECT_ROOT } from './version.ts';

/** The fingerprint of the code a module runs: its import closure's files and packages, as the files are now. */
export async function codeKey(entry: string, root: string = PROJECT_ROOT): Promise<Fingerprint> {
  return (await codeClosure(entry, root)).fingerprint;
}

export interface ResumableOptions<I, R> {
  /** The checkpoint file (jsonl of `{key, value}`), or an open one shared by several maps of one run. */
  checkpoint: Checkpoint | string;
  /** What the items are, for progress lines ("validating chains"). */
  label: string;
  log: Logger;
  signal: AbortSignal;
  concurrency?: number;
  /**
   * The checkpoint key of an item. It must cover everything its result depends on: build it with
   * `fingerprint(code, settings, item)`, `code` from `codeKey(<the computing module>)`.
   */
  key: (item: I, index: number) => Fingerprint;
  /** A short name of the item for logs. */
  id: (item: I) => string;
  /** The checkpointed result's shape: a saved value is checked against it before it is reused. */
  schema: z.ZodType<R>;
  /** Compute one item. `keep: false` returns the result without checkpointing it. */
  compute: (item: I, key: Fingerprint, index: number) => Promise<R | Unkept<R>>;
}

/** A result returned to the caller but not checkpointed (our infrastructure failed: the next run tries again). */
export class Unkept<R> {
  constructor(readonly value: R) {}
}
export const unkept = <R>(value: R): Unkept<R> => new Unkept(value);

export interface ResumableResult<R> {
  /** One result per item, in the items' order. */
  results: R[];
  /** Per item: read from the checkpoint (no work done this time). */
  fromCheckpoint: boolean[];
  reused: number;
  computed: number;
  /** The keys of this run's items (for `Checkpoint.compact`). */
  keys: Set<Fingerprint>;
  checkpoint: Checkpoint;
}

/** Map `items` through `compute`, resuming from the checkpoint (the rules are in this file's header). */
export async function resumableMap<I, R>(items: readonly I[], o: ResumableOptions<I, R>): Promise<ResumableResult<R>> {
  const checkpoint = typeof o.checkpoint === 'string' ? await Checkpoint.open(o.checkpoint) : o.checkpoint;
  const results = new Array<R>(items.length);
  const fromCheckpoint = new Array<boolean>(items.length).fill(false);
  const keys = new Set<Fingerprint>();
  const queue = new PQueue({ concurrency: Math.max(1, o.concurrency ?? 1) });
  let done = 0;
  let reused = 0;
  let computed = 0;
  let failure: { error: unknown } | undefined;
  // The loop's clock starts here, so the first item's time is in the rate.
  if (items.length) o.log.progress(o.label, 0, items.length);
  const tasks = items.map((item, i) =>
    queue.add(async () => {
      // Once an item has failed, start no more: the queue would otherwise keep working after the caller failed.
      if (failure) return;
      try {
        o.signal.throwIfAborted();
        const key = o.key(item, i);
        keys.add(key);
        // A checkpointed value of another shape (an older schema, a hand edit) is redone, never a crash.
        const saved = checkpoint.has(key) ? o.schema.safeParse(checkpoint.get(key)) : null;
        if (saved?.success) {
          results[i] = saved.data;
          fromCheckpoint[i] = true;
          reused++;
        } else {
          if (saved) o.log.debug(`${o.label}: ${o.id(item)}: checkpoint does not fit the schema (${saved.error.issues[0]?.message}), redoing it`);
          o.log.debug(`${o.label}: ${o.id(item)}`);
          const out = await o.compute(item, key, i);
          // A result that finished after an abort may come from killed containers: never kept.
          o.signal.throwIfAborted();
          if (out instanceof Unkept) results[i] = out.value as R;
          else {
            const value = o.schema.parse(out);
            await checkpoint.put(key, value);
            results[i] = value;
          }
          computed++;
        }
        o.log.progress(o.label, ++done, items.length, { reused });
      } catch (error) {
        failure ??= { error };
      }
    }),
  );
  // Every task settles (the running ones are checkpointed) before the first error is reported.
  await Promise.all(tasks);
  if (o.signal.aborted) throw o.signal.reason;
  if (failure) throw failure.error;
  return { results, fromCheckpoint, reused, computed, keys, checkpoint };
}
