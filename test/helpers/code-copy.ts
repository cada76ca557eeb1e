/**
 * A copy of the project's source folders in a temporary directory (node_modules linked, not copied), for
 * tests that change a line of foresight's own code and check what a rerun does: a module imported from
 * the copy computes its code keys from the copy's files.
 */
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';

export interface CodeCopy {
  root: string;
  /** Import a module of the copy (project-relative path). */
  load<T>(rel: string): Promise<T>;
  /** Change one line of a copied file: a comment is appended to the first line `pattern` matches. */
  editLine(rel: string, pattern: RegExp): Promise<void>;
  remove(): Promise<void>;
}

export async function copyProject(): Promise<CodeCopy> {
  const root = await mkdtemp(path.join(tmpdir(), 'foresight-code-copy-'));
  for (const dir of ['core', 'stages', 'judges', 'pipeline']) await cp(path.join(PROJECT_ROOT, dir), path.join(root, dir), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) await cp(path.join(PROJECT_ROOT, file), path.join(root, file));
  await symlink(path.join(PROJECT_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return {
    root,
    load: <T>(rel: string) => import(pathToFileURL(path.join(root, rel)).href) as Promise<T>,
    async editLine(rel, pattern) {
      const file = path.join(root, rel);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const i = lines.findIndex((l) => pattern.test(l));
      if (i < 0) throw new Error(`${rel} has no line matching ${pattern}`);
      lines[i] += ' // a changed line';
      await writeFile(file, lines.join('\n'));
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
