import { TextDecoder } from 'node:util';
import { readBlob } from '../../core/foundation/git.ts';
import type { BundleFile, GradingBundle } from '../../core/env/index.ts';
import { keepRules } from '../../core/extract/data-consumers.ts';
import type { JudgedChain } from '../../core/foundation/model/judged.ts';

/**
 * The files each score needs, shipped in the row (`grading_bundle`) because the eval image holds no file of
 * the future: X lays `x.files` (every test and support file PR1 touched, as at pr1_head) over the agent's
 * /testbed and runs `x.run` (pr1_test_files); Y lays `x.files` then `y.files` (PR2's, as at pr2_head, the
 * same overlay validation's S3 used) and runs `y.run` (anticipation_test_files); a module either part runs for the data
 * files it reads runs the cases validation ran (`keep`). The format is
 * core/env's GradingBundleSchema, which grading parses. Paths are stored names (pathText: a name that is not
 * UTF-8 is C-quoted); grading lays each file under the bytes it names.
 */

// ignoreBOM: a file's leading byte-order mark is part of its bytes, not dropped.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function encode(path: string, bytes: Buffer): BundleFile {
  try {
    return { path, encoding: 'utf8', content: utf8.decode(bytes) };
  } catch {
    return { path, encoding: 'base64', content: bytes.toString('base64') };
  }
}

async function filesAt(clone: string, commit: string, paths: readonly string[]): Promise<BundleFile[]> {
  const out: BundleFile[] = [];
  for (const p of [...new Set(paths)].sort()) {
    const bytes = await readBlob(clone, commit, p);
    if (bytes !== null) out.push(encode(p, bytes));
  }
  return out;
}

export async function gradingBundle(clone: string, c: JudgedChain): Promise<GradingBundle> {
  return {
    version: 1,
    x: { files: await filesAt(clone, c.pr1_head, [...c.pr1_test_files, ...c.pr1_overlay_files]), run: c.pr1_test_files, keep: keepRules(c.data_consumers.pr1) },
    y: { files: await filesAt(clone, c.pr2_head, [...c.anticipation_test_files, ...c.anticipation_overlay_files]), run: c.anticipation_test_files, keep: keepRules(c.data_consumers.pr2) },
  };
}
