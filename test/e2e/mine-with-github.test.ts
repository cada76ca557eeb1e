import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { readJsonl, readManifest, stageDir } from '../../core/foundation/artifacts.ts';
import { loadConfig } from '../../core/foundation/config.ts';
import type { StageName } from '../../core/foundation/stage.ts';
import { CandidateSchema, type Candidate } from '../../core/foundation/model/candidate.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { ChainSchema, type Chain } from '../../core/foundation/model/chain.ts';
import { demoWorkspace, runOn } from '../helpers/demo.ts';
import { recordingLogger, startFakeGithub, type FakeGithub, type FakePr, type FakeRepo, type FakeUserText } from '../helpers/fake-github.ts';

// The registry's GitHub source waits real seconds between retries (1 s, 4 s, 9 s, 16 s) and spaces GraphQL
// calls by 1 s: only those waits are shrunk here, everything else (env, cache, errors) is the real client.
vi.mock(import('../../core/sources/github/client.ts'), async (importOriginal) => {
  const real = await importOriginal();
  return {
    ...real,
    createGithubClient: (o: Parameters<typeof real.createGithubClient>[0]) =>
      real.createGithubClient({ ...o, secondMs: o.secondMs ?? 1, graphqlSpacingMs: o.graphqlSpacingMs ?? 0, maxRetries: o.maxRetries ?? 2 }),
  };
});

const run = promisify(execFile);
type Ws = Awaited<ReturnType<typeof demoWorkspace>>;

/** Every setting the discovery sources read: each test sets what it needs, the rest is unset (and restored after). */
const SOURCE_ENV = ['GITHUB_TOKEN', 'FORESIGHT_GITHUB_API_URL', 'FORESIGHT_OFFLINE', 'FORESIGHT_TRAC_URL', 'FORESIGHT_ADVISORY_DB', 'FORESIGHT_OSV_URL', 'FORESIGHT_ADVISORY_PACKAGE'];

