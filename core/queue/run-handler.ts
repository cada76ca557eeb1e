import { ForesightError, errorMessage } from '../foundation/errors.ts';
import { containsSecret } from '../foundation/secrets.ts';
import { InfraError, type WireFailure } from './errors.ts';
import type { HandlerRegistry } from './registry.ts';
import type { JobContext, JobKind } from './types.ts';

/** An item id is its content key: it names the job in Redis, so no `:` and nothing a key cannot hold. */
const ITEM_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** The checked JSON of a payload about to leave the process: parsed by its kind, free of known secrets. */
export function encodePayload<P>(kind: JobKind<P, unknown>, id: string, payload: P): unknown {
  if (!ITEM_ID.test(id)) throw new Error(`${kind.name}: item id ${JSON.stringify(id)} is not a content key (letters, digits, . _ -)`);
  const parsed = kind.payload.safeParse(payload);
  if (!parsed.success) throw new Error(`${kind.name} ${id}: payload does not match its schema: ${parsed.error.issues[0]?.message}`);
  const json = JSON.stringify(parsed.data);
  if (containsSecret(json)) {
    throw new ForesightError(`${kind.name} ${id}: the payload holds a credential`, { remedy: 'jobs carry no secrets: give workers their credentials through their own environment' });
  }
  return JSON.parse(json) as unknown;
}

/** `error`: what the handler threw, for a caller in the same process (it never crosses the wire). */
export type HandlerOutcome = { status: 'done'; result: unknown } | { status: 'failed'; failure: WireFailure; error?: unknown };

/** Run the handler of `kindName` on a payload as it came over the wire; the result is parsed as its kind says. */
export async function runHandler(registry: HandlerRegistry, kindName: string, payload: unknown, ctx: JobContext): Promise<HandlerOutcome> {
  const handler = registry.get(kindName);
  if (!handler) {
    return { status: 'failed', failure: { reason: 'mismatch', message: `no handler for job kind ${kindName} on worker ${ctx.worker}`, remedy: 'run the same foresight version on the coordinator and every worker' } };
  }
  const input = handler.kind.payload.safeParse(payload);
  if (!input.success) {
    return { status: 'failed', failure: { reason: 'mismatch', message: `payload does not parse on worker ${ctx.worker}: ${input.error.issues[0]?.message}`, remedy: 'run the same foresight version on the coordinator and every worker' } };
  }
  let result: unknown;
  try {
    result = await handler.run(input.data, ctx);
  } catch (err) {
    if (err instanceof InfraError) return { status: 'failed', failure: { reason: 'infra', message: err.message, remedy: err.remedy } };
    const remedy = err instanceof ForesightError ? err.remedy : 'a bug in the handler: report it with the worker log';
    return { status: 'failed', failure: { reason: 'handler-error', message: errorMessage(err instanceof ForesightError ? new Error(err.message) : err), remedy }, error: err };
  }
  const output = handler.kind.result.safeParse(result);
  if (!output.success) {
    return { status: 'failed', failure: { reason: 'handler-error', message: `result does not match its schema: ${output.error.issues[0]?.message}`, remedy: 'a bug in the handler: report it with the worker log' } };
  }
  return { status: 'done', result: JSON.parse(JSON.stringify(output.data)) as unknown };
}
