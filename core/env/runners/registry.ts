import { ForesightError } from '../../foundation/errors.ts';
import { djangoRunner } from './django/index.ts';
import { pytestRunner } from './pytest/index.ts';
import type { Runner } from './types.ts';

/** Known runners by name. Register new runners here. */
export const runners: Map<string, Runner> = new Map<string, Runner>([
  [pytestRunner.name, pytestRunner],
  [djangoRunner.name, djangoRunner],
]);

export function getRunner(name: string): Runner {
  const runner = runners.get(name);
  if (!runner) {
    throw new ForesightError(`Unknown test runner "${name}"`, {
      remedy: `use one of: ${[...runners.keys()].join(', ')}`,
    });
  }
  return runner;
}
