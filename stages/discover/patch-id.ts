import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ForesightError } from '../../core/foundation/errors.ts';

/**
 * `git patch-id --stable` of each commit (against its first parent): equal ids mean the same change,
 * e.g. a cherry-pick or a backport. One `git diff-tree --stdin | git patch-id` pipeline for all commits.
 */
export async function patchIds(clone: string, shas: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!shas.length) return out;
  const diff = spawn('git', ['diff-tree', '-p', '-m', '--first-parent', '--no-color', '--stdin'], { cwd: clone, stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = spawn('git', ['patch-id', '--stable'], { cwd: clone, stdio: ['pipe', 'pipe', 'pipe'] });
  diff.stdout.pipe(pid.stdin);
  let stderr = '';
  for (const p of [diff, pid]) p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = (p: typeof diff): Promise<number> => new Promise((resolve, reject) => (p.on('error', reject), p.on('close', (c) => resolve(c ?? 1))));
  const exits = Promise.all([done(diff), done(pid)]);
  diff.stdin.end(shas.join('\n') + '\n');
  for await (const line of createInterface({ input: pid.stdout, crlfDelay: Infinity })) {
    const [id, sha] = line.split(' ');
    if (id && sha) out.set(sha, id);
  }
  const [a, b] = await exits;
  if (a !== 0 || b !== 0) {
    throw new ForesightError(`git patch-id failed in ${clone}: ${stderr.trim().split('\n')[0]}`, { remedy: 'check that the clone is complete (git fsck)' });
  }
  return out;
}
