/**
 * Env builds do not run the repository's code as root (real Docker): a generated repository whose setup.py
 * and install commands record who they run as, built with a system package (the apt step runs as root with
 * the few capabilities it needs). While the install step runs, the test finds the build container by its
 * labels and inspects it and the install exec: memory, swap and pids limits, every capability dropped but the
 * root steps', no privilege gain, the exec's user 65534. The image keeps nothing of the build user: the venv
 * is root's and read-only to uid 65534, /tmp is empty, a process the install left running was killed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import {
  APT_CAPS,
  applyCachePolicy,
  BUILD_USER,
  connectDocker,
  DEFAULT_BUILD_MEMORY_BYTES,
  DEFAULT_BUILD_PIDS_LIMIT,
  ensureBaseImage,
  envBuildHostConfig,
  envBuildLimits,
  envImageFor,
  forceRemove,
  isDockerReachable,
  ownerLabels,
  REPO_LABEL,
  ROOT_STEP_CAPS,
} from '../../../core/env/index.ts';
import { runExec } from '../../../core/env/container/exec.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[build-isolation.test] SKIPPED: Docker is not reachable and CI is unset');

const DATE = '2024-01-01T00:00:00Z';
/** A new repository name and new dependency files each run: the build really builds, and its container is this test's. */
const NONCE = randomBytes(6).toString('hex');
const REPO = `test/isolation-${NONCE}`;
const MiB = 1024 * 1024;
/** Not the defaults: the request's limits reach the container. */
const LIMITS = { memoryBytes: 1536 * MiB, pidsLimit: 768 };
/** The install step waits (at most 60 s) for this file, made by the test once it has looked at the running build. */
const SEEN = '/tmp/foresight-probe-seen';

const SETUP_PY = `import os
from setuptools import setup


def probe():
    lines = ["uid=%d euid=%d gid=%d" % (os.getuid(), os.geteuid(), os.getgid())]
    with open("/proc/self/status") as f:
        lines += [line.strip() for line in f if line.startswith(("Cap", "NoNewPrivs"))]
    for target in ("/etc/foresight-probe", "/opt/foresight-probe", "/usr/lib/foresight-probe"):
        try:
            open(target, "w").close()
            lines.append("wrote " + target)
        except OSError as e:
            lines.append("denied %s: %s" % (target, e.strerror))
    with open("/opt/venv/foresight-setup-py.txt", "a") as f:
        f.write("\\n".join(lines) + "\\n")


probe()
setup()
`;

const recipe = RecipeSchema.parse({
  runner: 'pytest',
  systemPackages: ['jq'],
  install: [
    'pip install .',
    'echo "[probe] uid=$(id -u) gid=$(id -g)"; grep -E "^(Cap|NoNewPrivs)" /proc/self/status | sed "s/^/[probe] /"',
    // A daemon a setup.py might leave: the stop step kills it before the root steps touch the build user's files.
    '(sleep 600 >/dev/null 2>&1 &)',
    `i=0; while [ ! -e ${SEEN} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done`,
  ],
  dependencyFiles: ['pyproject.toml', 'setup.py'],
});

interface Seen {
  hostConfig: Docker.HostConfig;
  execUser: string;
  execArgs: string[];
  /** /proc/<pid>/status lines of the build user's processes, read as root from outside them. */
  processes: Array<Record<string, string>>;
}

