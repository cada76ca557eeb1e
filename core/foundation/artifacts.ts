import { mkdir, readFile, rename, rm, appendFile, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ForesightError } from './errors.ts';
import { fingerprint, type Fingerprint } from './fingerprint.ts';
import { redact } from './secrets.ts';

/** Where a repository's artifacts live: data/<owner>__<name>/<stage>/. */
export function repoDataDir(dataRoot: string, repo: string): string {
  return join(dataRoot, repo.replace('/', '__'));
}

export function stageDir(dataRoot: string, repo: string, stage: string): string {
  return join(repoDataDir(dataRoot, repo), stage);
}

let tmpCounter = 0;

/**
 * Write a file atomically: a reader sees the old content or the new, never half. The temp file's
 * name is unique, so concurrent writers of one path cannot corrupt each other.
 */
export async function writeAtomic(path: string, content: string | Uint8Array): Promise<void> {
  // Text leaving the process never carries a secret (binary writers redact their cells themselves).
  if (typeof content === 'string') content = redact(content);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}-${++tmpCounter}.incomplete`;
  try {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(content);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export function toJsonl(items: readonly unknown[]): string {
  return items.map((i) => JSON.stringify(i)).join('\n') + (items.length ? '\n' : '');
}

/** Read a JSONL artifact, parsing every line with the schema; a bad line names file and line. */
export async function readJsonl<T>(path: string, schema: z.ZodType<T>): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ForesightError(`artifact ${path} is missing`, { remedy: 'run the stage that produces it first (foresight run)', cause: err });
  }
  const out: T[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new ForesightError(`${path}:${i + 1} is not valid JSON`, { remedy: 'rerun the stage with --force to rebuild it', cause: err });
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ForesightError(`${path}:${i + 1} does not match the artifact schema (${issue?.path.join('.')}: ${issue?.message})`, {
        remedy: 'rerun the stage with --force to rebuild it',
      });
    }
    out.push(parsed.data);
  }
  return out;
}

/** What produced a stage's output: if all of it is unchanged, the stage has nothing to do. */
export const ManifestSchema = z.object({
  stage: z.string(),
  /** Fingerprint of everything below: the cache key. */
  fingerprint: z.string(),
  inputs: z.object({
    /** Hash of the upstream artifact's content, or of the repository state for the first stage. */
    upstream: z.string(),
    /** Hash of the stage's code: the import closure of its entry module (core/foundation/code-closure.ts). */
    code: z.string(),
    /** Hash of the configuration values the stage reads. */
    config: z.string(),
  }),
  /**
   * contentFingerprint of items.jsonl's text. The runner checks it before trusting the file: a stage whose
   * output no longer matches reruns, and a downstream stage refuses to read it.
   */
  output: z.string(),
  items: z.number().int().nonnegative(),
  stats: z.record(z.string(), z.number()),
  finishedAt: z.string(),
  foresightVersion: z.string(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export async function readManifest(dir: string): Promise<Manifest | null> {
  try {
    const raw: unknown = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
    const parsed = ManifestSchema.safeParse(raw);
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function writeManifest(dir: string, m: Manifest): Promise<void> {
  await writeAtomic(join(dir, 'manifest.json'), JSON.stringify(m, null, 2) + '\n');
}

export async function removeManifest(dir: string): Promise<void> {
  await rm(join(dir, 'manifest.json'), { force: true });
}

const CheckpointLine = z.object({ key: z.string(), value: z.unknown() });

/**
 * Per-item results, appended as each item finishes, keyed by the item's own fingerprint.
 * A killed run resumes from it; a later run with some items unchanged reuses them.
 */
export class Checkpoint {
  private readonly entries = new Map<string, unknown>();
  private constructor(readonly path: string) {}

  static async open(path: string): Promise<Checkpoint> {
    const cp = new Checkpoint(path);
    await mkdir(dirname(path), { recursive: true });
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return cp; // No checkpoint yet.
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const parsed = CheckpointLine.safeParse(JSON.parse(line));
        if (parsed.success) cp.entries.set(parsed.data.key, parsed.data.value);
      } catch {
        // A line torn by a kill mid-write: that item is simply redone.
      }
    }
    // End a torn last line, or the next entry would be appended to it and lost.
    if (text && !text.endsWith('\n')) await appendFile(path, '\n');
    return cp;
  }

  get(key: Fingerprint): unknown {
    return this.entries.get(key);
  }

  has(key: Fingerprint): boolean {
    return this.entries.has(key);
  }

  async put(key: Fingerprint, value: unknown): Promise<void> {
    this.entries.set(key, value);
    await appendFile(this.path, redact(JSON.stringify({ key, value })) + '\n');
  }

  /** Keep only the given keys (the current items), rewritten atomically. */
  async compact(keep: ReadonlySet<string>): Promise<void> {
    const lines: string[] = [];
    for (const [key, value] of this.entries) if (keep.has(key)) lines.push(JSON.stringify({ key, value }));
    await writeAtomic(this.path, lines.join('\n') + (lines.length ? '\n' : ''));
  }
}

export function contentFingerprint(text: string): Fingerprint {
  return fingerprint(text);
}
