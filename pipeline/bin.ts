#!/usr/bin/env -S npx tsx
import { CommanderError } from 'commander';
import { errorMessage, ForesightError } from '../core/foundation/errors.ts';
import { stopProgressBars } from '../core/foundation/progress.ts';
import { redact } from '../core/foundation/secrets.ts';
import { buildCli } from './commands/cli.ts';
import { exitState, jsonTerminal, stackTraces } from './commands/shared.ts';

export { DEMO_REPO } from './commands/shared.ts';

/** The conventional exit code of a command line that could not be parsed. */
const EXIT_USAGE = 2;

try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  // Commander has printed the usage error and the hint (or the help, or the version): exit 2 for a usage error, 0 otherwise.
  if (err instanceof CommanderError) process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
  else fail(err);
}

/** A failure past the command line: one line (its cause and remedy), the stack with FORESIGHT_DEBUG. */
function fail(err: unknown): void {
  // The message starts on a clean line, not after a half-drawn bar.
  stopProgressBars();
  // Error text leaves the process: never with a credential in it (a git URL, an echoed key).
  if (jsonTerminal()) {
    const line = { time: new Date().toISOString(), level: 'error', msg: errorMessage(err), ...(stackTraces() && err instanceof Error ? { stack: err.stack } : {}) };
    process.stderr.write(`${redact(JSON.stringify(line))}\n`);
  } else process.stderr.write(`foresight: ${redact(errorMessage(err))}\n`);
  if (stackTraces() && err instanceof Error && !jsonTerminal()) {
    process.stderr.write(`${redact(err.stack ?? '')}\n`);
    // A job's failure carries what its handler threw (in-process queue): the stack that matters is that one.
    if (err.cause instanceof Error && err.cause.stack) process.stderr.write(`caused by: ${redact(err.cause.stack)}\n`);
  }
  // 1: a failure with its cause and remedy; 70 (sysexits' EX_SOFTWARE): anything else, a bug.
  process.exitCode = exitState.signal ?? (err instanceof ForesightError ? 1 : 70);
}
