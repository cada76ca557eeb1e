import type { PublishCliOptions } from '../publish/index.ts';
import { abortOnSignals } from '../signals.ts';
import { exitState, settings } from './shared.ts';

/** `foresight publish`: upload an emitted dataset once its gate passes. */
export async function publishCommand(o: PublishCliOptions): Promise<void> {
  // Loaded on use: the hub library stays out of every other command's start-up.
  const { runPublishCommand } = await import('../publish/index.ts');
  const loaded = settings('publish', o);
  const owner = abortOnSignals({ onSignal: (sig) => process.stderr.write(`${sig}: stopping the publish; a commit not yet made is not made\n`) });
  try {
    await runPublishCommand(o, loaded, owner.signal);
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    owner.dispose();
  }
}
