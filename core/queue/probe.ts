import { z } from 'zod';
import { FORESIGHT_VERSION } from '../foundation/version.ts';
import { defineJobKind } from './registry.ts';
import type { JobHandler } from './types.ts';

/** A job any worker runs: who answered, with which foresight and Node (a coordinator checks its fleet with it). */
export const probeKind = defineJobKind('worker.probe', {
  payload: z.object({ nonce: z.string() }),
  result: z.object({ nonce: z.string(), worker: z.string(), version: z.string(), node: z.string() }),
});

export const probeHandler: JobHandler<z.infer<typeof probeKind.payload>, z.infer<typeof probeKind.result>> = {
  kind: probeKind,
  run: async (p, ctx) => ({ nonce: p.nonce, worker: ctx.worker, version: FORESIGHT_VERSION, node: process.version }),
};
