import { git, readBlob } from '../../core/foundation/git.ts';

/**
 * The license of the mined repository, as a Hugging Face license id: the rows carry the repository's code
 * and text, so the dataset is under its license, not ours. Read from the LICENSE / COPYING file at the
 * commit the pipeline mined, never from the work tree (it may be checked out elsewhere).
 */

/** Hub license ids (https://huggingface.co/docs/hub/repositories-licenses) we can recognise from a license text. */
export type HubLicenseId =
  | 'apache-2.0' | 'mit' | 'bsd-2-clause' | 'bsd-3-clause' | 'bsd-3-clause-clear' | 'isc' | 'mpl-2.0'
  | 'gpl-2.0' | 'gpl-3.0' | 'lgpl-2.1' | 'lgpl-3.0' | 'agpl-3.0' | 'unlicense' | 'bsl-1.0' | 'zlib'
  | 'postgresql' | 'cc0-1.0' | 'epl-2.0' | 'artistic-2.0' | 'bsd';

export type LicenseDetection =
  /** Every license file found names a license we recognise (several for a dual-licensed repository). */
  | { kind: 'known'; ids: HubLicenseId[]; files: string[]; commit: string }
  /** A license file exists but its text matches none we know: the card says `other` and names the file. */
  | { kind: 'unrecognised'; files: string[]; commit: string }
  /** No LICENSE / COPYING file at the commit. */
  | { kind: 'none'; commit: string };

/**
 * Distinctive phrases of each license's text, after normalisation (lower case, one space, no markup).
 * Every phrase of an entry must occur; the license whose first phrase comes earliest in the file wins, so a
 * notice about bundled code further down does not decide. On a tie (texts that share an opening), the
 * first entry wins: BSD-3-Clause-Clear before BSD-3 before BSD-2, LGPL-3 before LGPL-2.1, GPL-3 before GPL-2.
 */
const SIGNATURES: ReadonlyArray<{ id: HubLicenseId; phrases: readonly string[] }> = [
  { id: 'apache-2.0', phrases: ['apache license', 'version 2.0'] },
  { id: 'mpl-2.0', phrases: ['mozilla public license', '2.0'] },
  { id: 'agpl-3.0', phrases: ['gnu affero general public license', 'version 3'] },
  { id: 'lgpl-3.0', phrases: ['gnu lesser general public license', 'version 3'] },
  { id: 'lgpl-2.1', phrases: ['gnu lesser general public license', 'version 2.1'] },
  { id: 'gpl-3.0', phrases: ['gnu general public license', 'version 3'] },
  { id: 'gpl-2.0', phrases: ['gnu general public license', 'version 2'] },
  { id: 'bsl-1.0', phrases: ['boost software license', 'version 1.0'] },
  { id: 'epl-2.0', phrases: ['eclipse public license', 'v 2.0'] },
  { id: 'artistic-2.0', phrases: ['the artistic license 2.0'] },
  { id: 'cc0-1.0', phrases: ['cc0 1.0 universal'] },
  { id: 'unlicense', phrases: ['this is free and unencumbered software released into the public domain'] },
  {
    id: 'bsd-3-clause-clear',
    phrases: ['redistribution and use in source and binary forms', 'no express or implied licenses to any party\'s patent rights are granted by this license'],
  },
  // The 4-clause BSD (advertising clause) has no id of its own on the Hub: the family id.
  {
    id: 'bsd',
    phrases: ['redistribution and use in source and binary forms', 'all advertising materials mentioning features or use of this software'],
  },
  {
    id: 'bsd-3-clause',
    phrases: ['redistribution and use in source and binary forms', 'neither the name of', 'may be used to endorse or promote products derived from this software'],
  },
  { id: 'bsd-2-clause', phrases: ['redistribution and use in source and binary forms', 'redistributions in binary form must reproduce'] },
  { id: 'mit', phrases: ['permission is hereby granted, free of charge, to any person obtaining a copy', 'the software is provided "as is"'] },
  { id: 'isc', phrases: ['permission to use, copy, modify, and/or distribute this software for any purpose with or without fee is hereby granted'] },
  {
    id: 'postgresql',
    phrases: ['permission to use, copy, modify, and distribute this software and its documentation for any purpose, without fee, and without a written agreement is hereby granted'],
  },
  { id: 'zlib', phrases: ["this software is provided 'as-is', without any express or implied warranty", 'altered source versions must be plainly marked'] },
];

/** Lower case, markdown/RST decoration and line breaks removed, quotes made plain, runs of spaces collapsed. */
function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[*_#>`=|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The license a text is, or null when it matches none we know. */
export function identifyLicense(text: string): HubLicenseId | null {
  const t = normalise(text);
  let best: { id: HubLicenseId; at: number } | null = null;
  for (const s of SIGNATURES) {
    if (!s.phrases.every((p) => t.includes(p))) continue;
    const at = t.indexOf(s.phrases[0]!);
    if (!best || at < best.at) best = { id: s.id, at };
  }
  return best?.id ?? null;
}

// LICENSE, LICENSE.md, LICENCE.txt, COPYING, COPYING.rst ...: the repository's own license.
const PRIMARY = /^(licen[cs]e|copying)(\.(md|txt|rst|markdown))?$/i;
// LICENSE-MIT, LICENSE.APACHE, COPYING.LESSER ...: used only when no primary file exists (Rust-style dual licenses);
// otherwise they are bundled third-party code's licenses (Django's LICENSE.python), not the repository's.
const SECONDARY = /^(licen[cs]e|copying)[-._].+$/i;

/** The license files at the root of `commit`: the primary one(s), else the suffixed ones. Sorted, so the card is stable. */
async function licenseFiles(clone: string, commit: string): Promise<string[]> {
  const names = (await git(clone, ['ls-tree', '--name-only', '--end-of-options', commit])).split('\n').filter(Boolean);
  const primary = names.filter((n) => PRIMARY.test(n)).sort();
  return primary.length ? primary : names.filter((n) => SECONDARY.test(n)).sort();
}

/** Detect the license of the repository at `commit` from its LICENSE / COPYING files. */
export async function detectLicense(clone: string, commit: string): Promise<LicenseDetection> {
  const files = await licenseFiles(clone, commit);
  if (!files.length) return { kind: 'none', commit };
  const ids: HubLicenseId[] = [];
  for (const f of files) {
    const blob = await readBlob(clone, commit, f);
    const id = blob ? identifyLicense(blob.toString('utf8')) : null;
    // One file we cannot read as a license makes the whole answer uncertain: say `other`, never guess.
    if (!id) return { kind: 'unrecognised', files, commit };
    if (!ids.includes(id)) ids.push(id);
  }
  return { kind: 'known', ids, files, commit };
}
