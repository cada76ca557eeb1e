import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';

/** `foresight` processes around a Redis queue (coordinator and workers), and the validate items they leave. */
const SECRETS = ['GITHUB_TOKEN', 'GH_TOKEN', 'FORESIGHT_LLM_API_KEY', 'OPENAI_API_KEY', 'HF_TOKEN'];

export interface Proc {
  child: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** `foresight <args>` as its own process (node itself, so a SIGKILL kills the worker, not a wrapper). */
export function foresight(args: string[], env: Record<string, string> = {}): Proc {
  const base: NodeJS.ProcessEnv = { ...process.env, FORESIGHT_LLM_BASE_URL: '', FORESIGHT_QUEUE: '', FORESIGHT_ENV_KEEP: '500' };
  for (const k of SECRETS) delete base[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], { cwd: PROJECT_ROOT, env: { ...base, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => stderr, exit };
}

export async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !(await ok()); await sleep(100)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

/** A validate item without what is measured (times, costs) or random (the demo's deliberately flaky test's per-state outcomes). */
function comparable(line: string): unknown {
  const item = JSON.parse(line) as { flaky_tests: string[] };
  const flaky = new Set(item.flaky_tests);
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    const kept = Object.entries(v).filter(([k]) => !['cost', 'durationMs', 'seconds'].includes(k) && !flaky.has(k)).map(([k, x]) => [k, strip(x)] as const);
    // A state's failure kinds that named only flaky tests: the same as none.
    return Object.fromEntries(kept.filter(([k, x]) => k !== 'failureKinds' || Object.keys(x as object).length > 0));
  };
  return strip(item);
}

/** The demo's validate items under `dataRoot`, comparable across runs. */
export async function validateItems(dataRoot: string): Promise<unknown[]> {
  return (await readFile(join(dataRoot, 'demo__minilib/validate/items.jsonl'), 'utf8')).trim().split('\n').map(comparable);
}

/** `<id>` of each `validate.chain <id>: <event>` line a worker printed. */
export function jobs(stderr: string, event: 'started' | 'done'): string[] {
  return [...stderr.matchAll(new RegExp(`validate\\.chain ([0-9a-f]{64}): ${event}`, 'g'))].map((m) => m[1]!);
}
