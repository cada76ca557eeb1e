/**
 * The shell scripts run in the env build container (see core/env/README.md), each as its user: the apt
 * step (root, with network), the prep step (root: the directories the install may write), a Node image's
 * node and deps steps, a Go image's go deps step (BUILD_USER, with network), the install
 * step (BUILD_USER: the repository's own code runs here), the stop step (BUILD_USER: what it left running)
 * and the finish step (root: everything back to root, /tmp emptied).
 */
import type { Recipe } from '../recipes/schema.ts';
import { getBackend } from '../services/registry.ts';
import { SETTINGS_DIR } from '../services/types.ts';
import { GO_TOOLCHAINS, goRoot, type GoVersion } from '../recipes/go-era.ts';
import { NODE_DIST_MOUNT, type NodeTools } from './node-dist.ts';

/** Inside env images. */
export const VENV = '/opt/venv';
export const VENV_PYTHON = `${VENV}/bin/python`;

/**
 * The install step's user: nobody:nogroup, never root, so setup.py and build backends get no capability and
 * cannot touch the image outside the directories the prep step gives it. The uid the test runs use too, and
 * one the base image's /etc/passwd names (code that looks itself up with getpwuid finds it); nothing it
 * writes stays its own (the finish step).
 */
export const BUILD_USER = '65534:65534';
const BUILD_UID = '65534';
/** The build user's HOME (git, pip, ~/.cache): in /tmp, emptied before the commit. */
export const BUILD_HOME = '/tmp/.foresight-home';

/** sh single-quoting. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Python "3.7" is bullseye's PyPy: not in the base image, installed with the recipe's packages. */
const PYPY = '3.7';

/** Where a Go image keeps its module cache and its warm build cache (the runner copies the latter, FORESIGHT_GOCACHE_SEED). */
export const GO_DIR = '/opt/go';
/** The Go environment of the install step and of the image: offline, no cgo (no C compiler), no toolchain download. */
export const GO_ENV = { GOMODCACHE: `${GO_DIR}/mod`, GOTOOLCHAIN: 'local', GOPROXY: 'off', CGO_ENABLED: '0', GOTELEMETRY: 'off' } as const;
/** GO_ENV and the build user's caches, as the go deps and install steps export them. */
export const GO_EXPORT = `export ${Object.entries(GO_ENV).map(([k, v]) => `${k}=${v}`).join(' ')} GOCACHE=${GO_DIR}/cache GOPATH=${BUILD_HOME}/go`;

/** Where a Node image keeps its Node and package manager (root's, from the prep step): `bin/node`, `bin/<client>`. */
export const NODE_DIR = '/opt/node';
/** Where a Node image keeps the repository's installed dependencies (FORESIGHT_NODE_MODULES), root's and read-only. */
export const NODE_MODULES_DIR = '/opt/foresight-node';
export const NODE_MODULES = `${NODE_MODULES_DIR}/node_modules`;

/** Node's linux-x64 binaries link libatomic from this major on: not in the base images, Debian's libatomic1. */
const NODE_NEEDS_LIBATOMIC = 26;

