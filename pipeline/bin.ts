#!/usr/bin/env -S npx tsx
import { errorMessage, ForesightError } from '../core/foundation/errors.ts';
import { stopProgressBars } from '../core/foundation/progress.ts';
import { redact } from '../core/foundation/secrets.ts';
import { buildCli } from './commands/cli.ts';
import { exitState, stackTraces } from './commands/shared.ts';

export { DEMO_REPO } from './commands/shared.ts';

try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  // The message starts on a clean line, not after a half-drawn bar.
  stopProgressBars();
  // Error text leaves the process: never with a credential in it (a git URL, an echoed key).
  process.stderr.write(`foresight: ${redact(errorMessage(err))}\n`);
  if (stackTraces() && err instanceof Error) {
    process.stderr.write(`${redact(err.stack ?? '')}\n`);
    // A job's failure carries what its handler threw (in-process queue): the stack that matters is that one.
    if (err.cause instanceof Error && err.cause.stack) process.stderr.write(`caused by: ${redact(err.cause.stack)}\n`);
  }
  process.exitCode = exitState.signal ?? (err instanceof ForesightError ? 1 : 2);
}
