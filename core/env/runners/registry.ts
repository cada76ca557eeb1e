import { ForesightError } from '../../foundation/errors.ts';
import { djangoRunner } from './django/index.ts';
import { goRunner } from './go/index.ts';
import { jestRunner } from './jest/index.ts';
import { mochaRunner } from './mocha/index.ts';
import { pytestRunner } from './pytest/index.ts';
import type { Runner } from './types.ts';
import { vitestRunner } from './vitest/index.ts';

/** Known runners by name. Register new runners here. */
export const runners: Map<string, Runner> = new Map<string, Runner>([
  [pytestRunner.name, pytestRunner],
  [djangoRunner.name, djangoRunner],
  [jestRunner.name, jestRunner],
  [vitestRunner.name, vitestRunner],
  [mochaRunner.name, mochaRunner],
  [goRunner.name, goRunner],
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
