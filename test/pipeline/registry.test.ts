import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JUDGES } from '../../judges/registry.ts';
import type { JudgeInput } from '../../judges/types.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { parseStage, plan } from '../../pipeline/pipeline.ts';
import { STAGE_DEFS } from '../../pipeline/registry.ts';
import { STAGES } from '../../core/foundation/stage.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import { SOURCES } from '../../core/sources/registry.ts';
import { getRunner, runners } from '../../core/env/runners/registry.ts';

const folders = (rel: string): string[] =>
  readdirSync(join(PROJECT_ROOT, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

const input: JudgeInput = {
  instanceId: 'acme__widgets-1-2',
  miningCategory: 'szz',
  problemStatement: 'Add a helper that turns a title into a URL slug.',
  statementOrigin: 'raw',
  pr2Statement: 'slugify("a  b") gives "a--b"; it should give "a-b".',
  pr1: { label: 'PR #1', title: 'Add slugify', body: 'Adds slugify.', patch: '+def slugify(text):\n', testPatch: '', discussion: '' },
  pr2: { label: 'PR #2', title: 'Fix slugify on double spaces', body: 'Regression in #1.', patch: '+    parts = text.split()\n', testPatch: '', discussion: '' },
  blame: { linesFromPr1: 1, linesFromOthers: 0, explicitReference: false },
  tests: { pr1FailToPass: ['tests/test_text.py::test_slugify'], anticipation: ['tests/test_text.py::test_slugify_spaces'] },
  feedback: null,
};

/** Judges that write PR1's statement must never see PR2; every other judge needs PR2 in its prompt. */
const PR1_ONLY = new Set(['pr1_repair', 'solvability']);
/** Judges whose prompt is about PR2's statement and tests rather than PR2's title. */
const PR2_BY_STATEMENT = new Set(['pr2_solvability']);

describe('stage registry', () => {
  it('a stage folder missing from STAGE_DEFS (or out of order) is caught', () => {
    expect(folders('stages')).toEqual([...STAGES].sort());
    expect([...STAGE_DEFS.keys()]).toEqual([...STAGES]);
    for (const [name, def] of STAGE_DEFS) expect(def.name).toBe(name);
  });

  it('only the first stage reads the repository; every later one reads its predecessor', () => {
    const [first, ...rest] = [...STAGE_DEFS.values()];
    expect(first!.input).toBeNull();
    expect(typeof first!.source).toBe('function');
    for (const def of rest) expect(def.input, def.name).toBeInstanceOf(z.ZodType);
  });

  it("a stage whose entry is not its own index.ts is caught (its code fingerprint would follow another module's closure)", () => {
    for (const def of STAGE_DEFS.values()) {
      expect(fileURLToPath(def.entry), def.name).toBe(join(PROJECT_ROOT, 'stages', def.name, 'index.ts'));
    }
  });
});

describe('judge registry', () => {
  it('a judge folder missing from JUDGES is caught', () => {
    // Folders are kebab-case, judge names snake_case (they are JSON-schema names sent to the model).
    expect(folders('judges').filter((f) => f !== 'providers').map((f) => f.replaceAll('-', '_')).sort()).toEqual(Object.keys(JUDGES).sort());
  });

  it.each(Object.entries(JUDGES))('%s has a versioned prompt, a schema with the reasoning first, rules that fit it or abstain', (name, judge) => {
    expect(judge.name).toBe(name);
    expect(judge.version).toMatch(/^[a-z0-9-]+-\d+$/);
    expect(judge.schema).toBeInstanceOf(z.ZodObject);
    expect(Object.keys((judge.schema as unknown as z.ZodObject).shape)[0]).toBe('reason');
    const { system, user } = judge.prompt(input);
    expect(system.length).toBeGreaterThan(0);
    if (PR1_ONLY.has(name)) {
      expect(user).not.toContain(input.pr2.title);
      expect(user).not.toContain(input.pr2.patch.trim());
    } else if (PR2_BY_STATEMENT.has(name)) {
      expect(user).toContain(input.pr2Statement);
    } else {
      expect(user).toContain(input.pr2.title);
    }
    const variant = name === 'fairness' ? 'identifiers' : 'default';
    const ruled = judge.rules(input, variant);
    if (ruled === null) return;
    const verdict = (judge.schema as z.ZodType).parse(ruled);
    expect(typeof (judge.passes as (v: unknown) => boolean)(verdict)).toBe('boolean');
  });
});

describe('plug-in registries', () => {
  it('a test runner folder missing from the runner registry is caught', () => {
    const dirs = folders('core/env/runners');
    expect(dirs.length).toBeGreaterThan(0);
    expect([...runners.keys()].sort()).toEqual(dirs);
    for (const d of dirs) expect(getRunner(d).name).toBe(d);
  });

  it('getRunner on an unknown name lists the known runners', () => {
    expect(() => getRunner('nope')).toThrow(ForesightError);
    try {
      getRunner('nope');
    } catch (err) {
      for (const d of folders('core/env/runners')) expect((err as ForesightError).remedy).toContain(d);
    }
  });

  it('a discovery source folder missing from SOURCES is caught', () => {
    const dirs = folders('core/sources');
    expect(dirs.length).toBeGreaterThan(0);
    expect([...SOURCES.keys()].sort()).toEqual(dirs);
    for (const d of dirs) expect(SOURCES.get(d)!.name).toBe(d);
  });
});

describe('plan', () => {
  it('--from judge reruns judge and emit, both forced', () => {
    expect(plan({ from: 'judge' })).toEqual([
      { stage: 'judge', force: true },
      { stage: 'emit', force: true },
    ]);
  });

  it('--only runs exactly one stage, forced only with --force', () => {
    expect(plan({ only: 'validate' })).toEqual([{ stage: 'validate', force: false }]);
    expect(plan({ only: 'validate', force: true })).toEqual([{ stage: 'validate', force: true }]);
  });

  it('by default runs all six stages unforced, so up-to-date ones skip themselves', () => {
    expect(plan({})).toEqual(STAGES.map((stage) => ({ stage, force: false })));
    expect(plan({ force: true }).every((s) => s.force)).toBe(true);
  });

  it('parseStage rejects an unknown stage with a ForesightError listing the stages', () => {
    expect(parseStage('szz')).toBe('szz');
    let err: unknown;
    try {
      parseStage('nope');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('nope');
    for (const s of STAGES) expect((err as ForesightError).remedy).toContain(s);
  });
});

describe('stage cache keys', () => {
  it('trial: `make demo` after a run with --jobs 2 redid validate for minutes → how many items run at once is in no stage key', async () => {
    const { loadConfig } = await import('../../core/foundation/config.ts');
    const { fingerprint } = await import('../../core/foundation/fingerprint.ts');
    const one = loadConfig({}, {});
    const many = loadConfig({ FORESIGHT_SZZ_CONCURRENCY: '7', FORESIGHT_LLM_CONCURRENCY: '9' }, { jobs: '3' });
    expect([many.validate.jobs, many.szz.concurrency, many.judge.concurrency]).toEqual([3, 7, 9]);
    for (const def of STAGE_DEFS.values()) expect(fingerprint(def.config(many)), def.name).toBe(fingerprint(def.config(one)));
    // What changes a result still changes the key.
    const validate = STAGE_DEFS.get('validate')!;
    expect(fingerprint(validate.config(loadConfig({}, { runs: '5' })))).not.toBe(fingerprint(validate.config(one)));
  });
});
