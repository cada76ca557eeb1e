import { connectDocker } from '../../core/env/index.ts';
import type { Flags } from '../../core/foundation/config.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { abortOnSignals } from '../signals.ts';
import { exitState, settings } from './shared.ts';

/** `foresight worker`: take jobs from the queue until SIGINT/SIGTERM/SIGHUP (then exit 128 + the signal). */
export async function workerCommand(o: Flags): Promise<void> {
  const { config, secrets } = settings('worker', o);
  const log = createLogger(config.log);
  // Loaded on use: BullMQ stays out of every other command's start-up.
  const { runWorker } = await import('../worker/index.ts');
  const owner = abortOnSignals({
    docker: connectDocker(config.docker.host),
    log,
    onSignal: (sig) => log.warn(`${sig}: taking no more jobs, stopping the running ones (they run again on a worker) and removing this worker's containers`),
  });
  try {
    await runWorker({ config, secrets, log, signal: owner.signal });
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw err;
  } finally {
    await owner.close();
  }
}
