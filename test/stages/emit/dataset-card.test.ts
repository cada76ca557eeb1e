import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, inspectImage, isDockerReachable } from '../../../core/env/index.ts';
import { ForesightError } from '../../../core/errors.ts';
import type { JudgedChain } from '../../../core/model/judged.ts';
import { datasetCard, REPO_ID_PLACEHOLDER, setCardRepoId, sizeCategory, type CardInput } from '../../../stages/emit/dataset-card.ts';
import { detectLicense, identifyLicense } from '../../../stages/emit/license.ts';
import { funnelOf, renderPlots, type Funnel, type PlotInput } from '../../../stages/emit/plots.ts';
import { minedDemoCopy } from '../../helpers/demo.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { runPython } from '../../helpers/python.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

// ---- license texts, as repositories ship them ----------------------------------------------------

const MIT = `MIT License

Copyright (c) 2020 Acme

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

// Starlette's LICENSE.md: BSD-3-Clause in markdown, a link in the copyright line.
const BSD3_MD = `Copyright © 2018, [Encode OSS Ltd](https://www.encode.io/).
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

* Redistributions of source code must retain the above copyright notice, this
  list of conditions and the following disclaimer.

* Redistributions in binary form must reproduce the above copyright notice,
  this list of conditions and the following disclaimer in the documentation
  and/or other materials provided with the distribution.

* Neither the name of the copyright holder nor the names of its
  contributors may be used to endorse or promote products derived from
  this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED.
`;

// BSD-2-Clause: the same opening, without the endorsement clause.
const BSD2 = `Copyright (c) 2015, Acme
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.
2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES ARE DISCLAIMED.
`;

const APACHE = `
                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION

   1. Definitions.

      "License" shall mean the terms and conditions for use, reproduction,
      and distribution as defined by Sections 1 through 9 of this document.

      "Licensor" shall mean the copyright owner or entity authorized by
      the copyright owner that is granting the License.
`;

const LGPL3 = `                   GNU LESSER GENERAL PUBLIC LICENSE
                       Version 3, 29 June 2007

 Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>
 Everyone is permitted to copy and distribute verbatim copies
 of this license document, but changing it is not allowed.

  This version of the GNU Lesser General Public License incorporates
the terms and conditions of version 3 of the GNU General Public
License, supplemented by the additional permissions listed below.
`;

// Django ships Python's license for code it bundles beside its own BSD-3 LICENSE.
const PSF = `A. HISTORY OF THE SOFTWARE
==========================

Python was created in the early 1990s by Guido van Rossum at Stichting
Mathematisch Centrum (CWI, see https://www.cwi.nl) in the Netherlands.

PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2
--------------------------------------------
`;

const PROPRIETARY = 'Copyright (c) 2021 Acme Corp. All rights reserved. No part of this software may be copied.\n';

describe('identifyLicense', () => {
  it.each([
    ['MIT', MIT, 'mit'],
    ['BSD-3-Clause in markdown (Starlette)', BSD3_MD, 'bsd-3-clause'],
    ['BSD-2-Clause (no endorsement clause)', BSD2, 'bsd-2-clause'],
    ['Apache-2.0', APACHE, 'apache-2.0'],
    ['LGPL-3.0, which names the GPL inside', LGPL3, 'lgpl-3.0'],
  ])('%s', (_name, text, id) => {
    expect(identifyLicense(text)).toBe(id);
  });

  it('a notice about bundled Apache code after the BSD text does not make the repository Apache', () => {
    expect(identifyLicense(`${BSD3_MD}\nThird-party: parts of vendor/ are under the Apache License, Version 2.0.\n`)).toBe('bsd-3-clause');
  });

  it('a text it does not know is null, never a guess', () => {
    expect(identifyLicense(PROPRIETARY)).toBeNull();
    expect(identifyLicense(PSF)).toBeNull();
  });
});

describe('detectLicense reads the license files at the mined commit', () => {
  let repo: GitRepo;
  const at: Record<string, string> = {};

  beforeAll(async () => {
    repo = await gitRepo();
    at.none = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'init', date: '2024-01-01T00:00:00Z' });
    at.mit = await repo.commit({ files: { LICENSE: MIT }, message: 'MIT', date: '2024-01-02T00:00:00Z' });
    at.apache = await repo.commit({ files: { 'LICENSE.txt': APACHE }, delete: ['LICENSE'], message: 'Apache', date: '2024-01-03T00:00:00Z' });
    // Django's layout: its own BSD-3 LICENSE, and Python's license for bundled code.
    at.django = await repo.commit({ files: { LICENSE: BSD3_MD, 'LICENSE.python': PSF }, delete: ['LICENSE.txt'], message: 'BSD', date: '2024-01-04T00:00:00Z' });
    at.proprietary = await repo.commit({ files: { 'COPYING.md': PROPRIETARY }, delete: ['LICENSE', 'LICENSE.python'], message: 'closed', date: '2024-01-05T00:00:00Z' });
    // Rust-style dual license: suffixed files only.
    at.dual = await repo.commit({ files: { 'LICENSE-MIT': MIT, 'LICENSE-APACHE': APACHE }, delete: ['COPYING.md'], message: 'dual', date: '2024-01-06T00:00:00Z' });
  });
  afterAll(() => repo.remove());

  it('BSD-3 (Django layout): the bundled code license beside it does not count', async () => {
    expect(await detectLicense(repo.dir, at.django!)).toEqual({ kind: 'known', ids: ['bsd-3-clause'], files: ['LICENSE'], commit: at.django });
  });

  it('MIT and Apache-2.0 (LICENSE.txt)', async () => {
    expect(await detectLicense(repo.dir, at.mit!)).toMatchObject({ kind: 'known', ids: ['mit'], files: ['LICENSE'] });
    expect(await detectLicense(repo.dir, at.apache!)).toMatchObject({ kind: 'known', ids: ['apache-2.0'], files: ['LICENSE.txt'] });
  });

  it('no license file: none; a file it cannot read as a license: unrecognised', async () => {
    expect(await detectLicense(repo.dir, at.none!)).toEqual({ kind: 'none', commit: at.none });
    expect(await detectLicense(repo.dir, at.proprietary!)).toEqual({ kind: 'unrecognised', files: ['COPYING.md'], commit: at.proprietary });
  });

  it('a dual license (LICENSE-APACHE + LICENSE-MIT) gives both ids', async () => {
    expect(await detectLicense(repo.dir, at.dual!)).toMatchObject({ kind: 'known', ids: ['apache-2.0', 'mit'], files: ['LICENSE-APACHE', 'LICENSE-MIT'] });
  });

  it('reads the commit, not the work tree: an uncommitted LICENSE changes nothing', async () => {
    await writeFile(join(repo.dir, 'LICENSE'), MIT);
    expect(await detectLicense(repo.dir, at.none!)).toEqual({ kind: 'none', commit: at.none });
    await rm(join(repo.dir, 'LICENSE'));
  });
});

// ---- rows and the card ---------------------------------------------------------------------------

type Row = Record<string, unknown>;
const sets = (f2p: number, p2p: number, anti: number) => ({
  FAIL_TO_PASS: JSON.stringify(Array.from({ length: f2p }, (_, i) => `t::f${i}`)),
  PASS_TO_PASS: JSON.stringify(Array.from({ length: p2p }, (_, i) => `t::p${i}`)),
  ANTICIPATION_FAIL_TO_PASS: JSON.stringify(Array.from({ length: anti }, (_, i) => `t::a${i}`)),
});
const labels = { severity: null, failure_mode: null, difficulty: null, pr1_difficulty: null };

function verifiedRow(id: string, over: Row = {}): Row {
  return { instance_id: id, repo: 'acme/widgets', language: 'python', gradeable: false, excluded: true, exclusion_reason: 'ineligible', mining_category: 'szz', gap_days: 3, ...sets(0, 0, 0), ...labels, ...over };
}

const ROWS = {
  verified: [
    verifiedRow('w__1-2', { gradeable: true, excluded: false, exclusion_reason: null, mining_category: 'cross_reference', gap_days: 0, ...sets(1, 40, 1) }),
    verifiedRow('w__3-4', { gradeable: true, excluded: false, exclusion_reason: null, gap_days: 3, ...sets(3, 7, 2) }),
    verifiedRow('w__5-6', { gradeable: true, exclusion_reason: 'unattributed', gap_days: 3, ...sets(1, 2, 1) }),
    verifiedRow('w__7-8', { gap_days: 250 }),
    verifiedRow('w__9-10', { exclusion_reason: 'pr1_no_tests', gap_days: 21 }),
  ],
  test: [] as Row[],
};
ROWS.test = ROWS.verified.filter((r) => r.excluded === false).map(({ exclusion_reason: _e, excluded: _x, gradeable: _g, language: _l, ...r }) => r);
const FUNNEL: Funnel = { candidates: 12, chains: 5, gradeable: 3, judged: 2, test: 2 };

function cardInput(over: Partial<CardInput> = {}): CardInput {
  return {
    repo: 'acme/widgets',
    repoId: null,
    testRows: ROWS.test,
    verifiedRows: ROWS.verified,
    foresightVersion: 'test',
    license: { kind: 'known', ids: ['bsd-3-clause'], files: ['LICENSE'], commit: 'a'.repeat(40) },
    funnel: FUNNEL,
    plots: [{ file: 'plots/funnel.svg', title: 'Funnel', alt: 'Funnel: 12 candidates [x]' }],
    ...over,
  };
}

/** The card's metadata as the Hub's own library reads it (huggingface_hub.DatasetCard: PyYAML underneath). */
async function hubMetadata(card: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-card-'));
  try {
    await writeFile(join(dir, 'README.md'), card);
    const code = 'import json, sys\nfrom huggingface_hub import DatasetCard\nprint(json.dumps(DatasetCard.load(sys.argv[1]).data.to_dict()))';
    return JSON.parse(await runPython(code, [join(dir, 'README.md')])) as Record<string, unknown>;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('datasetCard metadata (parsed by huggingface_hub)', () => {
  it('has both configs, the detected license, the Hub task and size buckets, tags and a pretty name', async () => {
    const meta = await hubMetadata(datasetCard(cardInput()));
    expect(meta).toEqual({
      pretty_name: 'Fix-chains of acme/widgets',
      license: 'bsd-3-clause',
      task_categories: ['text-generation'],
      tags: ['code', 'benchmark', 'software-engineering', 'swe-bench', 'fix-chains', 'python'],
      size_categories: ['n<1K'],
      configs: [
        { config_name: 'default', data_files: [{ split: 'test', path: 'data/test-*' }] },
        { config_name: 'verified', data_files: [{ split: 'verified', path: 'verified/verified-*' }] },
      ],
    });
  });

  it('a dual license is a list; an unknown or missing one is `other` with a license_name, never a guess', async () => {
    const dual = await hubMetadata(datasetCard(cardInput({ license: { kind: 'known', ids: ['apache-2.0', 'mit'], files: ['LICENSE-APACHE', 'LICENSE-MIT'], commit: 'b'.repeat(40) } })));
    expect(dual.license).toEqual(['apache-2.0', 'mit']);
    const odd = await hubMetadata(datasetCard(cardInput({ license: { kind: 'unrecognised', files: ['COPYING'], commit: 'c'.repeat(40) } })));
    expect([odd.license, odd.license_name]).toEqual(['other', 'unrecognised-license']);
    const none = datasetCard(cardInput({ license: { kind: 'none', commit: 'd'.repeat(40) } }));
    expect((await hubMetadata(none)).license_name).toBe('no-license-file');
    expect(none).toContain('no LICENSE or COPYING file at commit `dddddddddddd`');
  });

  it('size_categories follows the row count across the Hub buckets', () => {
    expect([0, 999, 1000, 9999, 10_000, 250_000].map(sizeCategory)).toEqual(['n<1K', 'n<1K', '1K<n<10K', '1K<n<10K', '10K<n<100K', '100K<n<1M']);
  });
});

describe('datasetCard body', () => {
  it('the usage snippet names the repository id once publishing knows it', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain(`load_dataset("${REPO_ID_PLACEHOLDER}", split="test")`);
    const published = setCardRepoId(card, 'acme/foresight-widgets');
    expect(published).not.toContain(REPO_ID_PLACEHOLDER);
    expect(published).toContain('load_dataset("acme/foresight-widgets", "verified", split="verified")');
    expect(published).toBe(datasetCard(cardInput({ repoId: 'acme/foresight-widgets' })));
  });

  it('refuses a repository id that would break out of the snippet', () => {
    expect(() => setCardRepoId(datasetCard(cardInput()), 'acme/x", trust_remote_code=True, x="')).toThrow(ForesightError);
    expect(() => datasetCard(cardInput({ repoId: 'no-owner' }))).toThrow(/not a Hugging Face repository id/);
  });

  it('composition tables: per repository, mining category, exclusions with their meaning', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain('| acme/widgets | 5 | 3 | 3 | 2 |');
    expect(card).toContain('| szz | found by blame alone: PR1 wrote the lines PR2 fixed, and PR2 names no PR | 4 | 1 |');
    expect(card).toContain('| cross_reference |');
    expect(card).toContain('| ineligible | 1 | PR2 is not a bug fix (a feature, a revert or not a bug) |');
    expect(card).toContain('| unattributed | 1 | PR1 did not introduce the defect PR2 fixed |');
    expect(card).toContain('| fix candidates (discover) | 12 |');
    // Plots are linked relatively, the alt text kept free of brackets that would end the link.
    expect(card).toContain('![Funnel: 12 candidates x](plots/funnel.svg)');
  });

  it('labels under the offline rules say "not judged" instead of a table of zeros', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain('Not judged: `severity`, `failure_mode`, `difficulty` and `pr1_difficulty` come from the LLM judges');
    expect(card).not.toContain('severity \\ failure_mode');
  });

  it('judged labels fill severity × failure_mode and difficulty, a missing one counted as not judged', () => {
    const judged = [
      { ...ROWS.test[0]!, severity: 'major', failure_mode: 'silent', difficulty: 'hard', pr1_difficulty: 'medium' },
      { ...ROWS.test[1]!, severity: 'minor', failure_mode: 'silent', difficulty: 'easy', pr1_difficulty: null },
    ];
    const card = datasetCard(cardInput({ testRows: judged }));
    const lines = card.split('\n');
    const at = lines.indexOf('| severity \\ failure_mode | silent | loud | none |');
    expect(lines.slice(at + 2, at + 5)).toEqual(['| major | 1 | 0 | 0 |', '| minor | 1 | 0 | 0 |', '| not_a_bug | 0 | 0 | 0 |']);
    expect(card).toContain('| hard | 1 | 0 |');
    expect(card).toContain('| not judged | 0 | 1 |');
  });
});

// ---- plots ---------------------------------------------------------------------------------------

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_' });

/** Every element of a parsed SVG, with its tag name (depth first). */
function elements(node: unknown, tag = 'svg'): Array<{ tag: string; attrs: Record<string, string> }> {
  if (Array.isArray(node)) return node.flatMap((n) => elements(n, tag));
  if (!node || typeof node !== 'object') return [];
  const attrs = Object.fromEntries(Object.entries(node).filter(([k]) => k.startsWith('@_')).map(([k, v]) => [k.slice(2), String(v)]));
  return [{ tag, attrs }, ...Object.entries(node).filter(([k]) => !k.startsWith('@_') && k !== '#text').flatMap(([k, v]) => elements(v, k))];
}

/** The bars of an SVG: vega labels each with its values ("days (gap_days): 0 – 20; chains: 2; split: test"). */
function bars(svg: string): string[] {
  expect(XMLValidator.validate(svg)).toBe(true);
  const doc = xml.parse(svg) as { svg: unknown };
  return elements(doc.svg).filter((e) => e.attrs['aria-roledescription'] === 'bar').map((e) => e.attrs['aria-label']!);
}

const PLOT_INPUT: PlotInput = { verifiedRows: ROWS.verified, testRows: ROWS.test, funnel: FUNNEL };

describe('renderPlots', () => {
  it('draws the funnel as one bar per step, with discover candidates first', async () => {
    const [funnel] = await renderPlots(PLOT_INPUT);
    expect(funnel!.file).toBe('plots/funnel.svg');
    expect(bars(funnel!.svg)).toEqual([
      'chains: 12; step: fix candidates (discover)',
      'chains: 5; step: chains attributed (szz)',
      'chains: 3; step: gradeable (validate)',
      'chains: 2; step: passed the judges (judge)',
      'chains: 2; step: test rows (emit)',
    ]);
    const [noCandidates] = await renderPlots({ ...PLOT_INPUT, funnel: { ...FUNNEL, candidates: null } });
    expect(bars(noCandidates!.svg)).toHaveLength(4);
  });

  it('bins the gap in whole days, each chain counted once, split by test membership', async () => {
    const gap = (await renderPlots(PLOT_INPUT))[1]!;
    // 0..250 days in 20-day bins: 0, 3, 3 in [0, 20); 21 in [20, 40); 250 in [240, 260).
    expect(bars(gap.svg).sort()).toEqual([
      'days (gap_days): 0 – 20; chains: 1; split: verified only',
      'days (gap_days): 0 – 20; chains: 2; split: test',
      'days (gap_days): 20 – 40; chains: 1; split: verified only',
      'days (gap_days): 240 – 260; chains: 1; split: verified only',
    ].sort());
  });

  it('one histogram per test set over the gradeable chains, each on its own integer bins', async () => {
    const sizes = (await renderPlots(PLOT_INPUT))[2]!;
    expect(bars(sizes.svg).sort()).toEqual([
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: verified only',
      'ANTICIPATION_FAIL_TO_PASS (tests): 2 – 3; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: verified only',
      'FAIL_TO_PASS (tests): 3 – 4; chains: 1; split: test',
      // 0..40 in 5-test bins (the 1-2-5 step above 41 / 20).
      'PASS_TO_PASS (tests): 0 – 5; chains: 1; split: verified only',
      'PASS_TO_PASS (tests): 40 – 45; chains: 1; split: test',
      'PASS_TO_PASS (tests): 5 – 10; chains: 1; split: test',
    ].sort());
  });

  it('is deterministic: the same rows give the same bytes, whatever was rendered in between', async () => {
    const first = await renderPlots(PLOT_INPUT);
    await renderPlots({ verifiedRows: ROWS.verified.slice(0, 2), testRows: [], funnel: { ...FUNNEL, candidates: null } });
    const again = await renderPlots(PLOT_INPUT);
    expect(again.map((p) => p.svg)).toEqual(first.map((p) => p.svg));
  });

  it('is self-contained: no link, image, style sheet or script, nothing fetched', async () => {
    for (const plot of await renderPlots(PLOT_INPUT)) {
      const els = elements((xml.parse(plot.svg) as { svg: unknown }).svg);
      expect(els.map((e) => e.tag).filter((t) => ['image', 'use', 'style', 'script', 'foreignObject', 'a'].includes(t))).toEqual([]);
      const external = els.flatMap((e) => Object.entries(e.attrs)).filter(([k, v]) => !k.startsWith('xmlns') && /(https?:|url\(|data:)/.test(v));
      expect(external).toEqual([]);
    }
  });

  it('renders an empty dataset without failing or warning', async () => {
    const warnings: string[] = [];
    const plots = await renderPlots({ verifiedRows: [], testRows: [], funnel: { candidates: 0, chains: 0, gradeable: 0, judged: 0, test: 0 } }, { warn: (m) => warnings.push(m) });
    expect(plots.map((p) => bars(p.svg).length)).toEqual([5, 0, 0]);
    expect(warnings).toEqual([]);
  });
});

describe('funnelOf', () => {
  const chain = (gradeable: boolean, stage: string | null) =>
    ({ gradeable, excluded: stage ? { reason: 'ineligible', detail: '', stage } : null }) as unknown as JudgedChain;
  it('counts a chain at every step it passed: excluded by the judges after validation found it gradeable', () => {
    const chains = [chain(true, null), chain(true, 'emit'), chain(true, 'judge'), chain(false, 'validate'), chain(false, 'extract')];
    expect(funnelOf(chains, 9)).toEqual({ candidates: 9, chains: 5, gradeable: 3, judged: 2, test: 1 });
  });
});

// ---- the emit stage on the demo, through the CLI -----------------------------------------------

async function foresight(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), ...args], { cwd: ROOT, env: { ...process.env, FORESIGHT_LLM_BASE_URL: '' }, maxBuffer: 64 * 1024 * 1024 });
}

const dockerUp = await isDockerReachable();
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the demo (run `make setup`)');

describe.skipIf(!dockerUp)('emit on the demo (foresight demo through the CLI)', () => {
  let data: string;
  let hf: string;
  let card: string;

  beforeAll(async () => {
    data = await minedDemoCopy();
    hf = join(data, 'demo__minilib', 'emit', 'hf');
    card = await readFile(join(hf, 'README.md'), 'utf8');
  }, 600_000);
  afterAll(() => rm(data, { recursive: true, force: true }));

  it('the card links plots/*.svg files that exist and are valid SVG with bars', async () => {
    const links = [...card.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toEqual(['plots/funnel.svg', 'plots/gap-days.svg', 'plots/test-set-sizes.svg']);
    for (const link of links) {
      expect(existsSync(join(hf, link))).toBe(true);
      expect(bars(await readFile(join(hf, link), 'utf8')).length).toBeGreaterThan(0);
    }
  });

  it("the funnel starts at discover's candidates and ends at the test rows", async () => {
    const discover = JSON.parse(await readFile(join(data, 'demo__minilib', 'discover', 'manifest.json'), 'utf8')) as { stats: { candidates: number } };
    expect(card).toContain(`| fix candidates (discover) | ${discover.stats.candidates} |`);
    expect(bars(await readFile(join(hf, 'plots', 'funnel.svg'), 'utf8'))).toEqual([
      `chains: ${discover.stats.candidates}; step: fix candidates (discover)`,
      'chains: 5; step: chains attributed (szz)',
      'chains: 3; step: gradeable (validate)',
      'chains: 2; step: passed the judges (judge)',
      'chains: 2; step: test rows (emit)',
    ]);
  });

  it('the real datasets library loads both configs of the emitted folder through the card', async () => {
    const code = 'import sys\nfrom datasets import load_dataset\nprint(len(load_dataset(sys.argv[1], split="test")), len(load_dataset(sys.argv[1], "verified", split="verified")))';
    expect((await runPython(code, [hf])).trim()).toBe('2 5');
  });

  it("the license is read at the mined head: the demo has none, then a committed LICENSE is the card's; an env image another run pruned is built again", async () => {
    expect((await hubMetadata(card)).license_name).toBe('no-license-file');
    // Another run's cache policy removed the env image validation ran in (only its tag: the eval images
    // built on it keep its layers): emit resolves PR1's era again and loses no row.
    const jsonlRows = async (f: string) => (await readFile(join(hf, 'jsonl', f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const testIds = (await jsonlRows('test.jsonl')).map((r) => r.instance_id);
    const verifiedRows = (await jsonlRows('verified.jsonl')).filter((r) => testIds.includes(r.instance_id));
    const envImages = [...new Set(verifiedRows.map((r) => r.env_image_pr1).filter((x): x is string => typeof x === 'string'))];
    expect(envImages.length).toBeGreaterThan(0);
    const docker = connectDocker();
    for (const image of envImages) await docker.getImage(image).remove({ force: true, noprune: true });
    for (const image of envImages) expect(await inspectImage(docker, image)).toBeNull();
    const clone = join(data, 'demo__minilib', 'clone');
    const git = (args: string[]) => run('git', ['-C', clone, '-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args]);
    await writeFile(join(clone, 'LICENSE'), MIT);
    await git(['add', 'LICENSE']);
    await git(['commit', '-q', '-m', 'Add MIT license']);
    await foresight(['run', '--repo', 'demo/minilib', '--clone', clone, '--offline', '--from', 'emit', '--data', data]);
    const meta = await hubMetadata(await readFile(join(hf, 'README.md'), 'utf8'));
    expect(meta.license).toBe('mit');
    expect(meta.license_name).toBeUndefined();
    for (const image of envImages) expect(await inspectImage(docker, image)).not.toBeNull();
    expect((await jsonlRows('test.jsonl')).map((r) => r.instance_id)).toEqual(testIds);
  });
});
