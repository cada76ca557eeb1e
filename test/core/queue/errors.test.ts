import { describe, expect, it } from 'vitest';
import { decodeFailure, encodeFailure, JobFailedError } from '../../../core/queue/errors.ts';

describe('job failures across Redis', () => {
  it('a failure keeps its reason and remedy through the one string BullMQ stores', () => {
    const f = { reason: 'handler-error', message: 'boom: x is undefined', remedy: 'report it' } as const;
    expect(decodeFailure(encodeFailure(f))).toEqual(f);
  });

  it("BullMQ's own failures read as infrastructure: a job that stalled too often is 'stalled', never the item's fault", () => {
    expect(decodeFailure('job stalled more than allowable limit')).toMatchObject({ reason: 'stalled' });
    expect(decodeFailure('Missing lock for job 12. moveToFinished')).toMatchObject({ reason: 'infra' });
    expect(decodeFailure('foresight-failure:{not json')).toMatchObject({ reason: 'infra' });
  });

  it('infrastructure and stalls are external (never evidence); a bug or a version mismatch is not', () => {
    const ext = (r: 'infra' | 'stalled' | 'handler-error' | 'mismatch') => new JobFailedError(r, 'k', 'i', 'm', 'r').external;
    expect([ext('infra'), ext('stalled'), ext('handler-error'), ext('mismatch')]).toEqual([true, true, false, false]);
    expect(new JobFailedError('infra', 'validate.chain', 'abc', 'docker went away', 'restart dockerd').oneLine()).toBe('validate.chain abc: docker went away — restart dockerd');
  });
});
