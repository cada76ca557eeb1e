import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJobKind, InfraError, type AnyJobHandler } from '../../core/queue/index.ts';

/**
 * Job kinds registered for the queue tests. Each handler appends `<event> <kind> <id> <worker> <attempt>`
 * to a ledger file shared by the test's processes, so a test sees every start and end, on every worker.
 */
const ledgered = z.object({ ledger: z.string() });

async function note(ledger: string, event: string, kind: string, id: string, worker: string, attempt: number): Promise<void> {
  await appendFile(ledger, `${event} ${kind} ${id} ${worker} ${attempt}\n`);
}

/** Doubles a number after `ms`, reporting progress half-way. */
export const slowKind = defineJobKind('test.slow', {
  payload: ledgered.extend({ value: z.number(), ms: z.number() }),
  result: z.object({ outcome: z.literal('done'), doubled: z.number(), worker: z.string() }),
});

/** InfraError on attempts before `okFrom`. */
export const flakyKind = defineJobKind('test.flaky', {
  payload: ledgered.extend({ okFrom: z.number() }),
  result: z.object({ outcome: z.literal('done'), attempt: z.number() }),
});

/** The item's own failure: a result, with a literal reason. */
export const chainFailsKind = defineJobKind('test.chain-fails', {
  payload: ledgered,
  result: z.object({ outcome: z.literal('excluded'), reason: z.literal('tests-fail-after-fix') }),
});

/** A handler bug (a plain Error). */
export const buggyKind = defineJobKind('test.buggy', { payload: ledgered, result: z.object({ outcome: z.literal('done') }) });

/** Uses a resource shared across the process's jobs: which one it got (its token), and on which worker. */
export const sharedKind = defineJobKind('test.shared', {
  payload: ledgered.extend({ ms: z.number() }),
  result: z.object({ outcome: z.literal('done'), token: z.string(), worker: z.string() }),
});

export const TEST_HANDLERS: AnyJobHandler[] = [
  {
    kind: sharedKind,
    run: async (p: z.infer<typeof sharedKind.payload>, ctx) => {
      const resource = await ctx.shared(
        'test-resource',
        async () => {
          await note(p.ledger, 'create', sharedKind.name, ctx.id, ctx.worker, ctx.attempt);
          return { token: randomUUID() };
        },
        async (r) => note(p.ledger, `dispose-${r.token}`, sharedKind.name, '-', ctx.worker, 0),
      );
      await sleep(p.ms);
      return { outcome: 'done', token: resource.token, worker: ctx.worker };
    },
  },
  {
    kind: slowKind,
    run: async (p: z.infer<typeof slowKind.payload>, ctx) => {
      await note(p.ledger, 'start', slowKind.name, ctx.id, ctx.worker, ctx.attempt);
      await ctx.progress({ done: 0, total: 2, note: 'started' });
      await sleep(p.ms / 2);
      await ctx.progress({ done: 1, total: 2, note: 'half-way' });
      await sleep(p.ms / 2);
      await note(p.ledger, 'end', slowKind.name, ctx.id, ctx.worker, ctx.attempt);
      return { outcome: 'done', doubled: p.value * 2, worker: ctx.worker };
    },
  },
  {
    kind: flakyKind,
    run: async (p: z.infer<typeof flakyKind.payload>, ctx) => {
      await note(p.ledger, 'start', flakyKind.name, ctx.id, ctx.worker, ctx.attempt);
      if (ctx.attempt < p.okFrom) throw new InfraError(`docker daemon went away (attempt ${ctx.attempt})`, { remedy: 'restart dockerd' });
      return { outcome: 'done', attempt: ctx.attempt };
    },
  },
  {
    kind: chainFailsKind,
    run: async (p: z.infer<typeof chainFailsKind.payload>, ctx) => {
      await note(p.ledger, 'start', chainFailsKind.name, ctx.id, ctx.worker, ctx.attempt);
      return { outcome: 'excluded', reason: 'tests-fail-after-fix' };
    },
  },
  {
    kind: buggyKind,
    run: async (p: z.infer<typeof buggyKind.payload>, ctx) => {
      await note(p.ledger, 'start', buggyKind.name, ctx.id, ctx.worker, ctx.attempt);
      throw new TypeError('cannot read properties of undefined');
    },
  },
];
