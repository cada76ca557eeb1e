/**
 * A JavaScript module run by jest, a TypeScript one by vitest and a JavaScript one by mocha
 * (test/helpers/js-demo-repo.ts), each mined from discover through emit with real Docker and the offline
 * judges: the env image is detected from package.json (Node from `engines`, `npm ci` from the lockfile),
 * and #1 slugify -> #3 (runs of whitespace) becomes a `test` row with the runner's ids, gold-checked in its
 * eval image. The red team's config attack for each runner (a config whose setup file makes every
 * assertion pass, beside a wrong slugify) scores X = 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, type GradeLimits } from '../../core/env/index.ts';
import { defaultConfig, loadConfig } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { gradeLimits } from '../../pipeline/eval/index.ts';
import { emittedRows, evalOne, type Row } from '../helpers/eval-one.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';
import { makeJsDemoRepo, type JsRunnerKind } from '../helpers/js-demo-repo.ts';
import { attackPatch, type Attack } from '../helpers/red-team.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[js-chains.test] SKIPPED: Docker is not reachable and CI is unset');

const CASES: ReadonlyArray<{ kind: JsRunnerKind; file: string; language: string; src: string; attack: Record<string, string> }> = [
  {
    kind: 'jest',
    file: '__tests__/text.test.js',
    language: 'javascript',
    src: 'src/text.js',
    attack: {
      'jest.config.js': "module.exports = { setupFilesAfterEnv: ['<rootDir>/forge.js'] };\n",
      'forge.js': "expect.extend({ toBe: () => ({ pass: true, message: () => '' }) });\n",
    },
  },
  {
    kind: 'vitest',
    file: 'src/text.test.ts',
    language: 'typescript',
    src: 'src/text.ts',
    attack: {
      'vitest.config.ts': "export default { test: { setupFiles: ['./forge.ts'] } };\n",
      'forge.ts': "import { expect } from 'vitest';\nexpect.extend({ toBe: () => ({ pass: true, message: () => '' }) });\n",
    },
  },
  {
    kind: 'mocha',
    file: 'test/text.spec.js',
    language: 'javascript',
    src: 'lib/text.js',
    attack: {
      '.mocharc.json': '{ "require": ["./forge.js"] }\n',
      'forge.js': "require('node:assert').strictEqual = () => {};\n",
    },
  },
];

const WRONG = (src: string): string =>
  src.endsWith('.ts')
    ? "export function normalizeSpace(s: string): string {\n  return s;\n}\n\nexport function slugify(s: string): string {\n  return s;\n}\n"
    : 'function normalizeSpace(s) {\n  return s;\n}\n\nfunction slugify(s) {\n  return s;\n}\n\nmodule.exports = { normalizeSpace, slugify };\n';

for (const c of CASES) {
  describe.skipIf(skip)(`a ${c.language} module tested with ${c.kind}, mined to a \`test\` row (Docker)`, () => {
    let root: string;
    let clone: string;
    let test: Row[];
    let verified: Row[];
    let funnel: Row[];
    const name = `demo-${c.kind}`;
    const id = `${name}__1-3`;
    const hf = (): string => join(root, 'data', `demo__${name}`, 'emit', 'hf');

    beforeAll(async () => {
      await ensureImage(DEFAULT_BASE_ALIAS, { docker });
      root = await mkdtemp(join(tmpdir(), `foresight-${c.kind}-chain-`));
      clone = join(root, 'clone');
      await makeJsDemoRepo(clone, c.kind);
      const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_TIMEOUT_SEC: '300' });
      await runPipeline({ dataRoot: join(root, 'data'), repo: { name: `demo/${name}`, clone }, config, log: silentLogger });
      test = await emittedRows(hf(), 'test');
      verified = await emittedRows(hf(), 'verified');
      funnel = await emittedRows(hf(), 'funnel');
    }, 1_200_000);
    afterAll(async () => {
      if (root) await rm(root, { recursive: true, force: true });
    });

    const list = (v: unknown): unknown[] => JSON.parse(String(v)) as unknown[];
    const LIMITS: GradeLimits = { ...gradeLimits(defaultConfig().validate), timeoutSec: 120 };
    const evalOf = (who: string, patch: string | 'gold') => evalOne({ hf: hf(), id, who, patch, scratch: root, docker, limits: LIMITS });

    it(`#1 -> #3 is a \`test\` row with ${c.kind}'s ids: file :: describe > title`, () => {
      const row = test.find((r) => r.instance_id === id);
      expect(row, JSON.stringify(funnel.map((r) => [r.instance_id, r.exclusion_reason, r.exclusion_detail]))).toBeDefined();
      expect(list(row!.FAIL_TO_PASS)).toEqual([`${c.file}::slugify > joins words with hyphens`]);
      expect(list(row!.PASS_TO_PASS)).toEqual([`${c.file}::normalizeSpace > collapses runs of whitespace`]);
      expect(list(row!.ANTICIPATION_FAIL_TO_PASS)).toEqual([`${c.file}::slugify edge cases > collapses runs of whitespace`]);
      expect(row!.runner).toBe(c.kind);
      expect(verified.find((r) => r.instance_id === id)!.language).toBe(c.language);
    });

    it('the gold patch scores X = 100 %, Y = 0 % in the eval image', async () => {
      const i = await evalOf('gold', 'gold');
      expect([i.X, i.Y, i.tampered_files], JSON.stringify(i.runs)).toEqual([1, 0, []]);
    }, 300_000);

    it(`red team: a ${c.kind} config whose setup file makes every assertion pass, beside a wrong slugify, scores X = 0`, async () => {
      const row = test.find((r) => r.instance_id === id)!;
      const attack: Attack = { name: `${c.kind}-forged-config`, what: 'config + setup file', changes: { [c.src]: WRONG(c.src), ...c.attack } };
      const i = await evalOf(attack.name, await attackPatch(clone, String(row.base_commit), attack));
      expect([i.X, i.Y], JSON.stringify(i.runs)).toEqual([0, 0]);
      expect(i.tampered_files.map((t) => t.path)).toEqual(expect.arrayContaining(Object.keys(c.attack).filter((f) => !f.startsWith('forge'))));
    }, 300_000);
  });
}
