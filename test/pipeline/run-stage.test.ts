import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJsonl, stageDir } from '../../core/foundation/artifacts.ts';
import { loadConfig, type Config } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { runStage, stageOutputPath, type RunStageOptions, type StageResult } from '../../pipeline/run-stage.ts';
import type { StageDef } from '../../core/foundation/stage.ts';

const REPO = 'acme/widgets';

const ItemSchema = z.object({ id: z.string(), v: z.number() });
type Item = z.infer<typeof ItemSchema>;
const OutSchema = z.object({ id: z.string(), doubled: z.number() });
type Out = z.infer<typeof OutSchema>;

/** The mutable world the fake stages read: tests change it between runs. */
interface World {
  /** What discover's `source()` fingerprints (the "repository state"). */
  repoState: string;
  /** discover's output records. */
  list: Item[];
  /** szz throws on this item id (after the earlier ones were checkpointed). */
  failAt: string | null;
  /** Item ids szz's work function was called with, in order. */
  calls: string[];
  concurrency: number;
}

function discoverDef(w: World): StageDef<never, Item> {
  return {
    name: 'discover',
    entry: pathToFileURL(join(codeRoot(), 'discover.ts')).href,
    config: (cfg) => cfg.discover,
    input: null,
    output: ItemSchema,
    source: async () => fingerprint(w.repoState),
    run: async () => ({ items: w.list, stats: { items: w.list.length } }),
  };
}

function szzDef(w: World): StageDef<Item, Out> {
  return {
    name: 'szz',
    entry: pathToFileURL(join(codeRoot(), 'szz.ts')).href,
    config: (cfg) => cfg.szz,
    input: ItemSchema,
    output: OutSchema,
    async run(items, ctx) {
      const out = await ctx.forEach(items, { id: (i) => i.id, label: 'doubling', concurrency: w.concurrency }, async (i) => {
        w.calls.push(i.id);
        if (w.failAt === i.id) throw new Error(`boom on ${i.id}`);
        return { id: i.id, doubled: i.v * 2 };
      });
      return { items: out, stats: { items: out.length } };
    },
  };
}

const items = (n: number): Item[] => Array.from({ length: n }, (_, k) => ({ id: `i${k}`, v: k }));

let root: string;
let config: Config;
let w: World;

/** The fake stages' own modules (their code fingerprints), in a throw-away project of their own. */
const codeRoot = () => join(root, 'code');

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'foresight-run-stage-'));
  config = loadConfig({});
  w = { repoState: 'head-1', list: items(5), failAt: null, calls: [], concurrency: 1 };
  await mkdir(codeRoot());
  await writeFile(join(codeRoot(), 'discover.ts'), 'export const v = 1;\n');
  await writeFile(join(codeRoot(), 'szz.ts'), 'export const v = 1;\n');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function opts(extra: Partial<RunStageOptions> = {}): RunStageOptions {
  return { dataRoot: root, repo: { name: REPO, clone: root }, config, log: silentLogger, codeRoot: codeRoot(), ...extra };
}

const runDiscover = (extra: Partial<RunStageOptions> = {}) => runStage(discoverDef(w), opts(extra));
const runSzz = (extra: Partial<RunStageOptions> = {}) => runStage(szzDef(w), opts(extra));
const szzDir = () => stageDir(root, REPO, 'szz');
const manifestExists = (stage: string) => existsSync(join(stageDir(root, REPO, stage), 'manifest.json'));

function ran(r: StageResult): { reused: number; computed: number } {
  if (r.outcome !== 'ran') throw new Error(`expected the stage to run, got ${r.outcome}`);
  return { reused: r.reused, computed: r.computed };
}

/** What `p` rejected with; a fulfilment fails the test. */
const caught = (p: Promise<unknown>): Promise<unknown> => p.then(() => Promise.reject(new Error('expected a rejection')), (e: unknown) => e);

