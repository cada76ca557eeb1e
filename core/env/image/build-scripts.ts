/** The shell scripts run in the env build container: the apt step and the install step (see core/env/README.md). */
import type { Recipe } from '../recipes/schema.ts';

/** Inside env images. */
export const VENV = '/opt/venv';
export const VENV_PYTHON = `${VENV}/bin/python`;

/** sh single-quoting. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The apt step (run with network to Debian's mirror), or null when the recipe needs no packages. */
export function aptScript(recipe: Pick<Recipe, 'systemPackages'>): string | null {
  if (recipe.systemPackages.length === 0) return null;
  const pkgs = recipe.systemPackages.map(q).join(' ');
  return [
    'set -eu',
    'export DEBIAN_FRONTEND=noninteractive',
    `echo '[foresight] $ apt-get install ${recipe.systemPackages.join(' ')}'`,
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

/** The install step (no network): venv, clone of $FORESIGHT_COMMIT, the recipe's commands, cleanup. */
export function installScript(recipe: Pick<Recipe, 'install' | 'runner'> & { python?: string }): string {
  const venvArgs = recipe.python !== undefined && SYSTEM_SITE_PYTHONS.has(recipe.python) ? `--system-site-packages ${VENV}` : VENV;
  const lines = [
    'set -u',
    'step() { printf "\\n[foresight] \\$ %s\\n" "$1"; }',
    'fail() { code=$1; shift; printf "\\n[foresight] FAILED (exit %s): %s\\n" "$code" "$*"; exit 1; }',
    'export GIT_CONFIG_GLOBAL=/tmp/.foresight-build.gitconfig GIT_TERMINAL_PROMPT=0 HOME=/root',
    "git config --global safe.directory '*' || fail $? 'git config'",
    `step 'python3 -m venv ${venvArgs}'`,
    `python3 -m venv ${venvArgs} || fail $? 'python3 -m venv ${venvArgs}'`,
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
