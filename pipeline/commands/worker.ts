import type { Flags } from '../../core/foundation/config.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { abortOnSignals } from '../signals.ts';
import { settings } from './shared.ts';

/** `foresight worker`: take jobs from the queue until SIGINT/SIGTERM. */
export async function workerCommand(o: Flags): Promise<void> {
  const { config, secrets } = settings('worker', o);
  const log = createLogger({ level: config.log.level, quiet: config.log.quiet });
  // Loaded on use: BullMQ stays out of every other command's start-up.
  const { runWorker } = await import('../worker/index.ts');
  const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: taking no more jobs; the running ones finish (a second signal abandons them to other workers)`) });
  try {
    await runWorker({ config, secrets, log, signal: owner.signal });
  } finally {
    owner.dispose();
  }
}
