import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PullRequest } from '../../../../core/foundation/model/change.ts';
import type { Logger } from '../../../../core/foundation/log.ts';
import { AdvisorySchema } from '../../../../core/foundation/model/candidate.ts';
import { createAdvisorySource, fixPointers, mergeAdvisories, OsvRecordSchema } from '../../../../core/sources/advisory/index.ts';
import type { SourceInput } from '../../../../core/sources/types.ts';
import { startFakeOsv, type FakeOsv } from '../../../helpers/fake-osv.ts';

const sha = (d: string) => d.repeat(40).slice(0, 40);

function change(digit: string, title: string, mergedAt: string, number: number | null = null): PullRequest {
  const s = sha(digit);
  return {
    id: number !== null ? String(number) : s.slice(0, 10), number, title, body: '', author: 'Committer', mergedAt,
    mergeSha: s, baseSha: 'f'.repeat(40), style: number !== null ? 'squash' : 'commit', commits: [s],
  };
}

const CHANGES: PullRequest[] = [
  change('4', 'Fixed #34000 -- Added Truncator.chars() html support.', '2022-11-02T10:00:00+00:00'),
  change('1', 'Fixed CVE-2023-36053 -- Prevented potential ReDoS in EmailValidator and URLValidator.', '2023-07-03T12:00:00+00:00'),
  change('2', 'Fixed CVE-2023-41164 -- Fixed potential DoS in django.utils.encoding.uri_to_iri().', '2023-09-04T08:00:00+00:00'),
  change('3', 'Fixed CVE-2023-43665 -- Mitigated potential DoS in django.utils.text.Truncator.', '2023-10-04T08:00:00+00:00', 17000),
  change('5', 'Fixed CVE-2024-24680 -- Mitigated potential DoS in intcomma template filter.', '2024-02-06T08:00:00+00:00'),
  change('6', 'Fixed CVE-2024-27351 -- Prevented potential ReDoS in Truncator.words().', '2024-03-04T08:00:00+00:00'),
];
const byDigit = (d: string) => CHANGES.find((c) => c.mergeSha === sha(d))!;

function ghsa(id: string, opts: { published: string; nvd?: string; cve: string; summary: string; refs: string[]; pkg?: string; withdrawn?: string }) {
  return {
    schema_version: '1.4.0',
    id,
    modified: '2024-05-01T00:00:00Z',
    published: opts.published,
    ...(opts.withdrawn ? { withdrawn: opts.withdrawn } : {}),
    aliases: [opts.cve],
    summary: opts.summary,
    details: `${opts.summary}. Details follow.`,
    severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H' }],
    affected: [
      {
        package: { ecosystem: 'PyPI', name: opts.pkg ?? 'Django' },
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '4.0' }, { fixed: '4.1.10' }] }],
      },
    ],
    references: [
      { type: 'ADVISORY', url: `https://nvd.nist.gov/vuln/detail/${opts.cve}` },
      ...opts.refs.map((url) => ({ type: 'WEB', url })),
      { type: 'PACKAGE', url: 'https://github.com/django/django' },
    ],
    database_specific: { cwe_ids: ['CWE-1333'], severity: 'HIGH', github_reviewed: true, github_reviewed_at: '2023-07-06T16:05:12Z', nvd_published_at: opts.nvd ?? null },
  };
}

function pysec(id: string, opts: { aliases: string[]; published: string; fixed: string; introduced?: string; repo?: string; summary?: string }) {
  return {
    id,
    published: opts.published,
    modified: '2024-01-01T00:00:00Z',
    aliases: opts.aliases,
    details: opts.summary ?? 'An issue was discovered in Django.',
    affected: [
      {
        package: { name: 'django', ecosystem: 'PyPI', purl: 'pkg:pypi/django' },
        ranges: [
          { type: 'GIT', repo: opts.repo ?? 'https://github.com/django/django', events: [{ introduced: opts.introduced ?? '0' }, { fixed: opts.fixed }] },
          { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '4.2.3' }] },
        ],
        versions: ['4.2', '4.2.1', '4.2.2'],
      },
    ],
    references: [{ type: 'ARTICLE', url: 'https://www.djangoproject.com/weblog/' }],
  };
}

