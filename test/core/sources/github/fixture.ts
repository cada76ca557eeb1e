import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitChangeId, type PullRequest } from '../../../../core/foundation/model/change.ts';
import { createGithubSource } from '../../../../core/sources/github/index.ts';
import type { Source, SourceInput } from '../../../../core/sources/types.ts';
import { recordingLogger, startFakeGithub, type FakeGithub, type FakeIssue, type FakePr, type FakeRepo, type FakeUserText } from '../../../helpers/fake-github.ts';

/** A stable 40-hex sha for a label. */
export const sha = (label: string): string => createHash('sha1').update(label).digest('hex');

const at = (day: number, hour = 10) => `2024-01-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`;
const say = (user: string, day: number, hour: number, body: string): FakeUserText => ({ user, body, created_at: at(day, hour) });

function issue(i: Partial<FakeIssue> & Pick<FakeIssue, 'number' | 'title' | 'created_at'>): FakeIssue {
  return { body: '', user: 'reporter', labels: [], reactions: {}, comments: [], refs: [], ...i };
}
function pr(p: Partial<FakePr> & Pick<FakePr, 'number' | 'title' | 'created_at' | 'merged_at' | 'mergeSha'>): FakePr {
  return { body: '', user: 'dev', labels: [], closes: [], refs: [], comments: [], reviewComments: [], reviews: [], ...p };
}

/**
 * acme/widgets. Merged PRs (by creation): #2, #4, #5, #8, #10, #11, #14, #16; #15 is open.
 *  - #8 fixes #2's slugify: #2's timeline is cross-referenced by #8; #8 closes issues #6 and #7.
 *  - #11 fixes #4's parse_duration: issue #3 (closed by #4) was connected to #11 later.
 *  - #16 closes issue #7 again, which #8 closed.
 *  - #10's timeline: a cross-reference from the earlier #8 (no reference) and one from another repository.
 *  - #5 appears in the history as a plain commit; #14 landed elsewhere (no change).
 */
export function fixtureRepo(): FakeRepo {
  return {
    owner: 'acme',
    name: 'widgets',
    pushedAt: '2024-01-23T12:00:00Z',
    issues: [
      issue({ number: 1, title: 'Need a slugify helper', created_at: at(1), labels: ['enhancement'] }),
      issue({ number: 3, title: 'Support durations like 1h30m', created_at: at(3), refs: [{ event: 'ConnectedEvent', type: 'PullRequest', number: 11, reversed: true }] }),
      issue({
        number: 6, title: 'slugify produces empty segments', created_at: at(10), labels: ['bug'],
        body: "Since #2, slugify('a  b') gives 'a--b'.", reactions: { '+1': 5, heart: 1, eyes: 2 },
        comments: [say('alice', 10, 11, 'Same here on 1.0.'), say('bob', 10, 12, 'Breaks our URLs.'), say('carol', 10, 13, 'Workaround: collapse spaces first.')],
        refs: [{ event: 'CrossReferencedEvent', type: 'PullRequest', number: 8 }],
      }),
      issue({ number: 7, title: 'slugify breaks on unicode', created_at: at(11), labels: ['bug'], reactions: { laugh: 1 }, comments: [say('dave', 11, 12, 'Ünïcode input gives empty output.')] }),
      issue({ number: 9, title: 'parse_duration ignores uppercase units', created_at: at(14), labels: ['bug', 'good first issue'], reactions: { '+1': 2 } }),
      issue({ number: 12, title: 'Question: slug length limit?', created_at: at(18) }),
      issue({ number: 13, title: 'Docs mention slug separators', created_at: at(19), body: 'See #8.' }),
    ],
    prs: [
      pr({
        number: 2, title: 'Add slugify helper', created_at: at(2), merged_at: at(3), mergeSha: sha('s2'), closes: [1],
        refs: [{ event: 'CrossReferencedEvent', type: 'PullRequest', number: 8 }, { event: 'CrossReferencedEvent', type: 'Issue', number: 6 }],
      }),
      pr({ number: 4, title: 'Add parse_duration', created_at: at(4), merged_at: at(5), mergeSha: sha('m4'), closes: [3] }),
      pr({ number: 5, title: 'Docs: usage examples', created_at: at(6), merged_at: at(6, 12), mergeSha: sha('d5') }),
      pr({
        number: 8, title: 'Fix slugify producing empty segments', created_at: at(12), merged_at: at(13), mergeSha: sha('s8'), closes: [6, 7],
        body: 'Fixes #6 and #7.\n\nSee #12 for a related question; the helper came from #2.', labels: ['bug'],
        refs: [{ event: 'CrossReferencedEvent', type: 'Issue', number: 13 }],
        comments: [say('dev', 12, 11, 'Ready for review.'), say('maint', 12, 15, 'Can you add a unicode test?'), say('dev', 13, 9, 'Added.')],
        reviewComments: [say('maint', 12, 14, 'This regex misses tabs.'), say('dev', 12, 16, 'Fixed.'), say('maint', 12, 17, 'Nit: rename.')],
        reviews: [
          { ...say('maint', 12, 14, 'A few comments.'), state: 'CHANGES_REQUESTED' },
          { ...say('maint', 12, 17, ''), state: 'COMMENTED' },
          { ...say('maint', 13, 10, 'LGTM'), state: 'APPROVED' },
        ],
      }),
      pr({
        number: 10, title: 'Bump version to 1.1', created_at: at(15), merged_at: at(15, 12), mergeSha: sha('x10'),
        refs: [{ event: 'CrossReferencedEvent', type: 'PullRequest', number: 8 }, { event: 'CrossReferencedEvent', type: 'PullRequest', number: 99, crossRepo: true }],
      }),
      pr({ number: 11, title: 'Fix parse_duration ignoring uppercase units', created_at: at(16), merged_at: at(17), mergeSha: sha('m11'), closes: [9], body: 'Closes #9.' }),
      pr({ number: 14, title: 'Backport slugify fix', created_at: at(20), merged_at: at(21), mergeSha: sha('elsewhere') }),
      pr({ number: 15, title: 'Open experiment', created_at: at(21), merged_at: null, mergeSha: null }),
      pr({ number: 16, title: 'Fix slugify for unicode again', created_at: at(22), merged_at: at(23), mergeSha: sha('s16'), closes: [7] }),
    ],
  };
}

