import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';
import { loadConfig, loadSecrets } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import { runPipeline, type RunPipelineOptions } from '../../pipeline/pipeline.ts';

/** A fresh demo repository and data root in a temp dir. */
export async function demoWorkspace(): Promise<{ root: string; clone: string; dataRoot: string; repo: { name: string; clone: string } }> {
  const root = await mkdtemp(join(tmpdir(), 'foresight-demo-'));
  const clone = join(root, 'clone');
  await makeDemoRepo(clone);
  return { root, clone, dataRoot: join(root, 'data'), repo: { name: 'demo/minilib', clone } };
}

/** Run the pipeline as the CLI does: configuration and secrets from the (test's) environment at call time. */
export function runOn(ws: { dataRoot: string; repo: { name: string; clone: string } }, extra: Partial<RunPipelineOptions> = {}) {
  return runPipeline({ dataRoot: ws.dataRoot, repo: ws.repo, config: loadConfig(process.env), secrets: loadSecrets(process.env), log: silentLogger, ...extra });
}
