/**
 * A chain whose fix only shows on PostgreSQL, end to end through real Docker: a
 * generated pytest project whose tests reach the database through libpq's variables and skip when
 * FORESIGHT_DB is not postgresql. PR #1 adds a prefix search; PR #3 fixes it ignoring case (PostgreSQL's
 * LIKE is case-sensitive, SQLite's is not). On sqlite (the recipe's first backend) every test is skipped
 * and the chain would be excluded (pr1_tests_skipped); validate falls back to the postgresql sidecar, the
 * chain reaches `test` with db_backend "postgresql", and its gold patch grades X = 100 %, Y = 0 % in the
 * eval image with the service beside it (emit's self-check and `foresight eval --gold`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { connectDocker, isDockerReachable, ownContainerIds, ownNetworkNames } from '../../core/env/index.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';
import { gradeLimits, runEval } from '../../pipeline/eval/index.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
if (!dockerUp && process.env['CI']) throw new Error('Docker is not reachable: CI must run the PostgreSQL end-to-end test');

const PYPROJECT = `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "pgstore"
version = "0.1.0"
requires-python = ">=3.8"

[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]
`;
const STORE_BASE = `def connect():
    import psycopg2

    # libpq's PG* variables name the server.
    return psycopg2.connect("")


def setup(conn):
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS items")
        cur.execute("CREATE TABLE items (name TEXT)")
        cur.executemany("INSERT INTO items VALUES (%s)", [("Apple",), ("apricot",), ("Banana",)])
    conn.commit()


def count(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM items")
        return cur.fetchone()[0]
`;
const search = (where: string): string => `

def search(conn, prefix):
    with conn.cursor() as cur:
        cur.execute("SELECT name FROM items WHERE ${where} ORDER BY name", (prefix + "%",))
        return [row[0] for row in cur.fetchall()]
`;
const TEST_HEADER = `import os

import pytest

import pgstore

pytestmark = pytest.mark.skipif(os.environ.get("FORESIGHT_DB") != "postgresql", reason="needs PostgreSQL")


@pytest.fixture
def conn():
    c = pgstore.connect()
    pgstore.setup(c)
    yield c
    c.close()
`;
const PR1_TESTS = `${TEST_HEADER}

def test_count(conn):
    assert pgstore.count(conn) == 3


def test_search_prefix(conn):
    assert pgstore.search(conn, "Ban") == ["Banana"]
`;
const PR2_TESTS = `${TEST_HEADER}

def test_search_ignores_case(conn):
    assert pgstore.search(conn, "ap") == ["Apple", "apricot"]
`;

const REPO = 'foresight-fixtures/pgchain';

describe.skipIf(!dockerUp)('a PostgreSQL-only fix, end to end (validate falls back from sqlite; eval starts the service)', () => {
  let repo: GitRepo;
  let data: string;
  let wallMs = 0;

  beforeAll(async () => {
    repo = await gitRepo();
    const d = (day: number) => `2024-03-0${day}T12:00:00Z`;
    await repo.commit({ files: { 'pyproject.toml': PYPROJECT, 'pgstore/__init__.py': STORE_BASE, 'README.md': 'pgstore\n' }, message: 'Initial commit', date: d(1) });
    await repo.commit({
      files: { 'pgstore/__init__.py': STORE_BASE + search('name LIKE %s'), 'tests/test_search.py': PR1_TESTS },
      message: 'Add prefix search (#1)\n\nsearch() returns the names of the items starting with a prefix, sorted.',
      date: d(2),
    });
    await repo.commit({ files: { 'README.md': 'pgstore: items in PostgreSQL\n' }, message: 'Describe the package (#2)', date: d(3) });
    await repo.commit({
      files: { 'pgstore/__init__.py': STORE_BASE + search('lower(name) LIKE lower(%s)'), 'tests/test_search_case.py': PR2_TESTS },
      message: 'Fix search missing names with other capitals (#3)\n\nRegression in #1: on PostgreSQL LIKE compares case, so "ap" missed "Apple".',
      date: d(4),
    });
    data = await mkdtemp(join(tmpdir(), 'foresight-pg-e2e-'));
    const env = { ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_LLM_BASE_URL: '', FORESIGHT_JOBS: '1' };
    const t0 = Date.now();
    await runPipeline({ dataRoot: data, repo: { name: REPO, clone: repo.dir }, config: loadConfig(env), secrets: loadSecrets(env), log: silentLogger });
    wallMs = Date.now() - t0;
  }, 900_000);

  afterAll(async () => {
    await repo?.remove();
    if (data) await rm(data, { recursive: true, force: true });
  });

  const jsonl = async (path: string): Promise<Array<Record<string, unknown>>> =>
    (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

  it('on sqlite the chain is excluded as skipped; on postgresql it reaches test with db_backend "postgresql"', async () => {
    const dir = join(data, 'foresight-fixtures__pgchain');
    const validated = await jsonl(join(dir, 'validate', 'items.jsonl'));
    const chain = validated.find((c) => c.instance_id === 'pgchain__1-3');
    expect(chain, JSON.stringify(validated.map((c) => [c.instance_id, c.excluded]))).toBeDefined();
    expect(chain).toMatchObject({
      db_backend: 'postgresql',
      excluded: null,
      FAIL_TO_PASS: ['tests/test_search.py::test_search_prefix'],
      PASS_TO_PASS: ['tests/test_search.py::test_count'],
      ANTICIPATION_FAIL_TO_PASS: ['tests/test_search_case.py::test_search_ignores_case'],
    });
    // The sqlite run came first and was left for its skipped tests (the run's log says which reason).
    const log = await readFile(join(dir, 'foresight.log.jsonl'), 'utf8');
    const entries = log.trim().split('\n').map((l) => JSON.parse(l) as { instance_id?: string; msg: string });
    const fallback = entries.filter((e) => e.instance_id === 'pgchain__1-3').map((e) => /^pr1_tests_skipped on sqlite \([^)]*\); validated on postgresql \([^)]*service ready in [0-9.]+ s\)/.exec(e.msg)).find(Boolean);
    expect(fallback, log.slice(-2000)).toBeDefined();
    console.info(`[postgres.test] pgchain__1-3: ${fallback![0]}`);
    const manifest = JSON.parse(await readFile(join(dir, 'validate', 'manifest.json'), 'utf8')) as { stats: Record<string, number> };
    expect(manifest.stats).toMatchObject({ backend_fallbacks: 1, backend_postgresql: 1 });

    const test = await jsonl(join(dir, 'emit', 'hf', 'jsonl', 'test.jsonl'));
    expect(test.map((r) => [r.instance_id, r.db_backend])).toEqual([['pgchain__1-3', 'postgresql']]);
    const verified = await jsonl(join(dir, 'emit', 'hf', 'jsonl', 'verified.jsonl'));
    expect(verified.find((r) => r.instance_id === 'pgchain__1-3')).toMatchObject({ db_backend: 'postgresql', excluded: false });
    expect(await readFile(join(dir, 'emit', 'hf', 'README.md'), 'utf8')).toContain('`db_backend`');
    console.info(`[postgres.test] pipeline wall time ${(wallMs / 1000).toFixed(1)} s; chain ${JSON.stringify(chain!.cost)}`);
    // Nothing of the run is left: containers and the service's network are removed.
    expect(await ownContainerIds(docker)).toEqual([]);
    expect(await ownNetworkNames(docker)).toEqual([]);
  });

  it('foresight eval --gold passes in the eval image with the PostgreSQL service beside it', async () => {
    const dataset = join(data, 'foresight-fixtures__pgchain', 'emit', 'hf');
    const { report } = await runEval({
      dataset, split: 'test', predictions: 'gold', jobs: 1, docker, limits: gradeLimits(defaultConfig().validate), log: silentLogger, signal: new AbortController().signal,
    });
    expect(report.aggregate).toMatchObject({ instances: 1, infra: 0, mean_X: 1, mean_Y: 0 });
    expect(report.instances[0]).toMatchObject({
      kind: 'graded',
      tests: {
        FAIL_TO_PASS: { 'tests/test_search.py::test_search_prefix': 'pass' },
        PASS_TO_PASS: { 'tests/test_search.py::test_count': 'pass' },
        ANTICIPATION_FAIL_TO_PASS: { 'tests/test_search_case.py::test_search_ignores_case': 'fail' },
      },
    });
    expect(await ownNetworkNames(docker)).toEqual([]);
  }, 600_000);
});
