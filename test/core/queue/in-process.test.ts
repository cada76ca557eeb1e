import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../../core/foundation/log.ts';
import { defineJobKind, handlerRegistry, inProcessQueue, JobFailedError, openWorkQueue, probeHandler, probeKind, type ItemProgress, type JobHandler } from '../../../core/queue/index.ts';
import { registerSecret } from '../../../core/foundation/secrets.ts';
import { FORESIGHT_VERSION } from '../../../core/foundation/version.ts';
import { buggyKind, chainFailsKind, flakyKind, sharedKind, slowKind, TEST_HANDLERS } from '../../helpers/redis-kinds.ts';

describe('in-process work queue (the default): the same handlers, run here', () => {
  let root: string;
  let ledger: string;
  const handlers = handlerRegistry([probeHandler, ...TEST_HANDLERS]);
  const queue = (attempts = 1) => inProcessQueue({ handlers, jobs: 2, dataDir: '/nonexistent', log: silentLogger, retry: { attempts, backoffMs: 10 } });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-inproc-'));
    ledger = join(root, 'ledger.txt');
    await writeFile(ledger, '');
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  const starts = async (kind: string, id: string): Promise<number[]> =>
    (await readFile(ledger, 'utf8'))
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[0] === 'start' && f[1] === kind && f[2] === id)
      .map((f) => Number(f[4]));

  it('runs an id once however often it is submitted, with progress', async () => {
    const q = queue();
    const seen: ItemProgress[] = [];
    const [a, b] = await Promise.all([q.submit(slowKind, 'x1', { ledger, value: 4, ms: 50 }, { onProgress: (p) => seen.push(p) }), q.submit(slowKind, 'x1', { ledger, value: 4, ms: 50 })]);
    expect(a).toEqual(b);
    expect(a.doubled).toBe(8);
    expect(await starts('test.slow', 'x1')).toEqual([1]);
    expect(seen.map((p) => p.note)).toEqual(['started', 'half-way']);
    expect(q).toMatchObject({ mode: 'in-process', capacity: 2 });
    expect(await q.submit(probeKind, 'p1', { nonce: 'n' })).toMatchObject({ nonce: 'n', version: FORESIGHT_VERSION });
  });

  it('one attempt by default (as local runs always did); retries infrastructure failures when asked', async () => {
    const once = await queue().submit(flakyKind, 'f1', { ledger, okFrom: 2 }).catch((e: unknown) => e);
    expect(once).toMatchObject({ reason: 'infra', external: true });
    expect(await queue(3).submit(flakyKind, 'f2', { ledger, okFrom: 3 })).toEqual({ outcome: 'done', attempt: 3 });
    expect(await starts('test.flaky', 'f2')).toEqual([1, 2, 3]);
  });

  it("the item's own failure is a result; a handler bug fails without retry", async () => {
    const q = queue(3);
    expect(await q.submit(chainFailsKind, 'c1', { ledger })).toEqual({ outcome: 'excluded', reason: 'tests-fail-after-fix' });
    const bug = await q.submit(buggyKind, 'b1', { ledger }).catch((e: unknown) => e);
    expect(bug).toBeInstanceOf(JobFailedError);
    expect(bug).toMatchObject({ reason: 'handler-error', external: false });
    // In this process the handler's own error stays attached, stack and all.
    expect((bug as Error).cause).toBeInstanceOf(TypeError);
    expect(await starts('test.buggy', 'b1')).toEqual([1]);
  });

  it('a payload holding a registered credential never leaves the coordinator', async () => {
    registerSecret('TEST_QUEUE_TOKEN', 'tok-queue-0123456789');
    const kind = defineJobKind('test.leaky', { payload: z.object({ url: z.string() }), result: z.object({}) });
    await expect(queue().submit(kind, 'l1', { url: 'https://x:tok-queue-0123456789@example.org' })).rejects.toThrow(/the payload holds a credential/);
  });

  it('an id that is not a content key, or a payload off its schema, is refused before it runs', async () => {
    await expect(queue().submit(slowKind, 'a:b', { ledger, value: 1, ms: 1 })).rejects.toThrow(/is not a content key/);
    await expect(queue().submit(slowKind, 'ok', { ledger, value: 'one', ms: 1 } as never)).rejects.toThrow(/payload does not match its schema/);
    const unknown = defineJobKind('test.unregistered', { payload: z.object({}), result: z.object({}) });
    await expect(queue().submit(unknown, 'u1', {})).rejects.toMatchObject({ reason: 'mismatch' });
  });

  it("a resource shared across jobs is built once, by the first job, and disposed when the queue closes", async () => {
    const q = queue();
    const [a, b] = await Promise.all([q.submit(sharedKind, 's1', { ledger, ms: 20 }), q.submit(sharedKind, 's2', { ledger, ms: 20 })]);
    const c = await q.submit(sharedKind, 's3', { ledger, ms: 0 });
    expect(new Set([a.token, b.token, c.token]).size).toBe(1);
    const lines = async () => (await readFile(ledger, 'utf8')).split('\n').filter((l) => l.includes('test.shared'));
    expect((await lines()).filter((l) => l.startsWith('create '))).toHaveLength(1);
    await q.close();
    expect((await lines()).filter((l) => l.startsWith('dispose-'))).toEqual([expect.stringContaining(`dispose-${a.token} `)]);
  });

  it("opened without a URL it is this queue; a stop reaches the handler, and the submit settles only once the handler has stopped", async () => {
    // A handler that, stopped, takes a while to clean up (containers to remove): the stage must not close under it.
    const stoppable = defineJobKind('test.stoppable', { payload: z.object({}), result: z.object({}) });
    let cleanedUp = false;
    const handler: JobHandler<object, object> = {
      kind: stoppable,
      run: async (_p, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        await sleep(100);
        cleanedUp = true;
        throw ctx.signal.reason;
      },
    };
    const stop = new AbortController();
    const q = await openWorkQueue({ url: null, handlers: handlerRegistry([handler]), jobs: 3, dataDir: root, log: silentLogger, signal: stop.signal });
    expect(q).toMatchObject({ mode: 'in-process', capacity: 3 });
    const pending = q.submit(stoppable, 'st1', {}).then(
      () => 'resolved',
      () => cleanedUp,
    );
    await sleep(20);
    stop.abort(new Error('SIGTERM'));
    expect(await pending).toBe(true);
    await q.close();
  });

  it('a kind registered twice is refused', () => {
    expect(() => handlerRegistry([probeHandler, probeHandler])).toThrow(/two handlers for job kind worker.probe/);
  });
});