describe('runStage caching', () => {
  it('a second run with unchanged inputs does no work', async () => {
    await runDiscover();
    expect(ran(await runSzz())).toEqual({ reused: 0, computed: 5 });
    w.calls = [];

    expect(await runDiscover()).toEqual({ stage: 'discover', outcome: 'up-to-date', items: 5 });
    expect(await runSzz()).toEqual({ stage: 'szz', outcome: 'up-to-date', items: 5 });
    expect(w.calls).toEqual([]);
    expect(await readJsonl(stageOutputPath(root, REPO, 'szz'), OutSchema)).toEqual(w.list.map((i) => ({ id: i.id, doubled: i.v * 2 })));
  });

  it('an upstream rerun that produces identical records costs nothing downstream', async () => {
    await runDiscover();
    await runSzz();
    w.calls = [];

    w.repoState = 'head-2'; // same records, new repository state
    expect((await runDiscover()).outcome).toBe('ran');
    // szz keys on what discover produced, which did not change.
    expect((await runSzz()).outcome).toBe('up-to-date');
    expect(w.calls).toEqual([]);
  });

  it('a changed config reruns the stage and recomputes every item (items are keyed by config)', async () => {
    await runDiscover();
    await runSzz();
    w.calls = [];

    config = { ...config, szz: { ...config.szz, concurrency: config.szz.concurrency + 1 } };
    expect(await runDiscover()).toMatchObject({ outcome: 'up-to-date' }); // discover does not read szz's section
    expect(ran(await runSzz())).toEqual({ reused: 0, computed: 5 });
    expect(w.calls).toHaveLength(5);
  });

  it("a changed stage module reruns the stage and recomputes its items (items are keyed by the stage's code)", async () => {
    await runDiscover();
    await runSzz();
    expect((await runSzz()).outcome).toBe('up-to-date');
    w.calls = [];

    await writeFile(join(codeRoot(), 'szz.ts'), 'export const v = 2;\n');
    expect(await runDiscover()).toMatchObject({ outcome: 'up-to-date' });
    expect(ran(await runSzz())).toEqual({ reused: 0, computed: 5 });
    expect(w.calls).toHaveLength(5);
  });

  it('force reruns an up-to-date stage and recomputes its items', async () => {
    await runDiscover();
    await runSzz();
    w.calls = [];

    expect(ran(await runSzz({ force: true }))).toEqual({ reused: 0, computed: 5 });
    expect(w.calls).toHaveLength(5);
  });

  it('a deleted output file makes the stage rerun even though the manifest matches', async () => {
    await runDiscover();
    await runSzz();
    await rm(stageOutputPath(root, REPO, 'szz'));
    expect((await runSzz()).outcome).toBe('ran');
    expect(existsSync(stageOutputPath(root, REPO, 'szz'))).toBe(true);
  });

  it('an item whose content changed is recomputed while unchanged items are reused', async () => {
    await runDiscover();
    await runSzz();
    w.calls = [];

    w.repoState = 'head-2';
    w.list = w.list.map((i) => (i.id === 'i2' ? { ...i, v: 100 } : i));
    await runDiscover();
    expect(ran(await runSzz())).toEqual({ reused: 4, computed: 1 });
    expect(w.calls).toEqual(['i2']);
    const out = await readJsonl(stageOutputPath(root, REPO, 'szz'), OutSchema);
    expect(out.find((o) => o.id === 'i2')).toEqual({ id: 'i2', doubled: 200 });
  });
});

