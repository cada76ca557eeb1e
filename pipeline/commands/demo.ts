import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoDataDir } from '../../core/foundation/artifacts.ts';
import { makeDemoRepo } from '../demo/make-demo-repo.ts';
import { execute } from './run.ts';
import { dataRootOf, DEMO_REPO, settings, type CommonOpts } from './shared.ts';

/** `foresight demo`: generate the bundled demo repository (once) and mine it end to end. */
export async function runDemo(o: Omit<CommonOpts, 'repo' | 'clone'>): Promise<void> {
  // The demo is generated here: no service knows it, whatever tokens the environment holds.
  const offline = { offline: true };
  const opts: CommonOpts = { ...o, repo: DEMO_REPO };
  const { config } = settings('demo', opts, offline);
  const clone = join(repoDataDir(dataRootOf(config), opts.repo), 'clone');
  if (!existsSync(clone)) {
    const { head } = await makeDemoRepo(clone);
    process.stderr.write(`generated the demo repository at ${clone} (head ${head.slice(0, 12)})\n`);
  }
  await execute('demo', opts, {}, offline);
}
