import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, stageDir } from '../../../core/foundation/artifacts.ts';
import { isSourceFile, isTestFile, isTestModule } from '../../../core/foundation/files.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../../core/foundation/model/extracted.ts';
import { demoWorkspace, runOn } from '../../helpers/demo.ts';

describe('extract on the generated demo repository', () => {
  let chains: ExtractedChain[];
  beforeAll(async () => {
    const ws = await demoWorkspace();
    for (const only of ['discover', 'szz', 'extract'] as const) await runOn(ws, { only });
    chains = await readJsonl(join(stageDir(ws.dataRoot, ws.repo.name, 'extract'), 'items.jsonl'), ExtractedChainSchema);
  });
  const chain = (id: string) => chains.find((c) => c.instance_id === id)!;

  it('names chains {repo}__{pr1}-{pr2} and takes the mainline commits (base = first parent)', () => {
    expect(chains.map((c) => c.instance_id).sort()).toEqual(['minilib__1-9', 'minilib__3-8', 'minilib__4-11', 'minilib__5-12', 'minilib__6-10']);
    const c = chain('minilib__3-8');
    expect(c.pr1_head).toBe(c.pr1.mergeSha);
    expect(c.pr1_base).toBe(c.pr1.baseSha);
    expect(c.pr2_base).toBe(c.pr2.baseSha);
  });

  it('splits each PR into a source patch and a test patch', () => {
    const c = chain('minilib__3-8');
    expect(c.patch).toContain('minilib/timeparse.py');
    expect(c.patch).not.toContain('tests/');
    expect(c.test_patch).toContain('tests/test_timeparse.py');
    expect(c.pr1_test_files).toEqual(['tests/test_package.py', 'tests/test_timeparse.py']);
    expect(c.anticipation_test_files).toEqual(['tests/test_timeparse.py']);
    expect(c.anticipation_patch).toContain('re.IGNORECASE');
  });

  it("builds PR1's statement from PR1 alone: nothing of PR2's title or body reaches it", () => {
    for (const c of chains) {
      expect(c.problem_statement).toContain(c.pr1.title);
      expect(c.problem_statement).not.toContain(c.pr2.title);
      if (c.pr2.body) expect(c.problem_statement).not.toContain(c.pr2.body);
    }
  });
});

describe('file classification', () => {
  it('tells test files, test modules and source files apart', () => {
    expect(isTestFile('tests/helpers.py')).toBe(true);
    expect(isTestModule('tests/helpers.py')).toBe(false);
    expect(isTestModule('tests/test_a.py')).toBe(true);
    expect(isTestModule('pkg/a_test.py')).toBe(true);
    expect(isTestModule('tests/conftest.py')).toBe(false);
    expect(isSourceFile('pkg/a.py')).toBe(true);
    expect(isSourceFile('docs/index.md')).toBe(false);
    expect(isSourceFile('tests/test_a.py')).toBe(false);
  });
});

describe('test file conventions of real projects', () => {
  it('reads a package shipping its own test framework (django/test/) as source, not as tests', () => {
    expect(isTestFile('django/test/testcases.py')).toBe(false);
    expect(isTestModule('django/test/testcases.py')).toBe(false);
    expect(isSourceFile('django/test/testcases.py')).toBe(true);
  });

  it("runs Django's test modules and overlays its test apps' support files", () => {
    expect(isTestModule('tests/admin_views/tests.py')).toBe(true);
    expect(isTestModule('tests/admin_views/test_actions.py')).toBe(true);
    expect(isTestFile('tests/admin_views/models.py')).toBe(true);
    expect(isTestModule('tests/admin_views/models.py')).toBe(false);
  });
});