/** Polls for the build container by its label until the install exec runs, then inspects both and releases the install. */
async function watchBuild(done: () => boolean): Promise<Seen | null> {
  while (!done()) {
    const list = await docker.listContainers({ filters: { label: [`${REPO_LABEL}=${REPO}`] } });
    for (const c of list) {
      const container = docker.getContainer(c.Id);
      const info = await container.inspect().catch(() => null);
      for (const id of info?.ExecIDs ?? []) {
        const e = await docker.getExec(id).inspect().catch(() => null);
        if (!e?.Running || !e.ProcessConfig.arguments.join(' ').includes(SEEN)) continue;
        // Every process of uid 65534 in the container, as the kernel sees it, once the install waits (a sleep runs).
        let processes: Array<Record<string, string>> = [];
        while (!done() && !processes.some((p) => p['Name'] === 'sleep')) {
          const ps = await runExec(container, ['sh', '-c', 'for s in /proc/[0-9]*/status; do grep -E "^(Name|Uid|CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):" "$s"; echo; done'], { capture: 'stdout', user: '0:0' });
          processes = ps.text
            .split('\n\n')
            .map((block) => Object.fromEntries(block.split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])))
            .filter((p) => (p['Uid'] ?? '').split(/\s+/)[0] === '65534');
          if (!processes.some((p) => p['Name'] === 'sleep')) await new Promise((r) => setTimeout(r, 200));
        }
        await runExec(container, ['touch', SEEN], { capture: 'combined', user: '0:0' });
        return { hostConfig: info!.HostConfig, execUser: e.ProcessConfig.user, execArgs: [e.ProcessConfig.entrypoint, ...e.ProcessConfig.arguments], processes };
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return null;
}

describe('env build limits (no Docker)', () => {
  it('defaults of 4 GiB (no swap beyond it) and 1024 pids; the request overrides them; nonsense is refused', () => {
    const hc = envBuildHostConfig({ limits: envBuildLimits(), apt: false, binds: [] });
    expect(hc).toMatchObject({ Memory: DEFAULT_BUILD_MEMORY_BYTES, MemorySwap: DEFAULT_BUILD_MEMORY_BYTES, PidsLimit: DEFAULT_BUILD_PIDS_LIMIT, CapDrop: ['ALL'], CapAdd: ['CHOWN', 'DAC_OVERRIDE'], NetworkMode: 'none' });
    expect(DEFAULT_BUILD_MEMORY_BYTES).toBe(4 * 1024 * MiB);
    expect(envBuildHostConfig({ limits: envBuildLimits(LIMITS), apt: true, binds: [] })).toMatchObject({ Memory: LIMITS.memoryBytes, PidsLimit: 768, CapAdd: [...ROOT_STEP_CAPS, ...APT_CAPS], NetworkMode: 'bridge' });
    expect(() => envBuildLimits({ memoryBytes: 1000 })).toThrow(ForesightError);
    expect(() => envBuildLimits({ pidsLimit: 0 })).toThrow(/pids limit/);
  });
});

describe.skipIf(skip)('env builds run the repository as uid 65534, without capabilities, within limits (real Docker)', () => {
  let repo: GitRepo;
  let logDir: string;
  let commit: string;
  const made: string[] = [];

  beforeAll(async () => {
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    logDir = await mkdtemp(path.join(tmpdir(), 'foresight-isolation-'));
    repo = await gitRepo();
    commit = await repo.commit({
      files: {
        'pyproject.toml': [
          '[build-system]',
          'requires = ["setuptools>=61"]',
          'build-backend = "setuptools.build_meta"',
          '',
          '[project]',
          'name = "isopkg"',
          'version = "0.1.0"',
          `description = "foresight isolation test ${NONCE}"`,
          '',
          '[tool.setuptools]',
          'py-modules = ["isopkg"]',
          '',
        ].join('\n'),
        'setup.py': SETUP_PY,
        'isopkg.py': 'X = 1\n',
      },
      message: 'isolation probe',
      date: DATE,
    });
    // A git directory with a file only its owner reads (as a partial clone's .promisor is): the build must still clone it.
    await writeFile(path.join(repo.dir, '.git', 'objects', 'pack', 'pack-owner-only.promisor'), 'x\n', { mode: 0o600 });
  });

  afterAll(async () => {
    if (made.length) await applyCachePolicy('base', { used: made });
    await repo?.remove();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it('the install runs as 65534 with no capability in a limited container; the image keeps nothing of its user', async () => {
    let finished = false;
    const build = envImageFor({ clone: repo.dir, repo: REPO, commit, recipe, logDir, limits: LIMITS }).finally(() => {
      finished = true;
    });
    const [seen, r] = await Promise.all([watchBuild(() => finished), build]);
    made.push(r.image);
    expect(r.ok ? '' : r.detail).toBe('');
    const log = await readFile(r.log!, 'utf8');

    // The real build container and its install exec.
    expect(seen).not.toBeNull();
    const hc = seen!.hostConfig;
    console.info(
      `[build-isolation.test] build container HostConfig: ${JSON.stringify({ Memory: hc.Memory, MemorySwap: hc.MemorySwap, PidsLimit: hc.PidsLimit, CapDrop: hc.CapDrop, CapAdd: hc.CapAdd, SecurityOpt: hc.SecurityOpt, Init: hc.Init })}; install exec User ${seen!.execUser}; processes of uid 65534: ${JSON.stringify(seen!.processes)}`,
    );
    expect(hc.Memory).toBe(LIMITS.memoryBytes);
    expect(hc.MemorySwap).toBe(LIMITS.memoryBytes);
    expect(hc.PidsLimit).toBe(LIMITS.pidsLimit);
    expect(hc.CapDrop).toEqual(['ALL']);
    expect([...(hc.CapAdd ?? [])].sort()).toEqual([...ROOT_STEP_CAPS, ...APT_CAPS].sort());
    expect(hc.SecurityOpt).toContain('no-new-privileges');
    expect(seen!.execUser).toBe(BUILD_USER);
    expect(seen!.execArgs.join(' ')).toContain('pip install .');
    // The install's shells, its daemon and its wait loop's sleep: no capability at all, no privilege gain.
    expect(seen!.processes.map((p) => p['Name'])).toContain('sleep');
    for (const p of seen!.processes) {
      expect(p).toMatchObject({ CapInh: '0000000000000000', CapPrm: '0000000000000000', CapEff: '0000000000000000', CapAmb: '0000000000000000', NoNewPrivs: '1' });
    }

    // What the install itself saw.
    expect(log).toContain('[probe] uid=65534 gid=65534');
    expect(log).toMatch(/\[probe\] CapEff:\s+0000000000000000/);
    expect(log).toMatch(/\[probe\] NoNewPrivs:\s+1/);
    expect(log).toMatch(/killing the \d+ processes the install left running/);
    expect(log).toContain('capabilities CHOWN DAC_OVERRIDE FOWNER SETUID SETGID (root steps only); install as 65534:65534');

    // The image: setup.py's own record, the venv root's and read-only to uid 65534, nothing left of the build user.
    const c = await docker.createContainer({
      Image: r.image,
      Cmd: [
        'sh',
        '-c',
        [
          'cat /opt/venv/foresight-setup-py.txt',
          'echo "venv $(stat -c %u:%g:%a /opt/venv /opt/venv/bin/python /opt/venv/lib | tr "\\n" " ")"',
          'echo "not root: $(find /opt/venv ! -user 0 | wc -l) owned, $(find / -xdev \\( -user 65534 -o -group 65534 \\) 2>/dev/null | wc -l) anywhere, $(find /opt/venv -perm /o+w ! -type l | wc -l) writable"',
          'echo "tmp: [$(ls -A /tmp; ls -A /var/tmp)]"',
          `setpriv --reuid 65534 --regid 65534 --clear-groups sh -c 'touch /opt/venv/x 2>/dev/null && echo venv writable || echo venv read-only; python -c "import isopkg; print(\\"isopkg\\", isopkg.X)"'`,
          'jq --version',
        ].join('; '),
      ],
      HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'], CapAdd: ['SETUID', 'SETGID'] },
      User: '0:0',
      Labels: ownerLabels(),
    });
    try {
      await c.start();
      await c.wait();
      const out = (await c.logs({ stdout: true, stderr: true })).toString('utf8');
      console.info(`[build-isolation.test] image check:\n${out}`);
      expect(out).toMatch(/uid=65534 euid=65534 gid=65534/);
      expect(out).toMatch(/CapEff:\s+0000000000000000/);
      expect(out).toMatch(/denied \/etc\/foresight-probe: Permission denied/);
      expect(out).toMatch(/denied \/opt\/foresight-probe: Permission denied/);
      expect(out).not.toMatch(/wrote \//);
      expect(out).toContain('venv 0:0:755 0:0:777 0:0:755'); // bin/python is a symbolic link
      expect(out).toContain('not root: 0 owned, 0 anywhere, 0 writable');
      expect(out).toContain('tmp: []');
      expect(out).toContain('venv read-only');
      expect(out).toContain('isopkg 1');
      expect(out).toMatch(/jq-1\.\d/);
    } finally {
      await forceRemove(docker, c.id);
    }
  }, 300_000);
});
