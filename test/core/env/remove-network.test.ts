import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { removeNetwork } from '../../../core/env/container/cleanup.ts';

/** A Docker whose one network fails `remove` with the given statuses first, then is gone. */
function fakeDocker(failures: number[]): { docker: Docker; calls: string[] } {
  const calls: string[] = [];
  const network = {
    inspect: async () => {
      calls.push('inspect');
      return { Containers: { c1: {} } };
    },
    disconnect: async () => void calls.push('disconnect'),
    remove: async () => {
      calls.push('remove');
      const status = failures.shift();
      if (status !== undefined) throw Object.assign(new Error(`HTTP ${status}`), { statusCode: status });
    },
  };
  return { docker: { getNetwork: () => network } as unknown as Docker, calls };
}

describe('removeNetwork', () => {
  it('retries while a racing removal holds the network, 250 ms apart', async () => {
    const { docker, calls } = fakeDocker([409, 409]);
    const started = Date.now();
    await removeNetwork(docker, 'n');
    expect(calls.filter((c) => c === 'remove')).toHaveLength(3);
    expect(calls.filter((c) => c === 'disconnect')).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it('a network already gone is fine, at once', async () => {
    const { docker, calls } = fakeDocker([404]);
    await removeNetwork(docker, 'n');
    expect(calls.filter((c) => c === 'remove')).toHaveLength(1);
  });
});
