/**
 * File names git quotes (non-ASCII, backslashes, tabs, quotes, newlines) reach discover intact:
 * without -z, `git log --name-only` printed "tests/test_gr\303\274\303\237e.py" in quotes, which
 * matched no test pattern, and a fix tested only there was dropped as pr2_no_tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, stageDir } from '../../../core/foundation/artifacts.ts';
import { loadConfig } from '../../../core/foundation/config.ts';
import { mainlineFiles } from '../../../core/history/mainline.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { CandidateSchema, type Candidate } from '../../../core/foundation/model/candidate.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const day = (n: number): string => `2024-02-${String(n).padStart(2, '0')}T09:00:00Z`;

describe('discover with file names git quotes', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let candidates: Candidate[];

  beforeAll(async () => {
    repo = await gitRepo();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-quoted-'));
    await repo.commit({ files: { 'README.md': '# greet\n' }, message: 'Initial commit', date: day(1) });
    await repo.commit({ files: { 'greet/core.py': 'def greet(name):\n    return "Hallo " + name\n' }, message: 'Add greet (#1)', date: day(2) });
    await repo.commit({
      files: {
        'greet/core.py': 'def greet(name):\n    return "Hallo " + name.strip()\n',
        'tests/test_grüße.py': 'from greet.core import greet\n\ndef test_strip():\n    assert greet(" Jörg ") == "Hallo Jörg"\n',
      },
      message: 'Fix greet keeping spaces around names (#2)',
      date: day(3),
    });
    // The control: a fix that really touches no test.
    await repo.commit({ files: { 'greet/core.py': 'def greet(name):\n    return "Hallo " + name.strip().title()\n' }, message: 'Fix greet casing (#3)', date: day(4) });
    await repo.commit({
      files: {
        'greet/core.py': 'def greet(name):\n    return "Hallo, " + name.strip().title()\n',
        'tests/back\\slash/test_comma.py': 'from greet.core import greet\n\ndef test_comma():\n    assert greet("a") == "Hallo, A"\n',
      },
      message: 'Fix greet missing its comma (#4)',
      date: day(5),
    });
    await runPipeline({ dataRoot, repo: { name: 'test/greet', clone: repo.dir }, config: loadConfig({}, { offline: true }), log: silentLogger, only: 'discover' });
    candidates = await readJsonl(join(stageDir(dataRoot, 'test/greet', 'discover'), 'items.jsonl'), CandidateSchema);
  });
  afterAll(async () => {
    await repo.remove();
    await rm(dataRoot, { recursive: true, force: true });
  });

  it('a fix whose only test is tests/test_grüße.py is not pr2_no_tests', () => {
    const by = (n: number): Candidate | undefined => candidates.find((c) => c.pr2.number === n);
    expect(candidates.map((c) => c.pr2.number)).toEqual([2, 3, 4]);
    expect(by(2)!.excluded).toBeNull();
    // A test under a folder whose name holds a backslash counts too.
    expect(by(4)!.excluded).toBeNull();
    expect(by(3)!.excluded?.reason).toBe('pr2_no_tests');
  });

  it('mainlineFiles lists every name verbatim: non-ASCII, backslash, tab, quote, newline (even leading), across merges and empty commits', async () => {
    const other = await gitRepo();
    try {
      const root = await other.commit({ files: { 'a.py': '1\n' }, message: 'root', date: day(1) });
      const names = ['tests/test_grüße.py', 'back\\slash.py', 'tab\there.py', 'qu"ote.py', 'new\nline.py', '\nleading.py', 'plain.py'];
      const odd = await other.commit({ files: Object.fromEntries(names.map((n) => [n, 'x\n'])), message: 'odd names', date: day(2) });
      const empty = await other.commit({ message: 'nothing', date: day(3), allowEmpty: true });
      await other.git(['checkout', '--quiet', '-b', 'topic']);
      await other.commit({ files: { 'topic/ä b.py': 'y\n' }, message: 'topic', date: day(4) });
      await other.git(['checkout', '--quiet', 'main']);
      const main = await other.commit({ files: { 'a.py': '2\n' }, message: 'mainline', date: day(5) });
      const merge = await other.merge({ branch: 'topic', message: 'Merge topic', date: day(6) });

      const files = await mainlineFiles(other.dir, 'HEAD');
      // The first-parent history only: the topic branch's own commit is not listed.
      expect([...files.keys()].sort()).toEqual([root, odd, empty, main, merge].sort());
      expect(files.get(main)).toEqual(['a.py']);
      expect(files.get(root)).toEqual(['a.py']);
      expect([...files.get(odd)!].sort()).toEqual([...names].sort());
      expect(files.get(empty)).toEqual([]);
      // A merge lists what it brought to the first parent.
      expect(files.get(merge)).toEqual(['topic/ä b.py']);
    } finally {
      await other.remove();
    }
  });
});
