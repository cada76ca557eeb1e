import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';
import { loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { runPipeline, type RunPipelineOptions } from '../../pipeline/pipeline.ts';

const run = promisify(execFile);

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

const ROOT = join(import.meta.dirname, '..', '..');
// The caller's secrets never reach the shared demo (a planted one does); the judges are the offline rules whatever the caller's environment says.
const SECRETS = ['GITHUB_TOKEN', 'FORESIGHT_LLM_API_KEY', 'OPENAI_API_KEY', 'HF_TOKEN'];
/** The API key the shared demo run holds in its environment: no artifact or log may contain it. */
export const DEMO_SECRET = 'sk-demo-secret-never-logged';

/**
 * A data root holding the demo mined end to end by the real CLI (`foresight demo --jobs 4`: its chains' runs mostly
 * wait on their containers, so four at a time take about 30 s where two take 50), the caller's own copy.
 * The demo is mined once per test run into the run's shared directory (test/global-setup.ts): the files
 * that only read its output do not each pay for mining it again.
 */
export async function minedDemoCopy(): Promise<string> {
  const shared = join(inject('sharedDir'), 'demo');
  if (!existsSync(shared)) {
    const partial = `${shared}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    const env: NodeJS.ProcessEnv = { ...process.env, FORESIGHT_LLM_BASE_URL: '' };
    for (const k of SECRETS) delete env[k];
    // A planted key (no endpoint: the judges stay offline rules): test/e2e looks for it in every artifact.
    env['FORESIGHT_LLM_API_KEY'] = DEMO_SECRET;
    const out = await run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), 'demo', '--data', partial, '--jobs', '4'], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 }).catch(
      (e: { stderr?: string }) => {
        throw new Error(`foresight demo failed:\n${String(e.stderr ?? e).slice(-2000)}`);
      },
    );
    // What the run printed, beside (not in) the data: minedDemoOutput.
    await writeFile(`${partial}.stdout`, out.stdout);
    await writeFile(`${partial}.stderr`, out.stderr);
    // Another file may have finished first (parallel runs): either copy is the same demo.
    await rename(partial, shared).then(
      async () => {
        await rename(`${partial}.stdout`, `${shared}.stdout`);
        await rename(`${partial}.stderr`, `${shared}.stderr`);
      },
      () => Promise.all([partial, `${partial}.stdout`, `${partial}.stderr`].map((p) => rm(p, { recursive: true, force: true }))),
    );
  }
  const copy = await mkdtemp(join(tmpdir(), 'foresight-demo-copy-'));
  await cp(shared, copy, { recursive: true, preserveTimestamps: true });
  return copy;
}

/** What the shared demo's `foresight demo` run printed (after minedDemoCopy). */
export async function minedDemoOutput(): Promise<{ stdout: string; stderr: string }> {
  const shared = join(inject('sharedDir'), 'demo');
  return { stdout: await readFile(`${shared}.stdout`, 'utf8'), stderr: await readFile(`${shared}.stderr`, 'utf8') };
}