function capture(): Logger & { warnings: string[]; infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  const l: Logger & { warnings: string[]; infos: string[] } = {
    warnings,
    infos,
    debug: () => {},
    info: (m) => void infos.push(m),
    warn: (m) => void warnings.push(m),
    error: (m) => void warnings.push(m),
    progress: () => {},
    note: () => {},
    setup: () => () => {},
    child: () => l,
    toFile: () => {},
  };
  return l;
}

describe('advisory source', () => {
  let root: string;
  let db: string;
  let clone: string;
  let backportSha: string;
  let titleOnlySha: string;
  let osv: FakeOsv;

  const write = async (rel: string, content: unknown) => {
    const p = join(db, rel);
    await mkdir(join(p, '..'), { recursive: true });
    await writeFile(p, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-advisory-'));
    // A clone holding two release-branch fixes that are not on the mined history.
    clone = join(root, 'clone');
    const g = (...args: string[]) => execFileSync('git', args, { cwd: clone, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@x' } }).trim();
    await mkdir(clone);
    g('init', '-q');
    g('commit', '-q', '--allow-empty', '-m', `[5.0.x] Fixed CVE-2024-24680 -- Mitigated potential DoS in intcomma template filter.\n\nBackport of ${sha('5')} from main.`);
    backportSha = g('rev-parse', 'HEAD');
    g('commit', '-q', '--allow-empty', '-m', '[4.2.x] Fixed CVE-2024-27351 -- Prevented potential ReDoS in Truncator.words().');
    titleOnlySha = g('rev-parse', 'HEAD');

    db = join(root, 'advisory-database');
    const gh = 'https://github.com/django/django';
    await write('advisories/github-reviewed/2023/07/GHSA-jh3w-4vvf-mjgr/GHSA-jh3w-4vvf-mjgr.json',
      ghsa('GHSA-jh3w-4vvf-mjgr', { published: '2023-07-03T15:30:20Z', nvd: '2023-07-03T13:15:09Z', cve: 'CVE-2023-36053', summary: 'Django has regular expression denial of service vulnerability in EmailValidator/URLValidator',
        refs: [`${gh}/commit/${sha('1')}`, `${gh}/commit/${sha('9')}`, 'https://docs.djangoproject.com/en/4.2/releases/security'] }));
    // Another repository's commit with the same sha as a change: not ours.
    await write('advisories/github-reviewed/2023/09/GHSA-q2jf-h9jm-m7p4/GHSA-q2jf-h9jm-m7p4.json',
      ghsa('GHSA-q2jf-h9jm-m7p4', { published: '2023-09-04T18:30:28Z', cve: 'CVE-2023-41164', summary: 'Django Denial of service vulnerability in django.utils.encoding.uri_to_iri', refs: [`https://github.com/other/project/commit/${sha('2')}`] }));
    await write('advisories/github-reviewed/2023/10/GHSA-h8gc-pgj2-vjm3/GHSA-h8gc-pgj2-vjm3.json',
      ghsa('GHSA-h8gc-pgj2-vjm3', { published: '2023-10-04T15:30:23Z', cve: 'CVE-2023-43665', summary: 'Denial-of-service in django.utils.text.Truncator', refs: [`${gh}/pull/17000`] }));
    await write('advisories/github-reviewed/2024/02/GHSA-xxj9-f6rv-m3x4/GHSA-xxj9-f6rv-m3x4.json',
      ghsa('GHSA-xxj9-f6rv-m3x4', { published: '2024-02-06T23:30:31Z', cve: 'CVE-2024-24680', summary: 'Django denial-of-service in intcomma template filter', refs: [`${gh}/commit/${backportSha}`] }));
    await write('advisories/github-reviewed/2024/03/GHSA-vm8q-m57g-pff3/GHSA-vm8q-m57g-pff3.json',
      ghsa('GHSA-vm8q-m57g-pff3', { published: '2024-03-04T15:30:37Z', cve: 'CVE-2024-27351', summary: 'Regular expression denial-of-service in Django', refs: [`${gh}/commit/${titleOnlySha.slice(0, 12)}`] }));
    // Another package's advisory that links one of our commits.
    await write('advisories/github-reviewed/2022/11/GHSA-aaaa-bbbb-cccc/GHSA-aaaa-bbbb-cccc.json',
      ghsa('GHSA-aaaa-bbbb-cccc', { published: '2022-12-01T00:00:00Z', cve: 'CVE-2022-99999', summary: 'django-truncate-plus copies Truncator', pkg: 'django-truncate-plus', refs: [`${gh}/commit/${sha('4')}`] }));
    // Withdrawn: ignored.
    await write('advisories/github-reviewed/2023/08/GHSA-wwww-wwww-wwww/GHSA-wwww-wwww-wwww.json',
      ghsa('GHSA-wwww-wwww-wwww', { published: '2023-08-01T00:00:00Z', withdrawn: '2023-08-02T00:00:00Z', cve: 'CVE-2023-00000', summary: 'withdrawn', refs: [`${gh}/commit/${sha('6')}`] }));
    // Broken files: a warning each, no crash.
    await write('advisories/github-reviewed/2023/11/GHSA-brok-enjs-on00/GHSA-brok-enjs-on00.json', `{"id": "GHSA-brok-enjs-on00", "references": [{"url": "${gh}/commit/${sha('1')}"`);
    await write('advisories/github-reviewed/2023/12/GHSA-nots-chem-a000/GHSA-nots-chem-a000.json', { note: `no id here; ${gh}` });
    // Unrelated and unreviewed advisories.
    await write('advisories/github-reviewed/2023/07/GHSA-zzzz-zzzz-zzzz/GHSA-zzzz-zzzz-zzzz.json', ghsa('GHSA-zzzz-zzzz-zzzz', { published: '2023-07-01T00:00:00Z', cve: 'CVE-2023-11111', summary: 'requests leaks', pkg: 'requests', refs: ['https://github.com/psf/requests/commit/' + sha('7')] }));
    await write('advisories/unreviewed/2023/07/GHSA-unre-view-ed00/GHSA-unre-view-ed00.json', `not json at all, mentions ${gh}`);

    osv = await startFakeOsv(
      [
        pysec('PYSEC-2023-100', { aliases: ['CVE-2023-36053', 'GHSA-jh3w-4vvf-mjgr'], published: '2023-07-03T15:15:00Z', fixed: sha('1'), introduced: sha('4') }),
        pysec('PYSEC-2023-225', { aliases: ['CVE-2023-41164'], published: '2023-11-03T05:15:00Z', fixed: sha('2') }),
        pysec('PYSEC-2023-999', { aliases: [], published: '2023-12-01T00:00:00Z', fixed: sha('3'), repo: 'https://github.com/someone/django-fork' }),
        { ...pysec('PYSEC-2023-555', { aliases: [], published: '2023-12-01T00:00:00Z', fixed: sha('6') }), affected: [{ package: { name: 'requests', ecosystem: 'PyPI' }, ranges: [] }] },
      ],
      { pageSize: 2 },
    );
  });
  afterAll(async () => {
    await osv.close();
    await rm(root, { recursive: true, force: true });
  });

  const input = (log: Logger, name: string): SourceInput => ({
    settings: {}, repo: 'django/django', clone, branch: 'main', changes: CHANGES, cacheDir: join(root, 'cache', name), log, tracker: 'trac',
  });
  const http = { baseDelayMs: 5, timeoutMs: 5_000 };

  it('says why it is unavailable, and never guesses the package', () => {
    const s = createAdvisorySource();
    const at = { repo: 'django/django', tracker: 'trac' as const };
    expect(s.available({}, at)).toMatchObject({ ok: false, reason: expect.stringMatching(/neither FORESIGHT_ADVISORY_DB .* nor FORESIGHT_OSV_URL/) });
    expect(s.available({ FORESIGHT_OSV_URL: 'https://api.osv.dev' }, at)).toMatchObject({ ok: false, reason: expect.stringMatching(/FORESIGHT_ADVISORY_PACKAGE is not.*PyPI:django.*does not guess/) });
    expect(s.available({ FORESIGHT_OSV_URL: 'https://api.osv.dev', FORESIGHT_ADVISORY_PACKAGE: 'django' }, at)).toMatchObject({ ok: false, reason: expect.stringMatching(/not Ecosystem:name/) });
    expect(s.available({ FORESIGHT_ADVISORY_DB: join(root, 'nowhere') }, at)).toMatchObject({ ok: false, reason: expect.stringMatching(/no advisories\/github-reviewed/) });
    expect(s.available({ FORESIGHT_OSV_URL: 'https://api.osv.dev', FORESIGHT_ADVISORY_PACKAGE: 'PyPI:django' }, at)).toEqual({ ok: true });
    expect(s.available({ FORESIGHT_ADVISORY_DB: db }, at)).toEqual({ ok: true });
  });

  it('maps a local database to the changes that fixed them, with report times, skipping bad files', async () => {
    const log = capture();
    const res = await createAdvisorySource({ settings: { FORESIGHT_ADVISORY_DB: db } }).discover(input(log, 'db'));
    expect(res.references.size).toBe(0);
    const ids = Object.fromEntries([...res.advisories!].map(([k, v]) => [k, v.map((a) => a.id)]));
    expect(ids).toEqual({
      [byDigit('1').id]: ['GHSA-jh3w-4vvf-mjgr'], // its main-branch commit; the other listed commit is on no branch we know
      '17000': ['GHSA-h8gc-pgj2-vjm3'], // by PR number
      [byDigit('5').id]: ['GHSA-xxj9-f6rv-m3x4'], // a backport, traced through "Backport of <sha> from main"
      [byDigit('6').id]: ['GHSA-vm8q-m57g-pff3'], // a backport, traced by its subject
      [byDigit('4').id]: ['GHSA-aaaa-bbbb-cccc'], // no package configured: any advisory linking our commit
    });
    expect(res.advisories!.has(byDigit('2').id)).toBe(false); // the advisory names another repository's commit
    const a = res.advisories!.get(byDigit('1').id)![0]!;
    expect(AdvisorySchema.parse(a)).toEqual({
      id: 'GHSA-jh3w-4vvf-mjgr', aliases: ['CVE-2023-36053'], summary: 'Django has regular expression denial of service vulnerability in EmailValidator/URLValidator',
      url: 'https://github.com/advisories/GHSA-jh3w-4vvf-mjgr', published: '2023-07-03T15:30:20Z',
    });
    expect(res.reportedAt!.get(byDigit('1').id)).toBe('2023-07-03T13:15:09Z'); // NVD published it first
    expect(res.reportedAt!.get('17000')).toBe('2023-10-04T15:30:23Z');
    const warnings = [...log.warnings].sort();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/GHSA-brok-enjs-on00\.json is not valid JSON.*skipped/);
    expect(warnings[1]).toMatch(/GHSA-nots-chem-a000\.json is not an OSV record.*skipped/);
    expect(log.infos.join('\n')).toMatch(/10 reviewed advisories scanned/); // unreviewed/ is not read
  });

  it("with a package configured, ignores another package's advisory that links one of our commits", async () => {
    const res = await createAdvisorySource({ settings: { FORESIGHT_ADVISORY_DB: db, FORESIGHT_ADVISORY_PACKAGE: 'PyPI:Django' } }).discover(input(capture(), 'db-pkg'));
    expect(res.advisories!.has(byDigit('4').id)).toBe(false);
    expect(res.advisories!.has(byDigit('1').id)).toBe(true);
  });

  it('reads every page of the OSV API for the package and maps GIT fixed events of this repository only', async () => {
    osv.reset();
    const res = await createAdvisorySource({ settings: { FORESIGHT_OSV_URL: osv.baseUrl, FORESIGHT_ADVISORY_PACKAGE: 'PyPI:django' }, http }).discover(input(capture(), 'osv'));
    const posts = osv.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.body)).toEqual([
      { package: { name: 'django', ecosystem: 'PyPI' } },
      { package: { name: 'django', ecosystem: 'PyPI' }, page_token: Buffer.from('2').toString('base64') },
    ]);
    expect(Object.fromEntries([...res.advisories!].map(([k, v]) => [k, v.map((a) => a.id)]))).toEqual({
      [byDigit('1').id]: ['PYSEC-2023-100'],
      [byDigit('2').id]: ['PYSEC-2023-225'],
    });
    expect(res.reportedAt!.get(byDigit('2').id)).toBe('2023-11-03T05:15:00Z');
    expect(res.advisories!.get(byDigit('2').id)![0]).toMatchObject({ url: 'https://osv.dev/vulnerability/PYSEC-2023-225', summary: 'An issue was discovered in Django.' });
  });

  it('merges one vulnerability seen under several ids when both the database and OSV are used', async () => {
    const res = await createAdvisorySource({ settings: { FORESIGHT_ADVISORY_DB: db, FORESIGHT_OSV_URL: osv.baseUrl, FORESIGHT_ADVISORY_PACKAGE: 'PyPI:django' }, http }).discover(input(capture(), 'both'));
    expect(res.advisories!.get(byDigit('1').id)).toEqual([
      expect.objectContaining({ id: 'GHSA-jh3w-4vvf-mjgr', aliases: ['CVE-2023-36053', 'PYSEC-2023-100'] }),
    ]);
    expect(res.reportedAt!.get(byDigit('1').id)).toBe('2023-07-03T13:15:09Z');
  });

  it('completes compact listings with GET /v1/vulns/{id}, revalidated on a rerun, and retries a 503', async () => {
    osv.reset();
    osv.compact = true;
    osv.failOnce('/v1/query', 503, { 'retry-after': '0' });
    try {
      const s = createAdvisorySource({ settings: { FORESIGHT_OSV_URL: osv.baseUrl, FORESIGHT_ADVISORY_PACKAGE: 'PyPI:django' }, http });
      const first = await s.discover(input(capture(), 'compact'));
      expect(osv.requests[0]!.status).toBe(503);
      expect(osv.requests.filter((r) => r.path.startsWith('/v1/vulns/')).map((r) => r.status)).toEqual([200, 200, 200]);
      osv.reset();
      const again = await s.discover(input(capture(), 'compact'));
      expect(osv.requests.filter((r) => r.path.startsWith('/v1/vulns/')).map((r) => r.status)).toEqual([304, 304, 304]);
      expect(again).toEqual(first);
      expect([...first.advisories!.keys()].sort()).toEqual([byDigit('1').id, byDigit('2').id].sort());
    } finally {
      osv.compact = false;
    }
  });

  it('reads fix pointers from references and GIT ranges', () => {
    const rec = OsvRecordSchema.parse({
      id: 'GHSA-x',
      references: [
        { type: 'FIX', url: 'https://github.com/Django/Django/commit/ABCDEF1234567#diff-1' },
        { type: 'WEB', url: 'https://github.com/django/django/pull/42/commits/0123456789abcdef' },
        { type: 'ADVISORY', url: 'https://github.com/django/django/commit/fffffff' },
        { type: 'WEB', url: 'https://github.com/django/django-other/commit/eeeeeee' },
      ],
      affected: [{ ranges: [{ type: 'GIT', repo: 'https://github.com/django/django.git', events: [{ introduced: '0' }, { introduced: '1111111' }, { fixed: '2222222' }] }] }],
    });
    const p = fixPointers(rec, 'django/django', null);
    expect(p.fixShas.sort()).toEqual(['0123456789abcdef', '2222222', 'abcdef1234567']);
    expect(p.prs).toEqual([42]);
    expect(p.introduced).toEqual(['1111111']);
    expect(mergeAdvisories([
      { id: 'PYSEC-1', aliases: ['CVE-1'], summary: '', url: 'u1', published: null },
      { id: 'GHSA-1', aliases: ['CVE-1'], summary: 's', url: 'u2', published: null },
      { id: 'GHSA-2', aliases: [], summary: 't', url: 'u3', published: null },
    ])).toEqual([
      { id: 'GHSA-1', aliases: ['CVE-1', 'PYSEC-1'], summary: 's', url: 'u2', published: null },
      { id: 'GHSA-2', aliases: [], summary: 't', url: 'u3', published: null },
    ]);
  });
});
