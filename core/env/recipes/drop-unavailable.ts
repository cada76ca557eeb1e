/**
 * An install candidate without the requirements the machine cannot provide: when pip finds no
 * distribution for a requirement (`No matching distribution found for X`), the candidate is built again
 * with the project installed `--no-deps` and its own requirements (base and extras, read from its installed
 * metadata) installed together but for the dropped ones, and each requirements file installed line by line
 * (what cannot be installed is skipped and said in the build log). A requirement whose pin no offline version
 * satisfies (`click<=8.3.0`, only 8.5.0 offline) is installed unpinned instead of dropped. Which requirements
 * may be dropped (those the PR's tests do not import, test-imports.ts) and whether the result is kept (its
 * runner must run the PR's tests) is decided by core/env/image/choose-env.ts.
 */
import { bestEffortFile, shQuote, TESTBED_DISTS_PY, type RecipeCandidate } from './detect.ts';
import { normaliseDist, requirementName } from './test-imports.ts';

/** Requirements left out of one candidate at most: past it the next candidate is tried. */
export const MAX_DROPPED = 5;

/** Build-log lines naming a requirement an install left out: `try_req`'s skips and the project's dropped requirements. */
const LEFT_OUT = /^foresight: (?:skipped|dropped) (.+)$/gm;

/**
 * Prints the requirements of the project installed from /tmp/testbed (its base ones and those of the extras
 * in argv[1], comma-separated; its own extras it names expanded), one per line without the marker, except
 * those named in argv[2] (comma-separated), which it names on stderr as dropped; those named in argv[3] lose
 * their version specifier.
 */
const PROJECT_REQS_PY = [
  'import importlib.metadata as m, json, re, sys',
  'from pip._vendor.packaging.requirements import Requirement',
  'from pip._vendor.packaging.specifiers import SpecifierSet',
  'canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()',
  'names = lambda arg: {canon(n) for n in arg.split(",") if n}',
  'drop, relax = names(sys.argv[2]), names(sys.argv[3])',
  ...TESTBED_DISTS_PY,
  '    me = canon(d.metadata["Name"])',
  '    reqs = [Requirement(r) for r in d.requires or []]',
  '    want = {""} | {e for e in sys.argv[1].split(",") if e}',
  '    while True:',
  '        keep = [q for q in reqs if q.marker is None or any(q.marker.evaluate({"extra": e}) for e in want)]',
  '        more = {x for q in keep if canon(q.name) == me for x in q.extras} - want',
  '        if not more:',
  '            break',
  '        want |= more',
  '    for q in keep:',
  '        if canon(q.name) == me:',
  '            continue',
  '        if canon(q.name) in drop:',
  '            print("foresight: dropped %s" % q, file=sys.stderr)',
  '            continue',
  '        q.marker = None',
  '        if canon(q.name) in relax and q.specifier:',
  '            print("foresight: unpinned %s" % q, file=sys.stderr)',
  '            q.specifier = SpecifierSet()',
  '        print(q)',
  '    break',
].join('\n');

/**
 * Copies the project's metadata that a legacy editable install (`setup.py develop`, a project without
 * pyproject.toml) wrote into the work tree (`src/<name>.egg-info`) next to the venv's packages: the runner's
 * checkout cleans the work tree, and a project that reads its own version (`importlib.metadata.version`) would
 * then not import. Paths are resolved: found through sys.path's "" (the work tree is the cwd) they are relative.
 */
const KEEP_METADATA_PY = [
  'import importlib.metadata as m, pathlib, re, shutil, sysconfig',
  'site = pathlib.Path(sysconfig.get_paths()["purelib"])',
  'canon = lambda d: re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower()',
  'inside = lambda p: str(p).startswith("/tmp/testbed/")',
  'dists = [(d, pathlib.Path(d._path).resolve()) for d in m.distributions() if hasattr(d, "_path")]',
  'elsewhere = {canon(d) for d, p in dists if not inside(p)}',
  'done = set()',
  'for d, p in dists:',
  '    if p.suffix == ".egg-info" and inside(p) and canon(d) not in elsewhere and p not in done:',
  '        done.add(p)',
  '        shutil.copytree(p, site / p.name, dirs_exist_ok=True)',
  '        print("foresight: copied %s to %s (the runner\'s checkout cleans the work tree)" % (p, site))',
].join('\n');

export const KEEP_PROJECT_METADATA = `python -c ${shQuote(KEEP_METADATA_PY)}`;

