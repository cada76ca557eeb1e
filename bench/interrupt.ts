/**
 * Interrupt trials: SIGTERM and SIGINT at random points of validate, then a plain rerun, must
 * give output identical to an uninterrupted run, leave no container behind, and redo only what the
 * signal interrupted.
 *
 *   node_modules/.bin/tsx bench/interrupt.ts [--trials 10] [--signals SIGTERM,SIGINT] [--keep]
 *   (--signals SIGKILL: no cleanup is possible; the next run sweeps the containers and resumes)
 *
 * Each trial runs the real CLI (one node process, as `make mine` does) on the demo repository with its own
 * data folder, waits until validate has started, sleeps a random time within validate's usual span, sends
 * the signal, checks the exit code (130/143) and that no container of that process is left, reruns the
 * pipeline to the end, and compares the emitted dataset and the validated sets with the baseline's.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectDocker, RUN_LABEL } from '../core/env/index.ts';
import { PROJECT_ROOT } from '../core/foundation/version.ts';
import { makeDemoRepo } from '../pipeline/demo/make-demo-repo.ts';

const { values } = parseArgs({
  options: { trials: { type: 'string', default: '10' }, signals: { type: 'string', default: 'SIGTERM,SIGINT' }, keep: { type: 'boolean', default: false } },
});
const trials = Number(values.trials);
const signals = values.signals!.split(',') as NodeJS.Signals[];
const EXPECTED_EXIT: Record<string, number | null> = { SIGINT: 130, SIGTERM: 143, SIGKILL: null };

interface Run {
  code: number | null;
  stderr: string;
  pid: number;
}

/** The CLI in one node process (tsx as a loader, not a wrapper that forwards signals). */
function cli(args: string[], onStderr?: (text: string, child: ReturnType<typeof spawn>) => void): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORESIGHT_OFFLINE: '1' },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    onStderr?.(stderr, child);
  });
  child.stdout.resume();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr, pid: child.pid! })));
}

/** What must not change: the emitted dataset, and the sets and exclusions of every validated chain. */
async function outputOf(data: string): Promise<string> {
  const dir = join(data, 'demo__minilib');
  const files = ['emit/hf/jsonl/test.jsonl', 'emit/hf/jsonl/verified.jsonl', 'emit/hf/jsonl/funnel.jsonl', 'emit/hf/README.md'];
  const parts = await Promise.all(files.map(async (f) => `${f}\n${await readFile(join(dir, f), 'utf8')}`));
  const validated = (await readFile(join(dir, 'validate/items.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => {
      const c = JSON.parse(l) as Record<string, unknown>;
      const keep = ['instance_id', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS', 'flaky_tests', 'excluded', 'gradeable'];
      return JSON.stringify(Object.fromEntries(keep.map((k) => [k, c[k]])));
    });
  return [...parts, 'validate/items.jsonl (sets)', ...validated].join('\n');
}

async function containersOf(pid: number): Promise<string[]> {
  const list = await connectDocker().listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`, `foresight.pid=${pid}`] } });
  return list.map((c) => c.Id.slice(0, 12));
}

const work = await mkdtemp(join(tmpdir(), 'foresight-interrupt-'));
const clone = join(work, 'clone');
await makeDemoRepo(clone);
const base = ['run', '--repo', 'demo/minilib', '--clone', clone];

const t0 = Date.now();
const baseline = await cli([...base, '--data', join(work, 'baseline')]);
if (baseline.code !== 0) throw new Error(`the baseline run failed (exit ${baseline.code}):\n${baseline.stderr}`);
const expected = await outputOf(join(work, 'baseline'));
// Validate's span in the baseline (its env image is built by now, so trials spend their time in test runs).
const validateSec = Number(/\[validate\] done in ([\d.]+)s/.exec(baseline.stderr)?.[1] ?? 30);
process.stdout.write(`baseline: ${((Date.now() - t0) / 1000).toFixed(0)} s, validate ${validateSec} s\n`);

const rows: string[] = [];
let failures = 0;
const landed: Record<string, number> = {};
for (const sig of signals) {
  landed[sig] = 0;
  // A signal that arrives after the run ended interrupts nothing: try until `trials` signals landed (at most 3x).
  for (let i = 0; landed[sig]! < trials && i < 3 * trials; i++) {
    const data = join(work, `${sig}-${i}`);
    // Within validate (its tail is left out: a signal after the run ended interrupts nothing).
    const delayMs = Math.round(Math.random() * validateSec * 0.8 * 1000);
    let sent = false;
    const interrupted = await cli([...base, '--data', data], (text, child) => {
      if (sent || !/\[validate\] (building|validating chains)/.test(text)) return;
      sent = true;
      setTimeout(() => child.kill(sig), delayMs);
    });
    // SIGKILL cannot clean up: its containers must be swept by the rerun instead.
    const leftBefore = await containersOf(interrupted.pid);
    const rerun = await cli([...base, '--data', data]);
    const left = sig === 'SIGKILL' ? await containersOf(interrupted.pid) : leftBefore;
    const computed = /\[validate\] done in [\d.]+s: \d+ items \((\d+) computed, (\d+) reused/.exec(rerun.stderr);
    const same = rerun.code === 0 && (await outputOf(data)) === expected;
    const finishedFirst = interrupted.code === 0;
    if (!finishedFirst) landed[sig]!++;
    const exitOk = interrupted.code === EXPECTED_EXIT[sig] || finishedFirst;
    const ok = same && left.length === 0 && exitOk && !/exit 137/.test(await readFile(join(data, 'demo__minilib/validate/items.jsonl'), 'utf8'));
    if (!ok) failures++;
    rows.push(
      `${sig.padEnd(8)} #${i}  after ${(delayMs / 1000).toFixed(1).padStart(5)} s  exit ${String(interrupted.code).padEnd(4)} containers left ${left.length}  ` +
        `rerun: validate ${computed ? `${computed[1]} computed, ${computed[2]} reused` : 'up to date'}  output ${same ? 'identical' : 'DIFFERENT'}${finishedFirst ? '  (finished before the signal)' : ''}${ok ? '' : '  FAIL'}`,
    );
    process.stdout.write(rows[rows.length - 1] + '\n');
    if (!values.keep) await rm(data, { recursive: true, force: true });
  }
}
process.stdout.write(`\nsignals that interrupted the run: ${Object.entries(landed).map(([k, v]) => `${k} ${v}`).join(', ')}\n${rows.length - failures}/${rows.length} trials identical to the uninterrupted run, no container left (${((Date.now() - t0) / 1000).toFixed(0)} s in all)\n`);
if (!values.keep) await rm(work, { recursive: true, force: true });
process.exitCode = failures ? 1 : 0;