const change = (c: Partial<PullRequest> & Pick<PullRequest, 'id' | 'number' | 'title' | 'mergeSha'>): PullRequest => ({
  body: '', author: 'dev', mergedAt: '2024-01-01T00:00:00Z', baseSha: sha(`base-${c.id}`), style: 'squash', commits: [c.mergeSha], ...c,
});

/** The history's changes, oldest first, as the git source lists them. */
export function fixtureChanges(): PullRequest[] {
  return [
    change({ id: '2', number: 2, title: 'Add slugify helper', mergeSha: sha('s2') }),
    change({ id: '4', number: 4, title: 'Add parse_duration', mergeSha: sha('m4'), style: 'merge', commits: [sha('c4a'), sha('c4b')] }),
    change({ id: commitChangeId(sha('d5')), number: null, title: 'Docs: usage examples', mergeSha: sha('d5'), style: 'commit' }),
    change({ id: '8', number: 8, title: 'Fix slugify producing empty segments', mergeSha: sha('s8') }),
    // GitHub records one of the branch's commits as the one that landed #10: matched through `commits`.
    change({ id: '10', number: 10, title: 'Bump version to 1.1', mergeSha: sha('M10'), style: 'merge', commits: [sha('x10')] }),
    change({ id: '11', number: 11, title: 'Fix parse_duration ignoring uppercase units', mergeSha: sha('m11'), style: 'merge', commits: [sha('c11')] }),
    change({ id: commitChangeId(sha('z')), number: null, title: 'Direct commit', mergeSha: sha('z'), style: 'commit' }),
    change({ id: '16', number: 16, title: 'Fix slugify for unicode again', mergeSha: sha('s16') }),
  ];
}

export interface Harness {
  fake: FakeGithub;
  cacheDir: string;
  log: ReturnType<typeof recordingLogger>;
  /** A fresh source (no in-memory state) against the fake server; `token` overrides the accepted one. */
  source(opts?: { token?: string; maxRetries?: number }): Source;
  input(over?: Partial<SourceInput>): SourceInput;
  /** Every file under the cache folder, with its text. */
  cacheFiles(): Promise<{ path: string; text: string }[]>;
  close(): Promise<void>;
}

/** The fake server with the fixture, a temp cache folder, and sources tuned for speed (3 PRs and 2 REST items per page). */
export async function harness(): Promise<Harness> {
  const fake = await startFakeGithub({ repo: fixtureRepo() });
  const cacheDir = await mkdtemp(join(tmpdir(), 'foresight-gh-'));
  const log = recordingLogger();
  return {
    fake, cacheDir, log,
    source: (o = {}) =>
      createGithubSource({
        settings: { GITHUB_TOKEN: o.token ?? fake.token, FORESIGHT_GITHUB_API_URL: fake.url },
        pageSize: 3,
        perPage: 2,
        client: { secondMs: 1, graphqlSpacingMs: 0, maxRetries: o.maxRetries ?? 3 },
      }),
    input: (over = {}) => ({
      settings: {}, repo: 'acme/widgets', clone: '/nonexistent', branch: 'HEAD', changes: fixtureChanges(), cacheDir, log, tracker: 'github', ...over,
    }),
    async cacheFiles() {
      const out: { path: string; text: string }[] = [];
      for (const e of await readdir(cacheDir, { recursive: true, withFileTypes: true })) {
        if (!e.isFile()) continue;
        const path = join(e.parentPath, e.name);
        out.push({ path, text: await readFile(path, 'utf8') });
      }
      return out;
    },
    async close() {
      await fake.close();
      await rm(cacheDir, { recursive: true, force: true });
    },
  };
}