/** The merged PRs of the generated history (first parent): number, landed commit, commit time, title. */
async function demoPrs(clone: string): Promise<Array<{ number: number; sha: string; at: string; title: string }>> {
  const { stdout } = await run('git', ['log', '--first-parent', '--reverse', '--format=%H%x00%cI%x00%s%x00%b%x01', 'HEAD'], { cwd: clone });
  const out: Array<{ number: number; sha: string; at: string; title: string }> = [];
  for (const rec of stdout.split('\x01')) {
    const [sha, at, subject, body] = rec.trim().split('\x00');
    if (!sha || !at || subject === undefined) continue;
    const merge = /^Merge pull request #(\d+) from /.exec(subject);
    const squash = /^(.*) \(#(\d+)\)$/.exec(subject);
    if (merge) out.push({ number: Number(merge[1]), sha, at: new Date(at).toISOString(), title: (body ?? '').trim().split('\n')[0]! });
    else if (squash) out.push({ number: Number(squash[2]), sha, at: new Date(at).toISOString(), title: squash[1]! });
  }
  return out;
}

const hoursBefore = (iso: string, h: number): string => new Date(Date.parse(iso) - h * 3_600_000).toISOString().replace('.000Z', 'Z');
const say = (user: string, at: string, body: string): FakeUserText => ({ user, body, created_at: at });

/** demo/minilib as GitHub would know it: the history's PRs with their real merge shas, plus discussion. */
function githubRepo(prs: Awaited<ReturnType<typeof demoPrs>>): FakeRepo {
  const mergedAt = (n: number) => prs.find((p) => p.number === n)!.at.replace('.000Z', 'Z');
  const pr = (p: (typeof prs)[number]): FakePr => ({
    number: p.number, title: p.title, body: '', user: 'dev', created_at: hoursBefore(mergedAt(p.number), 20), merged_at: mergedAt(p.number),
    mergeSha: p.sha, labels: [], closes: [], refs: [], comments: [], reviewComments: [], reviews: [],
  });
  const one = hoursBefore(mergedAt(1), 2);
  const nine = hoursBefore(mergedAt(9), 3);
  const byNumber = new Map(prs.map((p) => [p.number, pr(p)]));
  Object.assign(byNumber.get(1)!, {
    user: 'bob',
    comments: [say('alice', hoursBefore(mergedAt(1), 4), 'What should happen to runs of spaces?')],
    reviewComments: [say('alice', hoursBefore(mergedAt(1), 3), 'Consider punctuation too.')],
    reviews: [{ ...say('alice', one, 'Looks good, ship it.'), state: 'APPROVED' }],
  } satisfies Partial<FakePr>);
  Object.assign(byNumber.get(9)!, {
    user: 'erin',
    body: 'Regression in #1: "a  b" became "a--b".\n\nCloses #20.',
    labels: ['bug'],
    closes: [20],
    comments: [say('erin', hoursBefore(mergedAt(9), 5), 'Added a regression test for double spaces.')],
    reviews: [{ ...say('alice', nine, 'Thanks, LGTM.'), state: 'APPROVED' }],
  } satisfies Partial<FakePr>);
  // #8 names no PR in its message; on GitHub its author linked it from #3's timeline.
  byNumber.get(3)!.refs.push({ event: 'CrossReferencedEvent', type: 'PullRequest', number: 8 });
  return {
    owner: 'demo',
    name: 'minilib',
    pushedAt: mergedAt(Math.max(...prs.map((p) => p.number))),
    issues: [
      {
        number: 20, title: 'slugify gives empty segments for double spaces', body: 'slugify("a  b") returns "a--b".', user: 'frank',
        created_at: hoursBefore(mergedAt(9), 12), labels: ['bug'], reactions: { '+1': 3 },
        comments: [say('grace', hoursBefore(mergedAt(9), 10), 'Same with tabs.')], refs: [],
      },
    ],
    prs: [...byNumber.values()],
  };
}

const read = {
  candidates: (ws: Pick<Ws, 'dataRoot'>) => readJsonl(join(stageDir(ws.dataRoot, 'demo/minilib', 'discover'), 'items.jsonl'), CandidateSchema),
  chains: (ws: Pick<Ws, 'dataRoot'>) => readJsonl(join(stageDir(ws.dataRoot, 'demo/minilib', 'szz'), 'items.jsonl'), ChainSchema),
  extracted: (ws: Pick<Ws, 'dataRoot'>) => readJsonl(join(stageDir(ws.dataRoot, 'demo/minilib', 'extract'), 'items.jsonl'), ExtractedChainSchema),
};
const STAGES: StageName[] = ['discover', 'szz', 'extract'];

describe('discover -> szz -> extract on the demo with GitHub (a fake API on 127.0.0.1)', () => {
  let ws: Ws;
  let fake: FakeGithub;
  let prs: Awaited<ReturnType<typeof demoPrs>>;
  const envBefore = { ...process.env };

  beforeAll(async () => {
    ws = await demoWorkspace();
    prs = await demoPrs(ws.clone);
    fake = await startFakeGithub({ repo: githubRepo(prs) });
  });
  afterAll(async () => {
    await fake?.close();
    if (ws) await rm(ws.root, { recursive: true, force: true });
    // Every variable a test set is back as it was.
    expect(process.env).toEqual(envBefore);
  });
  beforeEach(() => {
    for (const k of SOURCE_ENV) vi.stubEnv(k, undefined);
    fake.reset();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const online = () => {
    vi.stubEnv('GITHUB_TOKEN', fake.token);
    vi.stubEnv('FORESIGHT_GITHUB_API_URL', fake.url);
  };
  /** A data root of its own on the shared clone. */
  const workspace = (name: string) => ({ dataRoot: join(ws.root, name), repo: ws.repo });

  it('reads the demo history as GitHub would list it: #1..#13 with their merge commits', () => {
    expect(prs.map((p) => p.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(prs.find((p) => p.number === 3)!.title).toBe('Add parse_duration');
  });

  it('adds GitHub cross-references, report times and discussion to the git-only results', async () => {
    online();
    const at = workspace('data-github');
    for (const only of STAGES) {
      const [res] = await runOn(at, { only });
      expect(res!.outcome).toBe('ran');
      expect((await readManifest(stageDir(at.dataRoot, 'demo/minilib', only)))!.fingerprint).not.toMatch(/^incomplete:/);
    }
    // Every request went to the fake server with the token; one GraphQL listing serves discover and extract.
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.requests.every((r) => r.headers.authorization === '<present>')).toBe(true);
    expect(fake.requests.filter((r) => r.path === '/graphql')).toHaveLength(1);

    // discover: #8 -> #3 from #3's timeline (the git message names no PR), #9 reported by issue #20.
    const candidates = await read.candidates(at);
    const c8 = candidates.find((c) => c.pr2.id === '8')!;
    expect(c8.references).toEqual([{ kind: 'cross_reference', target: '3', sha: null, text: '#8 cross-references #3', source: 'github' }]);
    expect(c8.signals).toEqual(['fix_keywords', 'explicit_reference']);
    const c9 = candidates.find((c) => c.pr2.id === '9')!;
    expect(c9.reportedAt).toBe(fake.repo.issues[0]!.created_at);
    expect(c9.references.map((r) => [r.kind, r.target, r.source])).toEqual([['regression', '1', 'git']]);

    // szz: PR1 of #8 is still #3, now a reference that blame confirms.
    const chains = await read.chains(at);
    const ch8 = chains.find((c) => c.pr2.id === '8')!;
    expect(ch8.pr1.id).toBe('3');
    expect(ch8.szz.pickedBy).toBe('reference_confirmed_by_blame');
    expect(ch8.mining_category).toBe('cross_reference');
    expect(chains.find((c) => c.pr2.id === '9')!.pr1.id).toBe('1');

    // extract: PR1's discussion as introducer, PR2's as fixer, and the issue #9 closes.
    const extracted = await read.extracted(at);
    const chain = extracted.find((c) => c.instance_id === 'minilib__1-9')!;
    expect(chain.excluded).toBeNull();
    const pr1 = fake.repo.prs.find((p) => p.number === 1)!;
    const pr9 = fake.repo.prs.find((p) => p.number === 9)!;
    const introducer = chain.pr_comments!.filter((c) => c.role === 'introducer');
    const fixer = chain.pr_comments!.filter((c) => c.role === 'fixer');
    expect(introducer.map((c) => [c.kind, c.number, c.author, c.created_at, c.body])).toEqual([
      ['pr', 1, 'alice', pr1.comments[0]!.created_at, pr1.comments[0]!.body],
      ['review_comment', 1, 'alice', pr1.reviewComments[0]!.created_at, pr1.reviewComments[0]!.body],
      ['review', 1, 'alice', pr1.reviews[0]!.created_at, pr1.reviews[0]!.body],
    ]);
    expect(fixer.map((c) => [c.kind, c.number, c.author, c.created_at, c.body])).toEqual([
      ['pr', 9, 'erin', pr9.comments[0]!.created_at, pr9.comments[0]!.body],
      ['review', 9, 'alice', pr9.reviews[0]!.created_at, pr9.reviews[0]!.body],
    ]);
    for (const c of chain.pr_comments!) expect(c.url).toMatch(new RegExp(`^https://github\\.com/demo/minilib/(issues|pull)/${c.number}#`));
    expect(chain.linked_issues).toHaveLength(1);
    expect(chain.linked_issues![0]).toMatchObject({
      number: 20, role: 'fixer', ref_type: 'closes', title: 'slugify gives empty segments for double spaces',
      url: 'https://github.com/demo/minilib/issues/20', created_at: fake.repo.issues[0]!.created_at, labels: ['bug'],
      comments: [{ author: 'grace', body: 'Same with tabs.' }],
    });
    expect(chain.linked_issues![0]!.reactions['+1']).toBe(3);
    // The other chains that can still enter the dataset were asked about too (and have no discussion).
    expect(extracted.find((c) => c.instance_id === 'minilib__3-8')!.pr_comments).toEqual([]);
  });

  it('falls back to the git history when GitHub answers 502, and redoes discover once it is back', async () => {
    online();
    const at = workspace('data-fallback');
    // The git-only answer, for comparison (offline config, no env change).
    const gitOnly = workspace('data-git-only');
    await runOn(gitOnly, { only: 'discover', config: loadConfig({ FORESIGHT_OFFLINE: '1' }) });
    const expected = await readFile(join(stageDir(gitOnly.dataRoot, 'demo/minilib', 'discover'), 'items.jsonl'), 'utf8');
    expect(fake.requests).toHaveLength(0);

    fake.fault(...Array.from({ length: 50 }, () => ({ kind: 'bad-gateway' as const })));
    const log = recordingLogger();
    const [first] = await runOn(at, { only: 'discover', log });
    expect(first!.outcome).toBe('ran');
    // The listing's first try and its two retries (maxRetries above), all 502.
    expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(Array(3).fill('POST /graphql 502'));
    const dir = stageDir(at.dataRoot, 'demo/minilib', 'discover');
    expect(await readFile(join(dir, 'items.jsonl'), 'utf8')).toBe(expected);
    const warnings = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
    expect(warnings).toContainEqual(expect.stringMatching(/^source github failed, continuing without it: GitHub answered 502 to POST http:\/\/127\.0\.0\.1:\d+\/graphql after the allowed retries/));
    expect(warnings).toContainEqual(expect.stringMatching(/incomplete .* the next run will redo this stage/));
    const incomplete = await readManifest(dir);
    expect(incomplete!.fingerprint).toMatch(/^incomplete:/);
    const candidates = await read.candidates(at);
    expect(candidates.find((c) => c.pr2.id === '8')!.references).toEqual([]);

    // GitHub is back: the same run does discover again (nothing else changed) and now has the reference.
    fake.reset();
    const [second] = await runOn(at, { only: 'discover', log });
    expect(second!.outcome).toBe('ran');
    expect(fake.requests.filter((r) => r.path === '/graphql').map((r) => r.status)).toEqual([200]);
    const complete = await readManifest(dir);
    expect(complete!.fingerprint).toBe(incomplete!.fingerprint.slice('incomplete:'.length));
    const c8 = (await read.candidates(at)).find((c: Candidate) => c.pr2.id === '8')!;
    expect(c8.references.map((r) => [r.kind, r.target, r.source])).toEqual([['cross_reference', '3', 'github']]);

    // And once complete, a third run is up to date without asking GitHub anything.
    fake.reset();
    const [third] = await runOn(at, { only: 'discover', log });
    expect(third!.outcome).toBe('up-to-date');
    expect(fake.requests).toHaveLength(0);
  });

  it('sends GitHub nothing with FORESIGHT_OFFLINE=1, even with a token and API URL set', async () => {
    online();
    vi.stubEnv('FORESIGHT_OFFLINE', '1');
    const at = workspace('data-offline');
    // As the CLI does: the configuration comes from the environment.
    for (const only of STAGES) await runOn(at, { only, config: loadConfig(process.env) });
    expect(fake.requests).toHaveLength(0);
    const chains: Chain[] = await read.chains(at);
    // Without GitHub, #8 -> #3 is found by blame alone.
    const ch8 = chains.find((c) => c.pr2.id === '8')!;
    expect([ch8.pr1.id, ch8.szz.pickedBy, ch8.mining_category]).toEqual(['3', 'blame', 'szz']);
    expect((await read.candidates(at)).find((c) => c.pr2.id === '9')!.reportedAt).toBeNull();
    const extracted: ExtractedChain[] = await read.extracted(at);
    const chain = extracted.find((c) => c.instance_id === 'minilib__1-9')!;
    expect(chain.pr_comments).toBeNull();
    expect(chain.linked_issues).toBeNull();
  });
});
