/**
 * The small pytest repository the chain-env tests run (calc.py with a bug, fixed in B, probes in C), and
 * whether a container is gone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function write(dir: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

/** A pytest repository: commit A: buggy add + one passing test; B: fix + a new test; C: environment probes. */
export function makeCalcRepo(dir: string): { A: string; B: string; C: string } {
  git(dir, 'init', '-q', '-b', 'main');
  write(dir, 'calc.py', 'def add(a, b):\n    return a - b\n');
  write(dir, 'tests/test_calc.py', 'from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'A');
  const A = git(dir, 'rev-parse', 'HEAD');
  write(dir, 'calc.py', 'def add(a, b):\n    return a + b\n');
  write(
    dir,
    'tests/test_calc.py',
    'from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
  );
  git(dir, 'commit', '-qam', 'B');
  const B = git(dir, 'rev-parse', 'HEAD');
  write(
    dir,
    'tests/test_env.py',
    [
      'import os',
      '',
      '',
      'def test_uid():',
      '    assert (os.getuid(), os.getgid()) == (65534, 65534)',
      '',
      '',
      'def test_only_loopback():',
      "    assert sorted(os.listdir('/sys/class/net')) == ['lo']",
      "    with open('/proc/net/dev') as f:",
      "        ifaces = [line.split(':')[0].strip() for line in f.readlines()[2:]]",
      "    assert ifaces == ['lo']",
      '',
      '',
      'def test_clean_tree():',
      '    # git clean -fdx between runs: a file left by a previous run is gone',
      "    assert not os.path.exists('leftover.txt')",
      "    open('leftover.txt', 'w').close()",
      '',
    ].join('\n'),
  );
  write(dir, 'tests/test_broken.py', 'import module_that_does_not_exist  # noqa\n\n\ndef test_never():\n    pass\n');
  write(dir, 'tests/test_slow.py', 'import time\n\n\ndef test_sleeps():\n    time.sleep(120)\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'C');
  const C = git(dir, 'rev-parse', 'HEAD');
  // The container reads the git dir as uid 65534.
  execFileSync('chmod', ['-R', 'a+rX', path.join(dir, '.git')]);
  return { A, B, C };
}

export async function isContainerGone(docker: Docker, id: string): Promise<boolean> {
  try {
    await docker.getContainer(id).inspect();
    return false;
  } catch (err) {
    return (err as { statusCode?: number }).statusCode === 404;
  }
}
