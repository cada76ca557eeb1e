import { askUploadModes, predictUploadMode, sameContent, type HubTarget, type RemoteState, type UploadMode } from './read-remote.ts';
import { DATASET_FOLDERS, type DatasetFile, type Selection } from './select-files.ts';

/**
 * Where the plan's picture of the repository comes from: the hub, read at HF_ENDPOINT; or, in a dry run
 * that does not ask the hub, an empty repository assumed, or a local copy of it.
 */
export type RemoteSource = { kind: 'hub' } | { kind: 'assumed-empty' } | { kind: 'copy'; dir: string };

/** Exactly what a publish does on the hub: what --dry-run prints, and what the real run then does. */
export interface Plan {
  target: Omit<HubTarget, 'token' | 'fetch'>;
  source: RemoteSource;
  /** Create the repository first (it does not exist), with this visibility. */
  create: { visibility: 'private' | 'public' } | null;
  /** The commit's parent: the revision's head now; null when the repository is created first (its first commit), or when a local copy names no commit. */
  parent: string | null;
  /** Every file of the dataset; the commit carries the `new` and `changed` ones. */
  uploads: Array<DatasetFile & { mode: UploadMode; change: 'new' | 'changed' | 'unchanged' }>;
  /** Where the upload modes came from: the hub's answer, or its default rule applied here (a repository not yet created, or the hub not asked). */
  modesFrom: 'hub' | 'predicted';
  /** Files of the dataset's folders on the hub that this dataset no longer has. */
  deletes: string[];
  leftOut: string[];
  /** --private was given but the repository exists: its visibility is left as it is (public, or not known from a copy). */
  visibilityKept: boolean;
  /** Read from the hub without HF_TOKEN (a dry run): a private repository looks missing. */
  anonymous: boolean;
}

export async function makePlan(opts: { target: HubTarget; source: RemoteSource; remote: RemoteState; selection: Selection; private: boolean }): Promise<Plan> {
  const { target, source, remote, selection } = opts;
  const { token: _token, fetch: _fetch, ...shown } = target;
  // Only a plan read from the hub asks the hub how it stores each file.
  const asked = remote.kind === 'exists' && source.kind === 'hub' ? await askUploadModes(target, selection.files) : null;
  const remoteFiles = new Map(remote.kind === 'exists' ? remote.files.map((f) => [f.path, f] as const) : []);
  const uploads = await Promise.all(
    selection.files.map(async (f) => {
      const there = remoteFiles.get(f.path);
      const change = !there ? ('new' as const) : (await sameContent(f, there)) ? ('unchanged' as const) : ('changed' as const);
      return { ...f, mode: asked?.get(f.path) ?? (await predictUploadMode(f)), change };
    }),
  );
  const uploading = new Set(selection.files.map((f) => f.path));
  return {
    target: shown,
    source,
    create: remote.kind === 'missing' ? { visibility: opts.private ? 'private' : 'public' } : null,
    parent: remote.kind === 'exists' ? remote.head : null,
    uploads,
    modesFrom: asked && selection.files.every((f) => asked.has(f.path)) ? 'hub' : 'predicted',
    deletes: remote.kind === 'exists' ? remote.files.map((f) => f.path).filter((p) => DATASET_FOLDERS.some((d) => p.startsWith(d)) && !uploading.has(p)) : [],
    leftOut: selection.leftOut,
    visibilityKept: remote.kind === 'exists' && opts.private && remote.private !== true,
    anonymous: source.kind === 'hub' && !target.token,
  };
}

/** The config a data file belongs to, by its folder: `data/` is the default config's `test` split, any other folder its own config. */
export function configOfPath(path: string): string | null {
  const m = /^([^/]+)\/[^/]+\.parquet$/.exec(path);
  if (!m) return null;
  return m[1] === 'data' ? 'test' : m[1]!;
}

/** The published configs the plan would rewrite (a parquet file of theirs changed or deleted), each with its files. */
export function rewrittenConfigs(plan: Plan): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (path: string) => {
    const config = configOfPath(path);
    if (config !== null) out.set(config, [...(out.get(config) ?? []), path]);
  };
  for (const u of plan.uploads) if (u.change === 'changed') add(u.path);
  for (const d of plan.deletes) add(d);
  return out;
}

/** Nothing to do: the repository exists and already holds exactly these files. */
export function upToDate(plan: Plan): boolean {
  return !plan.create && plan.deletes.length === 0 && plan.uploads.every((u) => u.change === 'unchanged');
}

/** Where the picture of the repository came from, said plainly: whether the hub was asked. */
function sourceLine(plan: Plan): string {
  const t = plan.target;
  switch (plan.source.kind) {
    case 'hub':
      return `  read from the hub at ${t.endpoint}${plan.anonymous ? ' without HF_TOKEN' : ''}`;
    case 'assumed-empty':
      return `  the hub was not asked (a dry run reads no network): planned against an empty repository; --remote hub reads ${t.repoId} from the hub, --remote <dir> a local copy of it`;
    case 'copy':
      return `  the hub was not asked: planned against the local copy ${plan.source.dir}${plan.parent ? ` at commit ${plan.parent}` : ''}`;
  }
}

/** The plan as printed: one operation a line, sizes in bytes. */
export function formatPlan(plan: Plan): string {
  const t = plan.target;
  const lines = [`publish to ${t.endpoint}/datasets/${t.repoId} (revision ${t.revision})`, sourceLine(plan)];
  const why = plan.source.kind === 'assumed-empty' ? ': assumed missing' : plan.source.kind === 'copy' ? ': the copy is empty' : plan.anonymous ? ': missing as far as the hub shows without HF_TOKEN' : '';
  if (plan.create) lines.push(`  create the dataset repository ${t.repoId} (${plan.create.visibility})${why}`);
  else lines.push(`  the dataset repository ${t.repoId} exists${plan.visibilityKept ? `${plan.source.kind === 'hub' ? ' and is public' : ''}: --private applies only when creating it` : ''}`);
  const head = plan.parent ?? 'the head the copy was taken at (it names no commit)';
  if (upToDate(plan)) lines.push(`  no commit: ${t.revision} (head ${head}) already holds exactly these files`);
  else lines.push(`  one commit on ${t.revision}, parent ${plan.create ? "the new repository's first commit" : head}`);
  const width = Math.max(...plan.uploads.map((u) => u.path.length), ...plan.deletes.map((d) => d.length));
  const sizeWidth = Math.max(...plan.uploads.map((u) => String(u.size).length));
  for (const u of plan.uploads) {
    const verb = u.change === 'unchanged' ? 'keep  ' : 'upload';
    const note = u.change === 'unchanged' ? '  (unchanged)' : u.change === 'changed' ? '  (replaces the hub\'s copy)' : '';
    lines.push(`    ${verb} ${u.path.padEnd(width)}  ${String(u.size).padStart(sizeWidth)} bytes  ${u.mode === 'lfs' ? 'LFS' : 'regular'}${note}`);
  }
  for (const d of plan.deletes) lines.push(`    delete ${d.padEnd(width)}  (no longer in the dataset)`);
  const rule = "the hub's default rule (*.parquet, binary or >= 10 MiB: LFS)";
  lines.push(`  storage (LFS or regular): ${plan.modesFrom === 'hub' ? "the hub's answer" : plan.create ? `${rule}, a new repository's` : `${rule}; the hub decides when publishing`}`);
  if (plan.leftOut.length) lines.push(`  left out: ${plan.leftOut.join(', ')}`);
  return lines.join('\n');
}
