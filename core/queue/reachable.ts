import { ForesightError } from '../foundation/errors.ts';

/** Fail fast, in one line, when nothing answers at `url` (ioredis alone would retry forever). */
export async function assertRedisReachable(url: string, timeoutMs = 5_000): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than the "Connection is closed." connect() rejects with.
  let cause: unknown = null;
  client.on('error', (err: unknown) => (cause ??= err));
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const why = cause ?? err;
    throw new ForesightError(`the work queue at ${url} does not answer (${why instanceof Error ? why.message : String(why)})`, {
      remedy: 'start Redis there (redis-server --bind <address> --port <port>) or fix --queue / FORESIGHT_QUEUE',
      external: true,
      cause: err,
    });
  } finally {
    client.disconnect();
  }
}
