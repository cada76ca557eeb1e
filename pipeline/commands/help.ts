/**
 * The environment variables, as `foresight --help` lists them (README.md "Configuration" has the full
 * table). test/pipeline/cli.test.ts checks that every variable core/foundation/config.ts reads is named here.
 */
export const ENVIRONMENT: ReadonlyArray<readonly [names: string, meaning: string]> = [
  ['FORESIGHT_DATA', 'artifact root (--data; default data)'],
  ['FORESIGHT_BRANCH', 'branch whose first-parent history is mined (default HEAD)'],
  ['FORESIGHT_UNITS, FORESIGHT_TRACKER', 'auto|prs|commits: what a change is; auto|github|trac: what #N means'],
  ['FORESIGHT_SINCE, FORESIGHT_UNTIL', 'only fixes merged in [since, until) (--since, --until)'],
  ['FORESIGHT_OFFLINE', '1: git history only, no network source, no cloning (--offline)'],
  ['FORESIGHT_GIT_URL', 'where owner/name is cloned from (default https://github.com)'],
  ['GITHUB_TOKEN', 'enables the GitHub source (never printed)'],
  ['FORESIGHT_GITHUB_API_URL', 'GitHub API base (default https://api.github.com)'],
  ['FORESIGHT_TRAC_URL', 'a Trac site, e.g. https://code.djangoproject.com'],
  ['FORESIGHT_TRAC_MAX_AGE_SEC', 'serve cached Trac answers younger than this (default 0)'],
  ['FORESIGHT_ADVISORY_DB', 'a local checkout of github/advisory-database'],
  ['FORESIGHT_OSV_URL, FORESIGHT_ADVISORY_PACKAGE', 'the OSV API and the package to query, e.g. PyPI:django'],
  ['FORESIGHT_SZZ_CONCURRENCY', 'blame jobs at once (default 4)'],
  ['FORESIGHT_JOBS, FORESIGHT_RUNS', 'chains validated (or instances graded) at once, default 1; runs of each state, default 3'],
  ['FORESIGHT_REPEAT', 'candidates (default): each state once, then only the tests that can be in a set; gated: and no repeat for an excluded chain; all: every state FORESIGHT_RUNS times'],
  ['FORESIGHT_ATTRIBUTION', "execution (default): PR1 confirmed by bisecting PR2's fail->pass tests in Docker (a chain may move to another PR1, or become unattributed); off: blame's or a reference's PR1 stands"],
  ['FORESIGHT_BISECT_MAX_PROBES', "the bisection's probes per chain or oracle fix (default 28)"],
  ['FORESIGHT_BISECT_GOOD_END_PROBES', 'of them, the most spent looking back for a commit where the tests pass (default 16)'],
  ['FORESIGHT_RECIPES', "shipped (default): a repository's recipe file when there is one; detect: always detect the install"],
  ['FORESIGHT_IMAGE, FORESIGHT_RUNNER', 'one image (and its runner) for every chain instead of recipe-built images'],
  ['FORESIGHT_TIMEOUT_SEC', 'per-run timeout (default 600)'],
  ['FORESIGHT_MEMORY_MIB, FORESIGHT_PIDS_LIMIT, FORESIGHT_CPUS', 'container limits (default 2048, 512, 1)'],
  ['FORESIGHT_DISK_MIB', "size of a test container's only writable place, a tmpfs at /tmp (default 2048)"],
  ['FORESIGHT_IMAGE_CACHE, FORESIGHT_ENV_KEEP', 'env|base|none: which images are kept; env images kept (default env, 30)'],
  ['FORESIGHT_BASE_IMAGE', 'alias of the offline base image (default foresight-base:bookworm)'],
  ['FORESIGHT_LOCK_DIR', 'lock files serialising image builds (default <tmp>/foresight-locks)'],
  ['FORESIGHT_REGISTRY', 'HOST[:PORT]/NAMESPACE the eval images are pushed to (--registry)'],
  ['FORESIGHT_EVAL_HISTORY', "full|depth1: the eval images' git history"],
  ['FORESIGHT_QUEUE', 'redis://HOST:PORT: validate enqueues chains there, `foresight worker`s run them (--queue)'],
  ['FORESIGHT_WORKER_CONCURRENCY', 'jobs one worker runs at once (--concurrency; default 1)'],
  ['FORESIGHT_WORKER_LOCK_SEC', "a worker's hold on its job (default 30): a killed worker's job runs elsewhere after about this long"],
  ['DOCKER_HOST', 'the Docker daemon (default unix:///var/run/docker.sock)'],
  ['FORESIGHT_LLM_BASE_URL, FORESIGHT_LLM_API_KEY', 'an OpenAI-compatible endpoint and its key (never printed): LLM judges instead of rules'],
  ['FORESIGHT_JUDGE_MODEL, FORESIGHT_FAIRNESS_MODELS', "the judges' model; two distinct models, comma-separated, for fairness"],
  ['FORESIGHT_LLM_CONCURRENCY, FORESIGHT_MAX_REPAIRS', 'LLM requests in flight (default 4); spec-repair rounds (default 2)'],
  ['FORESIGHT_LLM_PRICES', 'JSON {"model": {"prompt": USD per 1M tokens, "completion": ...}}'],
  ['HF_TOKEN, HF_ENDPOINT', 'publish: the hub token (never printed) and the hub (default https://huggingface.co)'],
  ['FORESIGHT_PY_VENV', "publish: a venv whose python has datasets, for the load check (default .venv-test)"],
  ['FORESIGHT_DEBUG, FORESIGHT_PROFILE_GIT', 'stack traces on errors; time per git subcommand at exit'],
];

/** Two columns, the meaning on its own line when the names are long. */
export function helpTable(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = 34;
  return rows.map(([a, b]) => (a.length < width - 2 ? `  ${a.padEnd(width - 2)}${b}` : `  ${a}\n${' '.repeat(width)}${b}`)).join('\n');
}

export const EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['foresight demo', 'mine the bundled demo repository (no network, no keys)'],
  ['foresight run --repo encode/starlette --since 2024-01-01', 'mine a window of a GitHub repository'],
  ['foresight run --repo django/django --clone ~/src/django --from validate', 'rerun validate and the stages after it'],
  ['foresight eval --dataset data/demo__minilib/emit/hf --gold', "grade each row's own patch in its eval image"],
  ['foresight stages', 'the stages in order and the fingerprint of their code'],
];

export const ROOT_HELP = `
Examples:
${EXAMPLES.map(([cmd, what]) => `  $ ${cmd}\n      ${what}`).join('\n')}

Environment (flags win over it; README.md "Configuration" has every default):
${helpTable(ENVIRONMENT)}
`;
