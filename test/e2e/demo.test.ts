import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, isDockerReachable, RUN_LABEL } from '../../core/env/index.ts';
import { readParquetTable } from '../../stages/emit/write-parquet.ts';
import { fakeModel } from '../helpers/fake-model.ts';
import { startFakeOpenAI } from '../helpers/fake-openai.ts';
import { DEMO_SECRET, minedDemoCopy, minedDemoOutput } from '../helpers/demo.ts';
import { pythonWithDatasets, runPython } from '../helpers/python.ts';
import { validateItems } from '../helpers/redis-foresight.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const FLAKY = 'tests/test_text.py::test_normalize_space_random_input';
const SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'p2p_excluded_gold_fail', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS'];

const KEY = DEMO_SECRET;

async function foresight(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  // The real CLI, as a user runs it; a secret in the environment must never reach an artifact.
  return run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, FORESIGHT_LLM_API_KEY: KEY, FORESIGHT_LLM_BASE_URL: '', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

const jsonl = async (path: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const list = (v: unknown): string[] => JSON.parse(v as string) as string[];

const dockerUp = await isDockerReachable();
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the end-to-end test (run `make setup`)');

describe.skipIf(!dockerUp)('make demo, end to end through real Docker', () => {
  let data: string;
  let repoDir: string;
  let hf: string;
  let first: { stdout: string; stderr: string };

  beforeAll(async () => {
    // The run's one `foresight demo` (test/helpers/demo.ts), this file's own copy of what it mined.
    data = await minedDemoCopy();
    first = await minedDemoOutput();
    repoDir = join(data, 'demo__minilib');
    hf = join(repoDir, 'emit', 'hf');
  }, 600_000);

  it('emits exactly the two true chains into the test split, with their fail->pass sets', async () => {
    const rows = await jsonl(join(hf, 'jsonl', 'test.jsonl'));
    expect(rows.map((r) => r.instance_id)).toEqual(['minilib__1-9', 'minilib__3-8']);
    const byId = Object.fromEntries(rows.map((r) => [String(r.instance_id), r] as const));
    expect(list(byId['minilib__1-9']!.FAIL_TO_PASS)).toEqual(['tests/test_text.py::test_slugify_basic']);
    expect(list(byId['minilib__1-9']!.ANTICIPATION_FAIL_TO_PASS)).toEqual(['tests/test_text.py::test_slugify_collapses_whitespace']);
    expect(list(byId['minilib__3-8']!.FAIL_TO_PASS)).toEqual([
      'tests/test_package.py::test_exports_parse_duration',
      'tests/test_timeparse.py::test_parse_hours_minutes',
      'tests/test_timeparse.py::test_parse_seconds',
    ]);
    expect(list(byId['minilib__3-8']!.ANTICIPATION_FAIL_TO_PASS)).toEqual(['tests/test_timeparse.py::test_parse_uppercase_units']);
    expect(byId['minilib__3-8']!.mining_category).toBe('szz');
    expect(byId['minilib__1-9']!.mining_category).toBe('cross_reference');
    expect(first.stdout).toContain('2 chain(s) in the test split and the verified config, 5 in funnel');
  });

  it('names an eval image per test row: the repository at base_commit, no object of the future, no grading-bundle file', async () => {
    for (const r of await jsonl(join(hf, 'jsonl', 'test.jsonl'))) {
      expect(r.docker_image).toMatch(/^foresight-eval:[0-9a-f]{24}$/);
      expect([r.repo_path, r.run_helper]).toEqual(['/testbed', '/foresight/pytest/run_state.sh']);
      const bundle = JSON.parse(r.grading_bundle as string) as { x: { files: Array<{ path: string; content: string }> }; y: { files: Array<{ path: string; content: string }> } };
      const files = [...bundle.x.files, ...bundle.y.files];
      expect(files.length).toBeGreaterThan(0);
      const script = [
        'cd /testbed',
        'echo "head $(git rev-parse HEAD)"',
        `git cat-file -e ${String(r.pr1_head_sha)} 2>/dev/null && echo "has pr1_head"`,
        `git cat-file -e ${String(r.pr2_head_sha)} 2>/dev/null && echo "has pr2_head"`,
        'echo "refs $(git for-each-ref | wc -l)"',
        'echo "unreachable $(git fsck --unreachable --no-reflogs 2>/dev/null | wc -l)"',
        ...files.map((f) => `[ -f '${f.path}' ] && echo "file ${f.path} $(sha256sum < '${f.path}' | cut -c1-64)"`),
        'true',
      ].join('\n');
      const { stdout } = await run('docker', ['run', '--rm', '--network', 'none', '-u', '65534', String(r.docker_image), 'sh', '-c', script]);
      expect(stdout).toContain(`head ${String(r.base_commit)}`);
      expect(stdout).not.toContain('has pr1_head');
      expect(stdout).not.toContain('has pr2_head');
      expect(stdout).toContain('refs 0');
      expect(stdout).toContain('unreachable 0');
      // A bundle file is either absent from the image or there in its base_commit version, never the graded one.
      for (const f of files) expect(stdout).not.toContain(`file ${f.path} ${createHash('sha256').update(f.content).digest('hex')}`);
    }
    const funnel = await jsonl(join(hf, 'jsonl', 'funnel.jsonl'));
    expect(funnel.filter((r) => r.gradeable).every((r) => r.image_tier === '3')).toBe(true);
  }, 120_000);

  it('foresight eval: the gold patches score X = 100%, Y = 0%; an empty prediction X = 0; a patch that does not apply is reported', async () => {
    const gold = join(data, 'eval-gold.json');
    const out = await foresight(['eval', '--dataset', hf, '--gold', '--out', gold]);
    expect(out.stdout).toContain('minilib__1-9');
    const report = JSON.parse(await readFile(gold, 'utf8')) as { instances: Array<Record<string, unknown>> };
    expect(report.instances.map((i) => [i.instance_id, i.X, i.Y, i.p2p_regressions])).toEqual([
      ['minilib__1-9', 1, 0, []],
      ['minilib__3-8', 1, 0, []],
    ]);
    const preds = join(data, 'preds.jsonl');
    const broken = 'diff --git a/minilib/nothing.py b/minilib/nothing.py\n--- a/minilib/nothing.py\n+++ b/minilib/nothing.py\n@@ -1 +1 @@\n-x\n+y\n';
    await writeFile(preds, [
      JSON.stringify({ instance_id: 'minilib__1-9', model_name_or_path: 'empty', model_patch: '' }),
      JSON.stringify({ instance_id: 'minilib__3-8', model_name_or_path: 'empty', model_patch: broken }),
    ].join('\n') + '\n');
    const agent = join(data, 'eval-agent.json');
    await foresight(['eval', '--dataset', hf, '--predictions', preds, '--out', agent]);
    const byId = Object.fromEntries((JSON.parse(await readFile(agent, 'utf8')) as { instances: Array<Record<string, unknown>> }).instances.map((i) => [i.instance_id, i]));
    expect([byId['minilib__1-9']!.kind, byId['minilib__1-9']!.X]).toEqual(['graded', 0]);
    expect(byId['minilib__3-8']!.kind).toBe('patch_failed');
    expect(String(byId['minilib__3-8']!.patch_failed_detail)).toMatch(/nothing\.py/);
  }, 300_000);

  it('foresight eval: PR1 plus a fix of the edge case (what an anticipating agent writes) scores X = 100% and Y = 100%', async () => {
    const rows = await jsonl(join(hf, 'jsonl', 'test.jsonl'));
    const row = rows.find((r) => r.instance_id === 'minilib__1-9')!;
    // Write the prediction in a work tree at pr1_head: PR #9's source fix laid over it (3-way), diffed from base_commit.
    const clone = join(repoDir, 'clone');
    const tree = await mkdtemp(join(tmpdir(), 'foresight-e2e-fix-'));
    const git = (...args: string[]) => run('git', ['-C', tree, ...args]);
    await run('git', ['-C', clone, 'worktree', 'add', '--detach', tree, String(row.pr1_head_sha)]);
    try {
      await writeFile(join(tree, 'fix.diff'), String(row.anticipation_patch));
      await git('apply', '-3', 'fix.diff');
      const patch = (await git('diff', '--no-color', String(row.base_commit), '--', 'minilib')).stdout;
      expect(patch).toContain('def slugify');
      const preds = join(data, 'preds-anticipating.jsonl');
      await writeFile(preds, JSON.stringify({ instance_id: 'minilib__1-9', model_name_or_path: 'anticipating', model_patch: patch }) + '\n');
      const out = join(data, 'eval-anticipating.json');
      await foresight(['eval', '--dataset', hf, '--predictions', preds, '--out', out]);
      const report = JSON.parse(await readFile(out, 'utf8')) as { instances: Array<Record<string, unknown>> };
      expect(report.instances.map((i) => [i.instance_id, i.X, i.Y])).toEqual([['minilib__1-9', 1, 1]]);
    } finally {
      await run('git', ['-C', clone, 'worktree', 'remove', '--force', tree]);
    }
  }, 300_000);

  it('keeps every other candidate in funnel, excluded with the right reason', async () => {
    const rows = await jsonl(join(hf, 'jsonl', 'funnel.jsonl'));
    const reasons = Object.fromEntries(rows.map((r) => [r.instance_id, r.exclusion_reason]));
    expect(reasons).toEqual({
      'minilib__1-9': null,
      'minilib__3-8': null,
      'minilib__4-11': 'ineligible',
      'minilib__5-12': 'ineligible',
      // #10's tests stop passing at a direct commit after #6 (execution-confirmed attribution): PR1 is no change.
      'minilib__6-10': 'unattributed',
    });
    for (const r of rows) expect(r.excluded).toBe(r.exclusion_reason !== null);
    const attribution = (id: string) => (JSON.parse(String(rows.find((r) => r.instance_id === id)!.mining_evidence)) as { attribution: Record<string, unknown> | null }).attribution;
    // #8's tests cannot import before #3 and fail from it on: execution agrees with blame.
    expect(attribution('minilib__3-8')).toMatchObject({ decision: 'attributed', method: 'execution+blame', change: '3', execution: 'introduced' });
    expect(attribution('minilib__6-10')).toMatchObject({ decision: 'unattributed', execution: 'found', disagreements: [{ source: 'reference', change: '6' }] });
  });

  it('never lets the flaky test into any set', async () => {
    for (const r of await jsonl(join(hf, 'jsonl', 'funnel.jsonl'))) {
      for (const set of SETS) expect(list(r[set]), `${String(r.instance_id)} ${set}`).not.toContain(FLAKY);
    }
  });

  it('leaves no container behind and no secret in any artifact or log', async () => {
    const left = await connectDocker().listContainers({ all: true, filters: { label: [RUN_LABEL] } });
    expect(left.filter((c) => c.Labels['foresight.pid'] === String(process.pid))).toEqual([]);
    const log = await readFile(join(repoDir, 'foresight.log.jsonl'), 'utf8');
    expect(log).toContain('"stage":"validate"');
    for (const f of ['foresight.log.jsonl', 'validate/items.jsonl', 'judge/items.jsonl', 'emit/items.jsonl']) {
      expect(await readFile(join(repoDir, f), 'utf8')).not.toContain(KEY);
    }
  });

  it('trial: stderr not a terminal (CI, nohup), validate silent for minutes a chain → lines name the chain, state and run; the log file has them as fields', async () => {
    // The shared run's stderr was a pipe: the running chain's note is printed between the loop's lines.
    expect(first.stderr).toMatch(/^\[validate\] minilib__\d+-\d+: S[1-5] runs? \d+(-\d+)?\/3 \((pr1|pr2)_(base|head)/m);
    const validate = (await jsonl(join(repoDir, 'foresight.log.jsonl'))).filter((l) => l.stage === 'validate');
    for (const id of ['minilib__1-9', 'minilib__3-8']) {
      const runs = validate.filter((l) => l.instance_id === id && typeof l.run === 'number');
      expect(new Set(runs.map((l) => l.state)), id).toEqual(new Set(['S1', 'S2', 'S3', 'S4', 'S5']));
      expect(Math.max(...runs.map((l) => l.run as number)), id).toBe(3);
    }
    // The bisection's probes: the probed commit as `state`, with the probe's number.
    const probes = validate.filter((l) => l.instance_id === 'minilib__6-10' && typeof l.probe === 'number');
    expect(probes.length).toBeGreaterThan(0);
    for (const p of probes) expect(p.state).toMatch(/^[0-9a-f]{40}$/);
    // The chain is a field, not a prefix of the message.
    expect(validate.filter((l) => /^minilib__\d+-\d+: /.test(String(l.msg)))).toEqual([]);
  });

  it('loads with the real Hugging Face datasets library, the three configs', async () => {
    await pythonWithDatasets();
    const out = await runPython(
      [
        'import json, sys, datasets',
        'test = datasets.load_dataset(sys.argv[1], split="test")',
        'ver = datasets.load_dataset(sys.argv[1], "verified", split="verified")',
        'fun = datasets.load_dataset(sys.argv[1], "funnel", split="funnel")',
        'print(json.dumps({"test": sorted(test["instance_id"]), "verified": sorted(ver["instance_id"]), "funnel": len(fun), "gradeable": sum(fun["gradeable"]),',
        '  "f2p": json.loads(test[0]["FAIL_TO_PASS"]), "cols": "exclusion_reason" in fun.column_names and "ANTICIPATION_FAIL_TO_PASS" in test.column_names}))',
      ].join('\n'),
      [hf],
    );
    expect(JSON.parse(out)).toEqual({
      test: ['minilib__1-9', 'minilib__3-8'],
      verified: ['minilib__1-9', 'minilib__3-8'],
      funnel: 5,
      gradeable: 3,
      f2p: ['tests/test_text.py::test_slugify_basic'],
      cols: true,
    });
  }, 300_000);

  it('does no work on a second run, and says so', async () => {
    const before = await stat(join(repoDir, 'validate', 'manifest.json'));
    const again = await foresight(['demo', '--data', data]);
    expect(again.stderr).toContain('nothing to do: every stage is up to date');
    expect((await stat(join(repoDir, 'validate', 'manifest.json'))).mtimeMs).toBe(before.mtimeMs);
  }, 120_000);

  it('reruns only judge and emit with --from judge (make stage STAGE=judge)', async () => {
    const validate = await stat(join(repoDir, 'validate', 'manifest.json'));
    const judge = await stat(join(repoDir, 'judge', 'manifest.json'));
    const out = await foresight(['run', '--repo', 'demo/minilib', '--data', data, '--from', 'judge']);
    expect(out.stderr).toMatch(/\[judge\] done/);
    expect(out.stderr).toMatch(/\[emit\] done/);
    expect(out.stderr).not.toMatch(/\[(discover|szz|extract|validate)\]/);
    expect((await stat(join(repoDir, 'validate', 'manifest.json'))).mtimeMs).toBe(validate.mtimeMs);
    expect((await stat(join(repoDir, 'judge', 'manifest.json'))).mtimeMs).toBeGreaterThan(judge.mtimeMs);
  }, 120_000);

  it('SIGTERM during validate loses no good chain: nothing from killed containers is kept, a rerun gives the same rows', async () => {
    // The mined demo up to extract: validate runs afresh, is stopped mid-chain, and a rerun finishes it.
    const data2 = await minedDemoCopy();
    const term = join(data2, 'demo__minilib');
    for (const stage of ['validate', 'judge', 'emit']) await rm(join(term, stage), { recursive: true, force: true });
    const args = ['validate', '--repo', 'demo/minilib', '--clone', join(term, 'clone'), '--data', data2, '--offline', '--jobs', '2'];
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'pipeline/bin.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let sent = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      // Mid-validate, a chain done: the next one is running in its container when the signal lands.
      if (!sent && /\[validate\] validating chains [12]\//.test(stderr)) {
        sent = true;
        setTimeout(() => child.kill('SIGTERM'), 3000);
      }
    });
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(sent, stderr).toBe(true);
    expect(code, stderr).toBe(143);
    const left = await connectDocker().listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`, `foresight.pid=${child.pid}`] } });
    expect(left).toEqual([]);
    const checkpoint = await readFile(join(term, 'validate', 'checkpoint.jsonl'), 'utf8').catch(() => '');
    expect(checkpoint).not.toMatch(/exit 137|env_failed/);
    const rerun = await foresight(args);
    // Only the chains the signal stopped ran again.
    expect(rerun.stderr).toMatch(/reused from checkpoint/);
    expect(await validateItems(data2)).toEqual(await validateItems(data));
    await rm(data2, { recursive: true, force: true });
  }, 300_000);

  it('LLM judges through a local OpenAI-compatible server: every judgement column filled, a B2 statement repaired, a planted leak caught, zero calls on a rerun', async () => {
    // A copy of the validated demo: the judges rerun on it without touching the other tests' data.
    const data3 = await mkdtemp(join(tmpdir(), 'foresight-e2e-llm-'));
    await cp(repoDir, join(data3, 'demo__minilib'), { recursive: true });
    const model = fakeModel({ faults: true });
    const llm = await startFakeOpenAI({ handler: (req) => model.handle(req) });
    const env = {
      FORESIGHT_LLM_BASE_URL: llm.baseURL,
      FORESIGHT_JUDGE_MODEL: 'judge-m',
      FORESIGHT_FAIRNESS_MODELS: 'fair-a,fair-b',
      FORESIGHT_LLM_PRICES: JSON.stringify({ 'judge-m': { prompt: 0.5, completion: 1.5 }, 'fair-a': { prompt: 0.1, completion: 0.1 }, 'fair-b': { prompt: 0.1, completion: 0.1 } }),
    };
    try {
      const out = await foresight(['run', '--repo', 'demo/minilib', '--data', data3, '--from', 'judge'], env);
      // The endpoint misbehaved once each way, and the run went through.
      expect(model.faults.sort()).toEqual(['429', '500', 'malformed']);
      expect(out.stderr).toMatch(/LLM usage: \d+ calls?.*prompt.*completion.*\$\d/s);
      const hf3 = join(data3, 'demo__minilib', 'emit', 'hf');
      const rows = Object.fromEntries((await jsonl(join(hf3, 'jsonl', 'test.jsonl'))).map((r) => [String(r.instance_id), r] as const));
      expect(Object.keys(rows).sort()).toEqual(['minilib__1-9', 'minilib__3-8']);
      const JUDGED = ['pr1_code', 'pr1_code_original', 'clarity_score', 'pr1_task_type', 'pr2_problem_statement', 'pr2_spec_code', 'severity',
        'failure_mode', 'trigger_path', 'mechanism', 'difficulty', 'pr1_difficulty', 'quality', 'eval_ready'];
      for (const r of Object.values(rows)) for (const k of JUDGED) expect(r[k], `${String(r.instance_id)}.${k}`).not.toBeNull();
      const r38 = rows['minilib__3-8']!;
      expect([r38.pr1_code_original, r38.pr1_code, r38.pr1_spec_repaired, r38.eval_ready]).toEqual(['B2', 'A', true, true]);
      expect(r38.problem_statement).toContain('exported from the package');
      expect(r38.problem_statement).not.toContain('test_parse_uppercase_units');
      expect([r38.severity, r38.failure_mode, r38.mechanism]).toEqual(['major', 'silent', 'missed_edge_case']);
      const verified = Object.fromEntries((await jsonl(join(hf3, 'jsonl', 'verified.jsonl'))).map((r) => [String(r.instance_id), r] as const));
      const repairs = JSON.parse(verified['minilib__3-8']!.spec_repairs as string) as { pr1: Array<{ leaks: string[]; accepted: boolean }>; pr2: unknown[] };
      // Round 1 named PR2's test: caught by the leak detector, rejected; round 2 accepted.
      expect(repairs.pr1.map((r) => [r.leaks, r.accepted])).toEqual([[['test_parse_uppercase_units'], false], [[], true]]);
      expect(repairs.pr2.length).toBeGreaterThan(0);
      expect(verified['minilib__3-8']!.pr2_spec_code).toBe('A');
      expect(verified['minilib__3-8']!.security).toBe(false);
      const usage = JSON.parse(verified['minilib__3-8']!.llm_usage as string) as { judged_by: string; calls: number; prompt_tokens: number; usd: number };
      expect(usage.judged_by).toBe('llm');
      expect(usage.calls).toBeGreaterThan(8);
      expect(usage.prompt_tokens).toBeGreaterThan(1000);
      expect(usage.usd).toBeGreaterThan(0);

      // Unchanged prompts: the answers come from the on-disk cache, not the endpoint.
      const sent = llm.requests.length;
      const again = await foresight(['run', '--repo', 'demo/minilib', '--data', data3, '--from', 'judge'], env);
      expect(llm.requests.length).toBe(sent);
      expect(again.stderr).toMatch(/LLM usage: 0 calls/);

      // The parquet still loads with the real datasets library, with the card's column types.
      await pythonWithDatasets();
      const types = await runPython(
        [
          'import json, sys, datasets',
          'test = datasets.load_dataset(sys.argv[1], split="test")',
          'ver = datasets.load_dataset(sys.argv[1], "verified", split="verified")',
          'f = test.features',
          'print(json.dumps({k: f[k].dtype for k in ["clarity_score", "eval_ready", "pr1_code", "severity", "gap_days"]} | {"security": ver.features["security"].dtype, "n": len(test)}))',
        ].join('\n'),
        [hf3],
      );
      expect(JSON.parse(types)).toEqual({ clarity_score: 'int64', eval_ready: 'bool', pr1_code: 'string', severity: 'string', gap_days: 'int64', security: 'bool', n: 2 });
    } finally {
      await llm.close();
    }
  }, 400_000);

  it('an LLM endpoint that echoes the API key puts it in no artifact, log or Parquet file', async () => {
    const llm = await startFakeOpenAI();
    try {
      // One answer fits every judge's schema; its reason quotes the key the client sent.
      const answer = JSON.stringify({
        reason: `authorized with ${KEY}`, verdict: 'bug_fix', code: 'A', leak: false, prescribes_mechanism: false, clarity_score: 0, task_type: 'bug',
        statement: `a statement written with ${KEY}`, impact: 'low', reach: 'narrow', failure_mode: 'loud', trigger_path: 'default', mechanism: 'other',
        difficulty: 'easy', pr1_difficulty: 'easy', security: false,
      });
      llm.setHandler(() => ({ content: answer }));
      await foresight(['run', '--repo', 'demo/minilib', '--data', data, '--from', 'judge'], {
        FORESIGHT_LLM_BASE_URL: llm.baseURL,
        FORESIGHT_JUDGE_MODEL: 'judge-m',
        FORESIGHT_FAIRNESS_MODELS: 'fair-a,fair-b',
      });
      expect(llm.requests.length).toBeGreaterThan(0);
      expect(String(llm.requests[0]!.headers.authorization)).toContain(KEY);
      const files = ['foresight.log.jsonl', 'judge/items.jsonl', 'judge/checkpoint.jsonl', 'emit/items.jsonl', 'emit/hf/jsonl/test.jsonl', 'emit/hf/jsonl/verified.jsonl', 'emit/hf/jsonl/funnel.jsonl', 'emit/hf/README.md'];
      for (const f of files) expect(await readFile(join(repoDir, f), 'utf8'), f).not.toContain(KEY);
      // The echo happened and was redacted where it landed, so the test can fail.
      expect(await readFile(join(repoDir, 'judge/items.jsonl'), 'utf8')).toContain('authorized with <FORESIGHT_LLM_API_KEY>');
      for (const f of ['data/test-00000-of-00001.parquet', 'verified/verified-00000-of-00001.parquet', 'funnel/funnel-00000-of-00001.parquet']) {
        const table = await readParquetTable(join(hf, f));
        expect(JSON.stringify(table.toArray().map((r) => r.toJSON()), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)), f).not.toContain(KEY);
      }
    } finally {
      await llm.close();
    }
  }, 180_000);
});