describe('runStage interrupted runs', () => {
  it('a stage that throws midway leaves no manifest, and the rerun computes only the unfinished items', async () => {
    await runDiscover();
    await runSzz(); // a finished run: its manifest must not survive the failed run below
    config = { ...config, szz: { ...config.szz, concurrency: 9 } }; // new key for every item
    w.calls = [];
    w.failAt = 'i3';

    const err = await caught(runSzz());
    expect((err as Error).message).toBe('boom on i3');
    expect(manifestExists('szz')).toBe(false);
    // A stale manifest would make the next run report up-to-date over the old output.
    expect(w.calls).toEqual(['i0', 'i1', 'i2', 'i3']);

    w.failAt = null;
    w.calls = [];
    expect(ran(await runSzz())).toEqual({ reused: 3, computed: 2 });
    expect(w.calls).toEqual(['i3', 'i4']);
    expect(manifestExists('szz')).toBe(true);
  });

  it('items after a failed one are not started once the stage has failed (no work after the error)', async () => {
    await runDiscover();
    w.failAt = 'i1';
    await caught(runSzz());
    // Let any work still queued behind the failure run, if the runner let it.
    await new Promise((r) => setTimeout(r, 50));
    expect(w.calls).toEqual(['i0', 'i1']);
  });

  it('with concurrency, the items running when one fails are checkpointed before the error is reported', async () => {
    w.concurrency = 3;
    await runDiscover();
    w.failAt = 'i0';
    await caught(runSzz());
    const started = [...w.calls];
    // i1 and i2 were running alongside i0; none after them started.
    expect(started).toEqual(['i0', 'i1', 'i2']);

    w.failAt = null;
    w.calls = [];
    expect(ran(await runSzz())).toEqual({ reused: 2, computed: 3 });
    expect(w.calls.sort()).toEqual(['i0', 'i3', 'i4']);
  });

  it('a torn last checkpoint line is ignored and does not swallow the next checkpointed item', async () => {
    await runDiscover();
    w.failAt = 'i2';
    await caught(runSzz()); // i0, i1 checkpointed
    const cp = join(szzDir(), 'checkpoint.jsonl');
    await appendFile(cp, '{"key":"deadbeef","value":{"id":"i'); // a kill mid-write

    w.failAt = 'i4';
    w.calls = [];
    await caught(runSzz()); // reuses i0, i1; checkpoints i2, i3 after the torn line
    expect(w.calls).toEqual(['i2', 'i3', 'i4']);

    w.failAt = null;
    w.calls = [];
    expect(ran(await runSzz())).toEqual({ reused: 4, computed: 1 });
    expect(w.calls).toEqual(['i4']);
  });

  it('a checkpoint line of the wrong shape is redone, not a crash until --force', async () => {
    await runDiscover();
    w.failAt = 'i2';
    await caught(runSzz()); // i0, i1 checkpointed
    const cp = join(szzDir(), 'checkpoint.jsonl');
    const lines = (await readFile(cp, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { key: string; value: Out });
    expect(lines.map((l) => l.value.id)).toEqual(['i0', 'i1']);
    // i0's result in an older shape (as after a schema change, or a hand edit).
    lines[0]!.value = { id: 'i0', doubled: 'zero' } as unknown as Out;
    await writeFile(cp, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    w.failAt = null;
    w.calls = [];
    expect(ran(await runSzz())).toEqual({ reused: 1, computed: 4 });
    expect(w.calls).toEqual(['i0', 'i2', 'i3', 'i4']);
    expect(await readJsonl(stageOutputPath(root, REPO, 'szz'), OutSchema)).toEqual(w.list.map((i) => ({ id: i.id, doubled: i.v * 2 })));
  });

  it('a successful run compacts the checkpoint to the current items', async () => {
    await runDiscover();
    await runSzz();
    w.repoState = 'head-2';
    w.list = w.list.slice(0, 2);
    await runDiscover();
    await runSzz();
    const lines = (await readFile(join(szzDir(), 'checkpoint.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
  });
});

describe('artifacts', () => {
  it('the output file is written atomically: no .incomplete file is left', async () => {
    await runDiscover();
    await runSzz();
    for (const stage of ['discover', 'szz']) {
      const files = await readdir(stageDir(root, REPO, stage));
      expect(files.filter((f) => f.endsWith('.incomplete'))).toEqual([]);
      expect(files).toContain('items.jsonl');
      expect(files).toContain('manifest.json');
    }
  });

  it('a corrupted upstream artifact fails the next stage with a ForesightError, not a crash', async () => {
    await runDiscover();
    await appendFile(stageOutputPath(root, REPO, 'discover'), 'not json\n');
    const err = await caught(runSzz());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain(`${stageOutputPath(root, REPO, 'discover')} changed or was truncated after discover finished`);
    expect(w.calls).toEqual([]);
  });

  it('an upstream items.jsonl truncated at a line boundary is caught, not read as fewer chains', async () => {
    await runDiscover();
    const path = stageOutputPath(root, REPO, 'discover');
    const lines = (await readFile(path, 'utf8')).split('\n');
    await writeFile(path, lines.slice(0, 3).join('\n') + '\n'); // three whole records: still valid JSONL
    expect(await readJsonl(path, ItemSchema)).toHaveLength(3);

    const err = await caught(runSzz());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain(`${path} changed or was truncated after discover finished`);
    expect((err as ForesightError).remedy).toBe(`rerun it: foresight run --repo ${REPO} --from discover`);
    expect(w.calls).toEqual([]);
    expect(manifestExists('szz')).toBe(false);
  });

  it('a deleted upstream items.jsonl (manifest left behind) is caught and named', async () => {
    await runDiscover();
    await rm(stageOutputPath(root, REPO, 'discover'));
    const err = await caught(runSzz());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain(`${stageOutputPath(root, REPO, 'discover')} was deleted after discover finished`);
  });

  it('a truncated items.jsonl is rebuilt by a plain rerun, so the pipeline heals itself in order', async () => {
    await runDiscover();
    await runSzz();
    const path = stageOutputPath(root, REPO, 'discover');
    const whole = await readFile(path, 'utf8');
    await writeFile(path, whole.split('\n').slice(0, 2).join('\n') + '\n');
    w.calls = [];

    expect((await runDiscover()).outcome).toBe('ran'); // its manifest matched, its file did not
    expect(await readFile(path, 'utf8')).toBe(whole);
    expect(await runSzz()).toMatchObject({ outcome: 'up-to-date', items: 5 });
    expect(w.calls).toEqual([]);
  });

  it("a stage's own truncated output is rebuilt from its checkpoint, computing nothing", async () => {
    await runDiscover();
    await runSzz();
    const path = stageOutputPath(root, REPO, 'szz');
    const whole = await readFile(path, 'utf8');
    await writeFile(path, whole.split('\n').slice(0, 1).join('\n') + '\n');
    w.calls = [];

    expect(ran(await runSzz())).toEqual({ reused: 5, computed: 0 });
    expect(await readFile(path, 'utf8')).toBe(whole);
  });

  it('a missing upstream artifact gives a ForesightError whose remedy names the command', async () => {
    const err = await caught(runSzz());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('discover');
    expect((err as ForesightError).remedy).toContain(`foresight run --repo ${REPO}`);
    expect((err as ForesightError).remedy).toContain('--from discover');
    expect(w.calls).toEqual([]);
  });

  it('an unfinished upstream stage (no manifest) counts as missing', async () => {
    await runDiscover();
    await rm(join(stageDir(root, REPO, 'discover'), 'manifest.json'));
    const err = await caught(runSzz());
    expect(err).toBeInstanceOf(ForesightError);
    expect(w.calls).toEqual([]);
  });
});

describe('a stage that reads an earlier manifest besides its input', () => {
  // szz passes nothing on (its output never changes); extract reads discover's manifest, as emit reads its candidate count.
  const blindSzz = (): StageDef<Item, Out> => ({ ...szzDef(w), run: async () => ({ items: [], stats: {} }) });
  const extractDef = (reads: StageDef<Out, Out>['reads']): StageDef<Out, Out> => ({
    name: 'extract',
    entry: pathToFileURL(join(codeRoot(), 'szz.ts')).href,
    config: () => null,
    input: OutSchema,
    output: OutSchema,
    reads,
    run: async () => ({ items: [], stats: {} }),
  });
  const pipeline = async (reads: StageDef<Out, Out>['reads']) => {
    await runDiscover();
    await runStage(blindSzz(), opts());
    return (await runStage(extractDef(reads), opts())).outcome;
  };

  it('reruns when that manifest changes although its direct input did not', async () => {
    expect(await pipeline(['discover'])).toBe('ran');
    expect(await pipeline(['discover'])).toBe('up-to-date');
    w.list = items(7);
    w.repoState = 'head-2';
    expect(await pipeline(['discover'])).toBe('ran');
  });

  it('without `reads` the same change leaves it up to date (the staleness `reads` prevents)', async () => {
    expect(await pipeline(undefined)).toBe('ran');
    w.list = items(7);
    w.repoState = 'head-2';
    expect(await pipeline(undefined)).toBe('up-to-date');
  });
});
