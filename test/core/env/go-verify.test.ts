/**
 * The verify loop on a Go module whose first detected candidate cannot run its tests: go.mod says `go 1.19`
 * but the code imports `slices` (Go 1.21). Go 1.19's image installs, its check at the PR's head finds the
 * package does not build, and the loop moves on to Go 1.21 (Debian bookworm-backports), which runs them;
 * env-recipes.json records why 1.19 was rejected, and the chain still becomes a `test` row.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../../core/env/index.ts';
import { ChoiceFileSchema } from '../../../core/env/image/choice-file.ts';
import { loadConfig } from '../../../core/foundation/config.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import { makeGoDemoRepo } from '../../helpers/go-demo-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[go-verify.test] SKIPPED: Docker is not reachable and CI is unset');

describe.skipIf(skip)('the verify loop passes over a Go toolchain that cannot build the tests (Docker)', () => {
  let root: string;

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    root = await mkdtemp(join(tmpdir(), 'foresight-go-verify-'));
    await makeGoDemoRepo(join(root, 'clone'), { slices: true });
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_TIMEOUT_SEC: '300' });
    await runPipeline({ dataRoot: join(root, 'data'), repo: { name: 'demo/gotext', clone: join(root, 'clone') }, config, log: silentLogger });
  }, 1_200_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('rejects go1.19 at its check (the test file does not load), and chooses go1.21', async () => {
    const file = ChoiceFileSchema.parse(JSON.parse(await readFile(join(root, 'data', 'demo__gotext', 'env-recipes.json'), 'utf8')));
    const eras = Object.values(file.eras);
    expect(eras.length).toBeGreaterThan(0);
    for (const era of eras) {
      const [first, second] = era.tried;
      expect(first).toMatchObject({ label: 'go1.19', outcome: 'rejected', stage: 'report' });
      expect(first!.reason).toMatch(/unusable report: text\/text_test\.go/);
      expect(second).toMatchObject({ label: 'go1.21', outcome: 'chosen' });
      expect(era.chosen).toBe('go1.21');
    }
  });

  it('the chain is validated in the go1.21 image: its sets are the plain module\'s', async () => {
    const items = (await readFile(join(root, 'data', 'demo__gotext', 'validate', 'items.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const c = items.find((x) => x['instance_id'] === 'gotext__1-3')!;
    expect([c['excluded'], c['FAIL_TO_PASS'], c['ANTICIPATION_FAIL_TO_PASS']]).toEqual([null, ['text/text_test.go::TestSlugifyBasic'], ['text/text_test.go::TestSlugifyCollapsesWhitespace']]);
  });
});