/** The apt step (run with network to Debian's mirror), or null when the recipe needs no packages. */
export function aptScript(recipe: Pick<Recipe, 'systemPackages'> & { python?: string; go?: GoVersion | undefined; node?: string | undefined }): string | null {
  // Debian's python3-* packages are CPython's: PyPy cannot import them, and they cost minutes of apt.
  const own = recipe.python === PYPY ? ['pypy3', ...recipe.systemPackages.filter((p) => !p.startsWith('python3-'))] : recipe.systemPackages;
  const withGo = recipe.go ? [GO_TOOLCHAINS[recipe.go].apt, ...own] : own;
  const packages = recipe.node !== undefined && Number(recipe.node) >= NODE_NEEDS_LIBATOMIC && !withGo.includes('libatomic1') ? ['libatomic1', ...withGo] : withGo;
  if (packages.length === 0) return null;
  const pkgs = packages.map(q).join(' ');
  // A `name/<suite>` package comes from that suite of the mirror the base image was built from.
  const suites = [...new Set(packages.flatMap((p) => (p.includes('/') ? [p.split('/')[1]!] : [])))];
  return [
    'set -eu',
    'export DEBIAN_FRONTEND=noninteractive',
    ...suites.flatMap((suite) => [
      "mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)",
      `[ -n "$mirror" ] || { echo '[foresight] no deb line in /etc/apt/sources.list: cannot add ${suite}'; exit 1; }`,
      `echo "deb $mirror ${suite} main" >/etc/apt/sources.list.d/foresight-${suite}.list`,
    ]),
    `echo '[foresight] $ apt-get install ${packages.join(' ')}'`,
    'apt-get update -q',
    `apt-get install -y -q --no-install-recommends ${pkgs}`,
    // Debian's versioned toolchains live in /usr/lib/go-<v>: put go and gofmt on PATH.
    ...(recipe.go ? [`ln -sf ${goRoot(recipe.go)}/bin/go ${goRoot(recipe.go)}/bin/gofmt /usr/local/bin/`] : []),
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

/** The directories the install step writes and the image keeps: the venv, and the settings modules when a service backend needs them. */
function buildDirs(recipe: { backends?: readonly string[]; go?: string | undefined; node?: string | undefined }): string[] {
  const services = (recipe.backends ?? []).some((name) => getBackend(name).kind !== 'none');
  return [VENV, ...(services ? [SETTINGS_DIR] : []), ...(recipe.go ? [GO_DIR] : []), ...(recipe.node ? [NODE_MODULES_DIR] : [])];
}

/**
 * The node step of a Node image (root, after prep): its tools unpacked from the host's cache mounted
 * read-only, the node binary alone to NODE_DIR/bin, the client's package to NODE_DIR/lib/<cmd> with a
 * launcher at NODE_DIR/bin/<cmd> (its package.json's `bin`), all root's and read-only to others. A node that
 * does not run here (a library the image lacks) fails the build, and the next Node major is tried.
 */
export function nodeScript(t: NodeTools): string {
  const lib = `${NODE_DIR}/lib/${t.client.cmd}`;
  const binOf = `const p = require(${JSON.stringify(`${lib}/package.json`)}); const b = typeof p.bin === 'string' ? p.bin : (p.bin || {})[process.argv[1]]; if (!b) process.exit(3); process.stdout.write(b.replace(/^\\.\\//, ''))`;
  return [
    'set -eu',
    `echo ${q(`[foresight] $ node ${t.node.version} and ${t.client.pkg} ${t.client.version} into ${NODE_DIR}`)}`,
    `rm -rf ${NODE_DIR} && mkdir -p ${NODE_DIR}/bin ${lib}`,
    `tar -xzf ${NODE_DIST_MOUNT}/${q(t.node.file)} -C ${NODE_DIR} --strip-components=1 --no-same-owner package/bin/node`,
    `tar -xzf ${NODE_DIST_MOUNT}/${q(t.client.file)} -C ${lib} --strip-components=1 --no-same-owner`,
    `${NODE_DIR}/bin/node --version >/dev/null || { echo ${q(`[foresight] FAILED (exit 1): node ${t.node.version} does not run in this image`)}; exit 1; }`,
    `bin=$(${NODE_DIR}/bin/node -e ${q(binOf)} ${t.client.cmd}) || { echo ${q(`[foresight] FAILED (exit 1): ${t.client.pkg} names no ${t.client.cmd} in its package.json bin`)}; exit 1; }`,
    `printf '#!/bin/sh\\nexec ${NODE_DIR}/bin/node ${lib}/%s "$@"\\n' "$bin" >${NODE_DIR}/bin/${t.client.cmd}`,
    `chmod 0755 ${NODE_DIR}/bin/${t.client.cmd}`,
    `chown -R root:root ${NODE_DIR}`,
    `chmod -R go-w,ug-s ${NODE_DIR}`,
    `echo "[foresight] node $(${NODE_DIR}/bin/node --version)"`,
  ].join('\n');
}

/**
 * The prep step (root, before the install): the directories the install step may write, owned by BUILD_USER,
 * and the clone of /src at /tmp/testbed, given to BUILD_USER. Root clones because a clone's git directory
 * may hold files only its owner reads (a partial clone's `.promisor`, a umask 077 checkout); the copy is
 * the build user's. No repository code runs in a clone without checkout.
 */
export function prepScript(recipe: { backends?: readonly string[]; go?: string | undefined; node?: string | undefined }): string {
  const dirs = buildDirs(recipe).join(' ');
  return [
    'set -eu',
    `mkdir -p ${dirs}`,
    `chmod 0755 ${dirs}`,
    `chown ${BUILD_USER} ${dirs}`,
    "echo '[foresight] $ git clone --no-checkout /src /tmp/testbed'",
    'rm -rf /tmp/testbed',
    // /src belongs to the host's user: git refuses another uid's repository unless told it is safe.
    "git -c safe.directory='*' clone -q --no-hardlinks --no-checkout /src /tmp/testbed",
    `chown -R ${BUILD_USER} /tmp/testbed`,
  ].join('\n');
}

/**
 * The stop step (BUILD_USER, after the install): a process the install left behind (a daemon a setup.py
 * started) is killed before the finish step works as root on the files it could still change.
 */
export const STOP_SCRIPT = [
  // kill(-1) succeeds whenever any other process exists (root's included): count the build user's in /proc.
  'count() {',
  '  c=0',
  '  for d in /proc/[0-9]*; do',
  '    [ "${d#/proc/}" = "$$" ] && continue',
  `    while read -r k r _; do [ "$k" = Uid: ] || continue; [ "$r" = ${BUILD_UID} ] && c=$((c + 1)); break; done 2>/dev/null <"$d/status"`,
  '  done',
  '}',
  'count',
  `[ $c -eq 0 ] || echo "[foresight] killing the $c processes the install left running"`,
  'i=0',
  'while [ $c -gt 0 ]; do',
  "  i=$((i + 1)); [ $i -le 10 ] || { echo '[foresight] processes of the build user survive SIGKILL'; exit 1; }",
  '  kill -KILL -1 2>/dev/null',
  '  sleep 0.2',
  '  count',
  'done',
].join('\n');

/**
 * The finish step (root, after the install and the stop step): the venv and the settings modules become
 * root's, read-only to everyone else (a test run must not change what the next one imports) and without
 * set-id bits (no root program planted by the install); anything else the build user left is given to
 * root, and /tmp is left empty: the runner clones its own /tmp/testbed as an unprivileged user. Neither
 * `chown -R` nor `find` follows a symbolic link the install may have planted.
 */
export function finishScript(recipe: { backends?: readonly string[]; go?: string | undefined; node?: string | undefined }): string {
  const dirs = buildDirs(recipe).join(' ');
  return [
    'set -eu',
    `echo '[foresight] $ chown -R root:root ${dirs}'`,
    `chown -R root:root ${dirs}`,
    `chmod -R go-w,ug-s ${dirs}`,
    'find /tmp /var/tmp /run/lock -mindepth 1 -maxdepth 1 -exec rm -rf {} +',
    // Other world-writable places (one a system package made, say); bind mounts are not descended.
    `find / -xdev \\( -user ${BUILD_UID} -o -group ${BUILD_UID} \\) -print -exec chown -h root:root {} +`,
    "echo '[foresight] env ready'",
  ].join('\n');
}

/** The start of a build user's step: its shell helpers, umask, HOME and git configuration. */
export const BUILD_USER_PREAMBLE = [
  'set -u',
  'step() { printf "\\n[foresight] \\$ %s\\n" "$1"; }',
  'fail() { code=$1; shift; printf "\\n[foresight] FAILED (exit %s): %s\\n" "$code" "$*"; exit 1; }',
  'umask 022',
  `export HOME=${BUILD_HOME} GIT_CONFIG_GLOBAL=${BUILD_HOME}/.gitconfig GIT_TERMINAL_PROMPT=0`,
  `mkdir -p ${BUILD_HOME} || fail $? 'mkdir ${BUILD_HOME}'`,
  // /src belongs to the host's user, not to the build user: git would refuse it as a "dubious" repository.
  "git config --global safe.directory '*' || fail $? 'git config'",
];

/** Checkout of $FORESIGHT_COMMIT in the clone the prep step made of /src at /tmp/testbed (the build user's). */
export const CHECKOUT = [
  'step "git checkout $FORESIGHT_COMMIT (in the clone of /src at /tmp/testbed)"',
  'cd /tmp/testbed || fail 1 "no /tmp/testbed (the prep step clones it)"',
  'if ! git cat-file -e "$FORESIGHT_COMMIT^{commit}" 2>/dev/null; then',
  "  git fetch -q origin '+refs/*:refs/foresight/*' >/dev/null 2>&1",
  'fi',
  'git -c advice.detachedHead=false checkout -qf "$FORESIGHT_COMMIT" || fail $? "git checkout $FORESIGHT_COMMIT"',
];

/**
 * The end of a Node install: node_modules out of the work tree into NODE_MODULES (the runner links the work
 * tree's node_modules to it). Links into the work tree (workspace packages) are made absolute first, so they
 * still reach /tmp/testbed, where the runner checks states out.
 */
const NODE_MODULES_MOVE = [
  `step 'node_modules -> ${NODE_MODULES}'`,
  'cd /tmp/testbed || fail 1 "no /tmp/testbed"',
  '[ -d node_modules ] || mkdir node_modules || fail $? "mkdir node_modules"',
  'for l in node_modules/* node_modules/@*/* node_modules/.bin/*; do',
  '  [ -L "$l" ] || continue',
  '  t=$(readlink -f "$l") || continue',
  '  case $t in /tmp/testbed/node_modules/*) ;; /tmp/testbed/*) ln -sfn "$t" "$l" ;; esac',
  'done',
  `mv node_modules ${NODE_MODULES} || fail $? 'mv node_modules ${NODE_MODULES}'`,
  `echo "[foresight] node $(node --version): $(ls ${NODE_MODULES} | wc -l) entries in ${NODE_MODULES}"`,
];

/** Puts every URL of the public npm registry (and yarn's alias of it) in lockfile $1 on the configured registry $reg. */
const ON_REGISTRY = [
  'on_registry() {',
  '  [ -f "$1" ] || return 0',
  "  r=$(printf '%s' \"$reg\" | sed 's/[|&\\\\]/\\\\&/g')",
  '  if [ "$reg" = https://registry.npmjs.org/ ]; then',
  "    sed -i -e \"s|https\\{0,1\\}://registry\\.yarnpkg\\.com/|$r|g\" \"$1\"",
  '  else',
  "    sed -i -e \"s|https\\{0,1\\}://registry\\.\\(yarnpkg\\.com\\|npmjs\\.org\\)/|$r|g\" \"$1\"",
  '  fi',
  '}',
];

/**
 * The deps step of a Node image (BUILD_USER, with network to the registry; see core/env/README.md): the
 * commit checked out, then its lockfile's client installs its dependencies with every script disabled (no
 * code of the repository or its dependencies runs while the network is there) and the clients' own
 * switches that would run some (yarn's yarnPath, berry's plugins, pnpm's pnpmfile, npm's git) held off.
 * The registry, the CA bundle and the token come as the exec's variables (FORESIGHT_NPM_REGISTRY,
 * NODE_EXTRA_CA_CERTS, FORESIGHT_NPM_TOKEN); the user npmrc written here names the token by reference only.
 */
export function depsScript(t: NodeTools): string {
  const c = t.client.name;
  // Set before the client first runs (even for --version): yarn would otherwise run a yarnPath of the repository's.
  const guard: string[] =
    c === 'yarn'
      ? [`export YARN_IGNORE_PATH=1 SKIP_YARN_COREPACK_CHECK=1 YARN_REGISTRY="$reg" YARN_CACHE_FOLDER=${BUILD_HOME}/.yarn-cache`]
      : c === 'pnpm'
        ? // pnpm would otherwise fetch and run the pnpm version packageManager names instead of this one.
          ['export npm_config_manage_package_manager_versions=false']
        : c === 'yarn-berry'
        ? [
            // Berry reads only the rc file named here: the project's .yarnrc.yml without yarnPath and plugins (its code).
            "if [ -f .yarnrc.yml ]; then awk '/^[^[:space:]#]/ { skip = ($0 ~ /^(yarnPath|plugins)[[:space:]]*:/) } !skip' .yarnrc.yml >.foresight-yarnrc.yml; else : >.foresight-yarnrc.yml; fi",
            'export YARN_RC_FILENAME=.foresight-yarnrc.yml YARN_IGNORE_PATH=1 YARN_NODE_LINKER=node-modules YARN_ENABLE_SCRIPTS=0 YARN_ENABLE_TELEMETRY=0 YARN_ENABLE_GLOBAL_CACHE=0 YARN_ENABLE_PROGRESS_BARS=0 YARN_NPM_REGISTRY_SERVER="${reg%/}"',
            '[ -z "${NODE_EXTRA_CA_CERTS:-}" ] || export YARN_HTTPS_CA_FILE_PATH="$NODE_EXTRA_CA_CERTS"',
            '[ -z "${FORESIGHT_NPM_TOKEN:-}" ] || export YARN_NPM_AUTH_TOKEN="$FORESIGHT_NPM_TOKEN"',
          ]
          : [];
  const install: string[] =
    c === 'npm'
      ? [
          'on_registry package-lock.json; on_registry npm-shrinkwrap.json',
          'if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then',
          "  step 'npm ci --ignore-scripts'",
          "  npm ci --ignore-scripts || fail $? 'npm ci --ignore-scripts'",
          'else',
          // Without a lockfile: what the registry held at the commit's date; a registry whose publish dates are
          // not the packages' own (a mirror's) may have nothing that old: then its newest, said so.
          '  before=$(git log -1 --format=%cI "$FORESIGHT_COMMIT")',
          '  step "npm install --ignore-scripts --no-package-lock --before=$before (no lockfile)"',
          '  if ! npm install --ignore-scripts --no-package-lock --before="$before"; then',
          "    step 'npm install --ignore-scripts --no-package-lock (nothing fits the commit date on this registry: its newest versions)'",
          "    npm install --ignore-scripts --no-package-lock || fail $? 'npm install --ignore-scripts --no-package-lock'",
          '  fi',
          'fi',
        ]
      : c === 'yarn'
        ? [
            'on_registry yarn.lock',
            'if [ -f yarn.lock ]; then set -- --frozen-lockfile; else set -- --pure-lockfile; fi',
            'step "yarn install $1 --ignore-scripts"',
            'yarn install "$1" --ignore-scripts --non-interactive --network-timeout 300000 || fail $? "yarn install $1 --ignore-scripts"',
          ]
        : c === 'pnpm'
          ? [
              'if [ -f pnpm-lock.yaml ]; then set -- --frozen-lockfile; else set -- --no-frozen-lockfile; fi',
              'step "pnpm install $1 --ignore-scripts --ignore-pnpmfile"',
              `pnpm install "$1" --ignore-scripts --ignore-pnpmfile --store-dir ${BUILD_HOME}/.pnpm-store --reporter=append-only || fail $? "pnpm install $1 --ignore-scripts --ignore-pnpmfile"`,
            ]
          : [
              "step 'yarn install --immutable --mode=skip-build (yarn berry, node-modules linker)'",
              "yarn install --immutable --mode=skip-build || fail $? 'yarn install --immutable --mode=skip-build'",
              'rm -f .foresight-yarnrc.yml',
            ];
  return [
    ...BUILD_USER_PREAMBLE,
    `export PATH=${NODE_DIR}/bin:$PATH`,
    ...CHECKOUT,
    'reg=${FORESIGHT_NPM_REGISTRY:-https://registry.npmjs.org/}',
    'case $reg in */) ;; *) reg=$reg/ ;; esac',
    // The user npmrc (the project's own is read too): the registry, the CA, the token by reference only.
    '{',
    '  echo "registry=$reg"',
    '  [ -z "${NODE_EXTRA_CA_CERTS:-}" ] || echo "cafile=$NODE_EXTRA_CA_CERTS"',
    '  [ -z "${FORESIGHT_NPM_TOKEN:-}" ] || printf \'%s:_authToken=${FORESIGHT_NPM_TOKEN}\\n\' "${reg#*:}"',
    `} >${BUILD_HOME}/.npmrc || fail $? 'write ${BUILD_HOME}/.npmrc'`,
    // Variables outrank a project's .npmrc: no script, no module npm 6 loads at start, no other git program, this registry.
    `export npm_config_registry="$reg" npm_config_ignore_scripts=true npm_config_onload_script= npm_config_git=git npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_progress=false npm_config_cache=${BUILD_HOME}/.npm`,
    ...guard,
    `step "${t.client.cmd} $(${t.client.cmd} --version 2>&1 | tail -n 1) on node $(node --version)"`,
    ...ON_REGISTRY,
    ...install,
    // The lockfiles as committed (on_registry rewrote them); nothing of the registry's configuration stays.
    'git checkout -q -- . 2>/dev/null',
    `rm -f ${BUILD_HOME}/.npmrc`,
    '[ -d node_modules ] || mkdir node_modules || fail $? "mkdir node_modules"',
    'echo "[foresight] dependencies installed: $(ls node_modules | wc -l) entries in node_modules"',
  ].join('\n');
}

/**
 * The install step (BUILD_USER, no network): venv, clone of $FORESIGHT_COMMIT, the recipe's commands,
 * cleanup of its own files. The prep step has made VENV (and SETTINGS_DIR) its own.
 */
export function installScript(recipe: Pick<Recipe, 'install' | 'runner'> & { python?: string; backends?: readonly string[]; go?: string | undefined; node?: string | undefined }): string {
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
    ...BUILD_USER_PREAMBLE,
    ...venv,
    `export VIRTUAL_ENV=${VENV} PATH=${VENV}/bin:$PATH`,
    // Go: modules and the build cache the runner starts from go into the image; nothing is downloaded here
    // (GOPROXY=off): modules come from vendor/ or the go deps step's module cache.
    ...(recipe.go ? [GO_EXPORT] : []),
    // Node: its tools first on PATH; the deps step has installed node_modules in the work tree.
    ...(recipe.node ? [`export PATH=${NODE_DIR}/bin:$PATH`] : []),
    ...CHECKOUT,
  ];
  for (const cmd of recipe.install) {
    lines.push(`step ${q(cmd)}`, `(cd /tmp/testbed && sh -c ${q(cmd)}) || fail $? ${q(cmd)}`);
  }
  if (recipe.node) lines.push(...NODE_MODULES_MOVE);
  lines.push(...driverLines(recipe.backends ?? []));
  if (recipe.runner === 'pytest') {
    const ensure = 'python -m pytest --version >/dev/null 2>&1 || pip install pytest';
    lines.push(`step ${q(ensure)}`, `(cd /tmp/testbed && ${ensure}) || fail $? ${q(ensure)}`);
  }
  lines.push(
    "step 'pip freeze'",
    'pip freeze --all 2>&1 || true',
    'cd /',
    // Its own files in /tmp (the clone, HOME); the finish step empties what is left.
    'find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true',
  );
  return lines.join('\n');
}
