/**
 * `foresight recheck` on the mined demo (real Docker): a row of `test` validated again from scratch.
 * Its stored chain is tampered with (a FAIL_TO_PASS test dropped, as a wrong row would be): the rerun
 * says exactly that, nothing else, and exits 1. One chain only: each costs a validation.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDockerReachable } from '../../core/env/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

const dockerUp = await isDockerReachable();
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the demo (run `make setup`)');

describe.skipIf(!dockerUp)('foresight recheck (demo, real Docker)', () => {
  let data: string;
  beforeAll(async () => {
    data = await minedDemoCopy();
  }, 600_000);
  afterAll(() => rm(data, { recursive: true, force: true }));

  it('a tampered row differs by exactly what was changed (exit 1)', async () => {
    const repoDir = join(data, 'demo__minilib');
    const rows = (await readFile(join(repoDir, 'emit', 'hf', 'jsonl', 'test.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string });
    expect(rows.length).toBe(2);
    const items = join(repoDir, 'validate', 'items.jsonl');
    const stored = (await readFile(items, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string; FAIL_TO_PASS: string[] });
    const tampered = stored.find((c) => c.instance_id === rows[0]!.instance_id)!;
    const dropped = tampered.FAIL_TO_PASS.shift()!;
    await writeFile(items, stored.map((c) => JSON.stringify(c)).join('\n') + '\n');

    const res = await run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), 'recheck', '--repo', 'demo/minilib', '--data', data, '--clone', join(repoDir, 'clone'), '--offline', '-q', '--ids', tampered.instance_id], {
      cwd: ROOT,
      env: { ...process.env, FORESIGHT_LLM_BASE_URL: '' },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toContain('recheck: 0 of 1 held, 1 differ, 0 could not run');
    const report = (await readFile(join(repoDir, 'recheck', 'report.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(report.map((r) => [r.instance_id, r.verdict])).toEqual([[tampered.instance_id, 'differs']]);
    // The stored row lacks the test, the rerun has it: nothing else differs.
    expect(report[0]).toMatchObject({ sets: [{ field: 'FAIL_TO_PASS', stored: [], rerun: [dropped] }], exclusion: null, backend: null });
  }, 300_000);
});