/**
 * The project's requirements but `drop` (those in `relax` unpinned), installed together (one resolution),
 * after the project itself with --no-deps. When that fails, each requirement is looked up alone and those
 * pip finds nothing for are named (`foresight: unavailable …`): pip's own error names only the first, and
 * the next retry leaves out all of them at once.
 */
export function projectRequirementsWithout(extras: readonly string[], drop: readonly string[], relax: readonly string[] = []): string {
  const list = '/tmp/foresight-reqs.txt';
  const lookUp = `while read -r r; do pip download -q --no-deps -d /tmp/foresight-probe "$r" 2>&1 | sed -n 's/^ERROR: \\(Could not find a version that satisfies.*\\)/foresight: unavailable \\1/p'; done < ${list}`;
  const args = [extras.join(','), drop.join(','), relax.join(',')].map(shQuote).join(' ');
  return `python -c ${shQuote(PROJECT_REQS_PY)} ${args} > ${list} && if [ -s ${list} ]; then pip install -r ${list} || { s=$?; ${lookUp}; exit $s; }; fi`;
}

/** A word as shQuote wrote it, unquoted. */
function unquote(word: string): string {
  const m = /^'(.*)'$/s.exec(word);
  return m ? m[1]!.replace(/'\\''/g, "'") : word;
}

/** A requirement pip found nothing installable for; `pinnedOut`: versions exist, none satisfies its specifier. */
export interface Unavailable {
  name: string;
  pinnedOut: boolean;
}

/**
 * The distributions pip found nothing installable for in an install's output (`No matching distribution found
 * for X`, `Could not find a version that satisfies the requirement X`), each once, as pip named them; pinned
 * out when a line lists versions (`(from versions: 8.5.0)`) for a requirement with a version specifier.
 */
export function unavailableRequirements(output: string): Unavailable[] {
  const out: Unavailable[] = [];
  const RE = /(?:No matching distribution found for|Could not find a version that satisfies the requirement) ([^\s(;,]+)([^\n]*)/g;
  for (const m of output.matchAll(RE)) {
    const name = requirementName(m[1]!);
    if (name === null) continue;
    const versions = /\(from versions: ([^)]*)\)/.exec(m[2]!)?.[1]?.trim() ?? '';
    const pinnedOut = m[1]!.length > name.length && versions !== '' && versions !== 'none';
    const seen = out.find((u) => normaliseDist(u.name) === normaliseDist(name));
    if (seen) seen.pinnedOut ||= pinnedOut;
    else out.push({ name, pinnedOut });
  }
  return out;
}

/** The distributions a build log says the install left out (best-effort installs' skips, a derived candidate's drops), each once. */
export function leftOutInLog(log: string): string[] {
  const out: string[] = [];
  for (const m of log.matchAll(LEFT_OUT)) {
    const name = requirementName(m[1]!);
    if (name !== null && !out.some((n) => normaliseDist(n) === normaliseDist(name))) out.push(name);
  }
  return out;
}

/**
 * `candidate` (as detected) without the requirements `drop` and with those in `relax` unpinned: each
 * `pip install [--no-build-isolation] -e .[extras]` becomes the project with `--no-deps` (its metadata kept
 * out of the work tree) and its requirements but `drop`; each `pip install -r <file>` is installed line by
 * line, skipping what cannot be installed. Null when none of its commands is of either form.
 */
export function withoutRequirements(candidate: RecipeCandidate, drop: readonly string[], relax: readonly string[] = []): RecipeCandidate | null {
  let changed = false;
  const install: string[] = [];
  for (const cmd of candidate.recipe.install) {
    const editable = /^pip install( --no-build-isolation)? -e (\S+)$/.exec(cmd);
    const target = editable ? /^\.(?:\[([A-Za-z0-9_.,-]+)\])?$/.exec(unquote(editable[2]!)) : null;
    if (editable && target) {
      install.push(`pip install${editable[1] ?? ''} --no-deps -e ${editable[2]}`, KEEP_PROJECT_METADATA, projectRequirementsWithout(target[1]?.split(',') ?? [], drop, relax));
      changed = true;
      continue;
    }
    const file = /^pip install -r (\S+)$/.exec(cmd);
    if (file) {
      install.push(bestEffortFile(unquote(file[1]!)));
      changed = true;
      continue;
    }
    install.push(cmd);
  }
  if (!changed) return null;
  const parts = [...(drop.length ? [`without ${drop.join(', ')}`] : []), ...(relax.length ? [`${relax.join(', ')} unpinned`] : [])];
  return { label: `${candidate.label} ${parts.join('; ')}`, recipe: { ...candidate.recipe, install }, isolated: candidate.isolated };
}
