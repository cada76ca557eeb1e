import { existsSync } from 'node:fs';
import { repoDataDir } from '../../core/foundation/artifacts.ts';
import { createLogger } from '../../core/foundation/log.ts';
import type { Command, Flags } from '../../core/foundation/settings.ts';
import type { StageName } from '../../core/foundation/stage.ts';
import { ensureClone } from '../clone.ts';
import { runPipeline } from '../pipeline.ts';
import { pushImages } from '../push-images.ts';
import { abortOnSignals } from '../signals.ts';
import { summarize } from '../summary.ts';
import { dataRootOf, exitState, removeEmpty, repoName, settings, type CommonOpts } from './shared.ts';

/** `foresight run` (and each stage's command, demo and push-images): the pipeline on one repository. */
export async function execute(command: Command, opts: CommonOpts, part: { from?: StageName; only?: StageName; push?: true }, forced: Flags = {}): Promise<void> {
  const { config, secrets } = settings(command, opts, forced);
  const log = createLogger({ level: config.log.level, quiet: config.log.quiet });
  const dataRoot = dataRootOf(config);
  const name = repoName(opts.repo);
  const existed = { root: existsSync(dataRoot), repo: existsSync(repoDataDir(dataRoot, name)) };
  const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished items are kept`) });
  try {
    const clone = await ensureClone({ repo: name, dataRoot, explicit: opts.clone, log, gitUrl: config.clone.gitUrl, credentials: secrets.gitUrlCredentials, offline: config.discover.offline });
    const repo = { name, clone };
    const run = { dataRoot, repo, config, secrets, log, signal: owner.signal };
    const results = part.push ? [await pushImages(run)] : await runPipeline({ ...run, ...part, force: opts.force });
    if (results.every((r) => r.outcome === 'up-to-date')) log.info('nothing to do: every stage is up to date');
    if (results.some((r) => r.stage === 'emit')) process.stdout.write((await summarize(dataRoot, repo.name)) + '\n');
  } catch (err) {
    if (!existed.repo) await removeEmpty(repoDataDir(dataRoot, name), existed.root ? repoDataDir(dataRoot, name) : dataRoot);
    exitState.signal = owner.exitCode();
    // Whatever the unwinding threw, an interrupted run says so (and how to resume).
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    owner.dispose();
  }
}
