import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/foundation/config.ts';
import { redisUrlProblem } from '../../../core/queue/index.ts';

describe('the queue settings (core/foundation/config.ts)', () => {
  it('no queue by default: items run in-process, one job per worker', () => {
    expect(loadConfig({}, {}).queue).toEqual({ url: null, concurrency: 1, lockSec: 30 });
  });

  it('the flag wins over FORESIGHT_QUEUE; concurrency from the flag or FORESIGHT_WORKER_CONCURRENCY', () => {
    const env = { FORESIGHT_QUEUE: 'redis://10.0.0.5:6379/', FORESIGHT_WORKER_CONCURRENCY: '4', FORESIGHT_WORKER_LOCK_SEC: '5' };
    expect(loadConfig(env, {}).queue).toEqual({ url: 'redis://10.0.0.5:6379', concurrency: 4, lockSec: 5 });
    expect(loadConfig(env, { queue: 'redis://127.0.0.1:7000', concurrency: '2' }).queue).toEqual({ url: 'redis://127.0.0.1:7000', concurrency: 2, lockSec: 5 });
  });

  it('a queue URL with credentials, another scheme or a path is refused, naming what was typed', () => {
    expect(() => loadConfig({}, { queue: 'redis://:hunter22@10.0.0.5:6379' })).toThrow(/--queue redis:\/\/\*\*\*@10\.0\.0\.5:6379 is not a redis:\/\/HOST:PORT URL without credentials/);
    expect(() => loadConfig({}, { queue: 'redis://:hunter22@10.0.0.5:6379' })).not.toThrow(/hunter22/);
    expect(() => loadConfig({ FORESIGHT_QUEUE: 'rediss://h:1' }, {})).toThrow(/FORESIGHT_QUEUE=rediss:\/\/h:1 is not a redis:\/\/HOST:PORT URL/);
    expect(() => loadConfig({ FORESIGHT_WORKER_CONCURRENCY: '0' }, {})).toThrow(/FORESIGHT_WORKER_CONCURRENCY=0 is not a whole number ≥ 1/);
    expect(() => loadConfig({ FORESIGHT_WORKER_LOCK_SEC: '0' }, {})).toThrow(/FORESIGHT_WORKER_LOCK_SEC=0 is not a whole number ≥ 1/);
    expect(redisUrlProblem('redis://h:6379/x')).toBe('a redis://HOST:PORT[/DB] URL');
    expect(redisUrlProblem('redis://h:6379/2')).toBeNull();
    expect(redisUrlProblem('127.0.0.1:6379')).toBe('a redis://HOST:PORT URL');
  });
});
