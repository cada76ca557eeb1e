import { ForesightError } from '../foundation/errors.ts';
import type { JobHandler, JobKind } from './types.ts';

// Handlers of different payload and result types (hence `any`); each parses its own with its schemas.
export type AnyJobHandler = JobHandler<any, any>;

/** Handlers by kind name: what a worker (or the in-process queue) can run. */
export type HandlerRegistry = ReadonlyMap<string, AnyJobHandler>;

const KIND_NAME = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*$/;

/** A kind, its name checked once here (it is part of every job id). */
export function defineJobKind<P, R>(name: string, schemas: { payload: JobKind<P, R>['payload']; result: JobKind<P, R>['result'] }): JobKind<P, R> {
  if (!KIND_NAME.test(name)) throw new Error(`job kind ${JSON.stringify(name)}: use lowercase letters, digits, dashes and dots`);
  return { name, ...schemas };
}

export function handlerRegistry(handlers: readonly AnyJobHandler[]): HandlerRegistry {
  const map = new Map<string, AnyJobHandler>();
  for (const h of handlers) {
    if (map.has(h.kind.name)) {
      throw new ForesightError(`two handlers for job kind ${h.kind.name}`, { remedy: 'register each kind once (pipeline/worker/handlers.ts)' });
    }
    map.set(h.kind.name, h);
  }
  return map;
}
