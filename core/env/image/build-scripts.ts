/** The shell scripts run in the env build container: the apt step and the install step (see core/env/README.md). */
import type { Recipe } from '../recipes/schema.ts';
import { getBackend } from '../services/registry.ts';
import { SETTINGS_DIR } from '../services/types.ts';

/** Inside env images. */
export const VENV = '/opt/venv';
export const VENV_PYTHON = `${VENV}/bin/python`;

/** sh single-quoting. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Python "3.7" is bullseye's PyPy: not in the base image, installed with the recipe's packages. */
const PYPY = '3.7';

/** The apt step (run with network to Debian's mirror), or null when the recipe needs no packages. */
export function aptScript(recipe: Pick<Recipe, 'systemPackages'> & { python?: string }): string | null {
  // Debian's python3-* packages are CPython's: PyPy cannot import them, and they cost minutes of apt.
  const packages = recipe.python === PYPY ? ['pypy3', ...recipe.systemPackages.filter((p) => !p.startsWith('python3-'))] : recipe.systemPackages;
  if (packages.length === 0) return null;
  const pkgs = packages.map(q).join(' ');
  return [
    'set -eu',
    'export DEBIAN_FRONTEND=noninteractive',
    `echo '[foresight] $ apt-get install ${packages.join(' ')}'`,
    'apt-get update -q',
    `apt-get install -y -q --no-install-recommends ${pkgs}`,
    'apt-get clean',
    'rm -rf /var/lib/apt/lists/*',
  ].join('\n');
}

/**
 * Pythons whose venv sees Debian's own packages: the offline wheels lack the backports pytest needs
 * below 3.11 (tomli, exceptiongroup), so 3.9's venv falls back on bullseye's python3-pytest and its deps.
 */
const SYSTEM_SITE_PYTHONS: ReadonlySet<string> = new Set(['3.9']);

/**
 * What a recipe's database backends need in the env image: each service's Python driver (the first of
 * its candidates that installs) and its Django settings modules in SETTINGS_DIR (outside the work tree).
 * Nothing for `sqlite` alone, so the keys of recipes without services do not change.
 */
function driverLines(backends: readonly string[]): string[] {
  const lines: string[] = [];
  for (const name of backends) {
    const b = getBackend(name);
    if (b.kind === 'none') continue;
    const pip = b.drivers.map((d) => `pip install ${q(d)}`).join(' || ');
    // Not fatal: the offline drivers are cp311 wheels, and the default backend must still build on other Pythons.
    lines.push(`step ${q(pip)}`, `(${pip}) || echo ${q(`[foresight] no ${b.name} driver installs for this Python: the ${b.name} backend cannot run in this image`)}`);
    for (const [file, text] of Object.entries(b.settings)) {
      lines.push(`mkdir -p ${SETTINGS_DIR} && printf '%s' ${q(text)} >${SETTINGS_DIR}/${file} || fail $? ${q(`write ${SETTINGS_DIR}/${file}`)}`);
    }
  }
  if (lines.length) lines.push(`chmod -R a+rX ${SETTINGS_DIR}`);
  return lines;
}

/** The install step (no network): venv, clone of $FORESIGHT_COMMIT, the recipe's commands, cleanup. */
export function installScript(recipe: Pick<Recipe, 'install' | 'runner'> & { python?: string; backends?: readonly string[] }): string {
  const venvArgs = recipe.python !== undefined && SYSTEM_SITE_PYTHONS.has(recipe.python) ? `--system-site-packages ${VENV}` : VENV;
  // PyPy's venv has no ensurepip in Debian: pip, setuptools (with pkg_resources, a wheel of its own in
  // Debian) and wheel come from bullseye's own wheels (pip 20.3, run from its wheel).
  const venv =
    recipe.python === PYPY
      ? [
          `step 'pypy3 -m venv --without-pip ${VENV} && pip from /usr/share/python-wheels'`,
          `pypy3 -m venv --without-pip ${VENV} || fail $? 'pypy3 -m venv ${VENV}'`,
          `set -- /usr/share/python-wheels/pip-*.whl; ${VENV}/bin/python "$1/pip" install -q --no-index --find-links /usr/share/python-wheels pip setuptools pkg_resources wheel || fail $? 'pip into the PyPy venv'`,
        ]
      : [`step 'python3 -m venv ${venvArgs}'`, `python3 -m venv ${venvArgs} || fail $? 'python3 -m venv ${venvArgs}'`];
  const lines = [
    'set -u',
    'step() { printf "\\n[foresight] \\$ %s\\n" "$1"; }',
    'fail() { code=$1; shift; printf "\\n[foresight] FAILED (exit %s): %s\\n" "$code" "$*"; exit 1; }',
    'export GIT_CONFIG_GLOBAL=/tmp/.foresight-build.gitconfig GIT_TERMINAL_PROMPT=0 HOME=/root',
    "git config --global safe.directory '*' || fail $? 'git config'",
    ...venv,
    `export VIRTUAL_ENV=${VENV} PATH=${VENV}/bin:$PATH`,
    'step "git clone /src /tmp/testbed && git checkout $FORESIGHT_COMMIT"',
    'rm -rf /tmp/testbed',
    "git clone -q --no-hardlinks --no-checkout /src /tmp/testbed || fail $? 'git clone /src'",
    'cd /tmp/testbed || fail 1 "no /tmp/testbed"',
    'if ! git cat-file -e "$FORESIGHT_COMMIT^{commit}" 2>/dev/null; then',
    "  git fetch -q origin '+refs/*:refs/foresight/*' >/dev/null 2>&1",
    'fi',
    'git -c advice.detachedHead=false checkout -qf "$FORESIGHT_COMMIT" || fail $? "git checkout $FORESIGHT_COMMIT"',
  ];
  for (const cmd of recipe.install) {
    lines.push(`step ${q(cmd)}`, `(cd /tmp/testbed && sh -c ${q(cmd)}) || fail $? ${q(cmd)}`);
  }
  lines.push(...driverLines(recipe.backends ?? []));
  if (recipe.runner === 'pytest') {
    const ensure = 'python -m pytest --version >/dev/null 2>&1 || pip install pytest';
    lines.push(`step ${q(ensure)}`, `(cd /tmp/testbed && ${ensure}) || fail $? ${q(ensure)}`);
  }
  lines.push(
    "step 'pip freeze'",
    'pip freeze --all 2>&1 || true',
    'cd /',
    // The runner clones its own /tmp/testbed as an unprivileged user: leave /tmp empty.
    'find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true',
    'rm -rf /root/.cache',
    "echo '[foresight] env ready'",
  );
  return lines.join('\n');
}
