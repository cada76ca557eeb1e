import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../core/foundation/log.ts';
import type { PullRequest } from '../../../core/foundation/model/change.ts';
import { pr1OwnMaterial, pr2Discussion, rawStatement, type ChainDiscussion } from '../../../core/foundation/model/discussion.ts';
import { ExtractedChainSchema } from '../../../core/foundation/model/extracted.ts';
import { contextCollector } from '../../../core/extract/context.ts';
import { startFakeGithub, type FakeGithub, type FakeIssue, type FakePr } from '../../helpers/fake-github.ts';
import { startFakeTrac, type FakeTrac, type FakeTracTicket } from '../../helpers/fake-trac.ts';

type Issue = NonNullable<ChainDiscussion['linked_issues']>[number];
type Comment = NonNullable<ChainDiscussion['pr_comments']>[number];

const MERGED = '2024-03-10T12:00:00Z';
const BEFORE = '2024-03-01T09:00:00Z';
const AFTER = '2024-03-20T09:00:00Z';

function change(over: Partial<PullRequest> & Pick<PullRequest, 'id' | 'title'>): PullRequest {
  return { number: null, body: '', author: 'dev', mergedAt: MERGED, mergeSha: 'a'.repeat(40), baseSha: 'b'.repeat(40), style: 'squash', commits: ['a'.repeat(40)], ...over };
}
function issue(over: Partial<Issue> & Pick<Issue, 'number' | 'title' | 'role' | 'ref_type' | 'created_at'>): Issue {
  return { url: `https://github.com/acme/widgets/issues/${over.number}`, body: '', labels: [], reactions: {}, comments: [], ...over };
}
function comment(over: Partial<Comment> & Pick<Comment, 'role' | 'url' | 'created_at' | 'body'>): Comment {
  return { kind: 'trac_ticket', number: 100, author: 'someone', ...over };
}

const PR1 = change({ id: '1', number: 1, title: 'Add slugify helper', body: 'Closes #2.', mergedAt: '2024-03-10T13:00:00+01:00' });

describe("PR1's own material (the statement's sources)", () => {
  const chain: ChainDiscussion = {
    pr1: PR1,
    linked_issues: [
      issue({
        number: 2, title: 'Need a slug helper', body: 'Titles should become URL slugs.', role: 'introducer', ref_type: 'closes', created_at: BEFORE,
        comments: [
          { author: 'alice', created_at: '2024-03-02T10:00:00Z', body: 'Hyphens please.', url: 'https://github.com/acme/widgets/issues/2#issuecomment-1' },
          { author: 'erin', created_at: AFTER, body: 'Double spaces give empty segments now.', url: 'https://github.com/acme/widgets/issues/2#issuecomment-2' },
        ],
      }),
      issue({ number: 3, title: 'Slugs break on double spaces', body: 'Filed after the merge.', role: 'introducer', ref_type: 'closes', created_at: AFTER }),
      issue({ number: 4, title: 'Question: slug length?', body: 'Only mentioned.', role: 'introducer', ref_type: 'mentions', created_at: BEFORE }),
      issue({ number: 5, title: 'Cross-ref only', body: 'Cross-referenced.', role: 'introducer', ref_type: 'cross-referenced', created_at: BEFORE }),
      issue({ number: 6, title: 'Empty segments in slugs', body: "The fixer's issue.", role: 'fixer', ref_type: 'closes', created_at: BEFORE }),
    ],
    pr_comments: [
      comment({ role: 'introducer', url: 'https://code.example.org/ticket/100', created_at: BEFORE, body: 'Ticket description: slugs for titles.' }),
      comment({ role: 'introducer', url: 'https://code.example.org/ticket/100#comment:1', created_at: '2024-03-02T09:00:00Z', body: 'A comment on the ticket before the merge.' }),
      comment({ role: 'introducer', url: 'https://code.example.org/ticket/100#comment:2', created_at: AFTER, body: 'Reopened: it breaks.' }),
      comment({ role: 'introducer', number: 101, url: 'https://code.example.org/ticket/101', created_at: AFTER, body: 'A ticket opened after the merge.' }),
      comment({ role: 'fixer', number: 102, url: 'https://code.example.org/ticket/102', created_at: BEFORE, body: "The fixer's ticket." }),
      comment({ role: 'introducer', kind: 'pr', number: 1, url: 'https://github.com/acme/widgets/pull/1#issuecomment-9', created_at: BEFORE, body: 'A PR comment.' }),
      comment({ role: 'introducer', url: 'https://code.example.org/ticket/103', number: 103, created_at: '', body: 'A ticket whose time is unknown.' }),
    ],
  };

  it('takes the closing issue opened before PR1 merged and the ticket description, nothing else', () => {
    expect(pr1OwnMaterial(chain)).toEqual(['Issue #2: Need a slug helper\n\nTitles should become URL slugs.', 'Ticket #100\n\nTicket description: slugs for titles.']);
  });

  it('compares instants, not strings: an issue opened minutes before a merge written with an offset is in', () => {
    // PR1 merged 12:00Z, written 13:00+01:00; an issue at 12:30Z sorts before "2024-03-10T13:00..." as text but is after the merge.
    const late = issue({ number: 7, title: 'Late', role: 'introducer', ref_type: 'closes', created_at: '2024-03-10T12:30:00Z' });
    const early = issue({ number: 8, title: 'Early', role: 'introducer', ref_type: 'closes', created_at: '2024-03-10T11:59:00Z' });
    expect(pr1OwnMaterial({ pr1: PR1, linked_issues: [late, early], pr_comments: [] })).toEqual(['Issue #8: Early']);
  });

  it("quotes the closing issue's comments only when asked, and only those before the merge", () => {
    expect(pr1OwnMaterial(chain, { issueComments: true })[0]).toBe('Issue #2: Need a slug helper\n\nTitles should become URL slugs.\n\nComment by alice:\nHyphens please.');
  });

  it('builds the raw statement: title, body, then each section', () => {
    expect(rawStatement(PR1, pr1OwnMaterial(chain))).toBe(
      'Add slugify helper\n\nCloses #2.\n\nIssue #2: Need a slug helper\n\nTitles should become URL slugs.\n\nTicket #100\n\nTicket description: slugs for titles.',
    );
    expect(rawStatement({ title: 'Only a title', body: '' })).toBe('Only a title');
    expect(rawStatement({ title: 'Only a title', body: '' }, [])).toBe('Only a title');
  });

  it("gives the fixer side's thread to PR2's discussion, and none of PR1's", () => {
    const text = pr2Discussion(chain);
    expect(text).toContain("The fixer's issue.");
    expect(text).toContain("The fixer's ticket.");
    expect(text).not.toContain('Titles should become URL slugs.');
    expect(text).not.toContain('Reopened: it breaks.');
    expect(pr2Discussion({ pr_comments: null, linked_issues: null })).toBe('');
  });

  it('has no material without discussion (git-only runs)', () => {
    expect(pr1OwnMaterial({ pr1: PR1, pr_comments: null, linked_issues: null })).toEqual([]);
  });
});

describe('statement sources through the real GitHub and Trac sources', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-statement-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe('GitHub', () => {
    let gh: FakeGithub;
    const at = (day: number) => `2024-01-${String(day).padStart(2, '0')}T10:00:00Z`;
    const fakeIssue = (i: Partial<FakeIssue> & Pick<FakeIssue, 'number' | 'title' | 'created_at'>): FakeIssue => ({ body: '', user: 'reporter', labels: [], reactions: {}, comments: [], refs: [], ...i });
    const fakePr = (p: Partial<FakePr> & Pick<FakePr, 'number' | 'title' | 'created_at' | 'merged_at'>): FakePr => ({
      body: '', user: 'dev', mergeSha: `${p.number}`.padStart(40, 'c'), labels: [], closes: [], refs: [], comments: [], reviewComments: [], reviews: [], ...p,
    });
    beforeAll(async () => {
      gh = await startFakeGithub({
        repo: {
          owner: 'acme', name: 'widgets', pushedAt: at(20),
          issues: [
            fakeIssue({ number: 2, title: 'Need a slug helper', body: 'Titles should become URL slugs.', created_at: at(1), comments: [{ user: 'erin', created_at: at(15), body: 'Double spaces break it now.' }] }),
            fakeIssue({ number: 3, title: 'Slugs break on double spaces', body: 'Reported after the merge, linked by hand.', created_at: at(12) }),
            fakeIssue({ number: 4, title: 'Question: slug length?', body: 'Only mentioned by PR1.', created_at: at(2) }),
            fakeIssue({ number: 6, title: 'Empty segments in slugs', body: "The fixer's issue: 'a  b' gives 'a--b'.", created_at: at(13) }),
          ],
          prs: [
            fakePr({ number: 1, title: 'Add slugify helper', body: 'Closes #2. See #4.', created_at: at(3), merged_at: at(5), closes: [2, 3] }),
            fakePr({ number: 9, title: 'Fix slugify producing empty segments', body: 'Fixes #6.', created_at: at(14), merged_at: at(16), closes: [6], comments: [{ user: 'erin', created_at: at(14), body: 'Collapsing separators now.' }] }),
          ],
        },
      });
    });
    afterAll(async () => {
      await gh.close();
    });

    it("makes PR1's statement from its title, body and the issue it closed before merging", async () => {
      const collector = contextCollector({
        repo: 'acme/widgets', clone: '/nonexistent', repoDir: join(root, 'gh'), tracker: 'github', offline: false, log: silentLogger,
        settings: { GITHUB_TOKEN: gh.token, FORESIGHT_GITHUB_API_URL: gh.url },
      });
      const pr1 = change({ id: '1', number: 1, title: 'Add slugify helper', body: 'Closes #2. See #4.', mergedAt: at(5), mergeSha: '1'.padStart(40, 'c') });
      const pr2 = change({ id: '9', number: 9, title: 'Fix slugify producing empty segments', body: 'Fixes #6.', mergedAt: at(16), mergeSha: '9'.padStart(40, 'c') });
      const talk = await collector.collect(pr1, pr2);
      expect(talk.complete).toBe(true);
      // The source did collect everything: the exclusions below are the statement's, not the source's.
      expect(talk.linked_issues!.map((i) => [i.role, i.number, i.ref_type])).toEqual([
        ['introducer', 2, 'closes'], ['introducer', 3, 'closes'], ['introducer', 4, 'mentions'], ['fixer', 6, 'closes'],
      ]);
      ExtractedChainSchema.shape.linked_issues.parse(talk.linked_issues);

      const statement = rawStatement(pr1, pr1OwnMaterial({ pr1, ...talk }));
      expect(statement).toBe('Add slugify helper\n\nCloses #2. See #4.\n\nIssue #2: Need a slug helper\n\nTitles should become URL slugs.');
      for (const absent of ['Slugs break on double spaces', 'Only mentioned by PR1.', "The fixer's issue", 'Double spaces break it now.', 'Collapsing separators now.']) {
        expect(statement).not.toContain(absent);
      }
      expect(pr2Discussion(talk)).toContain("The fixer's issue: 'a  b' gives 'a--b'.");
      expect(pr2Discussion(talk)).toContain('Collapsing separators now.');
    });
  });

  describe('Trac', () => {
    let trac: FakeTrac;
    const ticket = (t: Partial<FakeTracTicket> & Pick<FakeTracTicket, 'id' | 'summary' | 'created' | 'descriptionHtml'>): FakeTracTicket => ({
      status: 'closed', type: 'Bug', component: 'Utilities', resolution: 'fixed', reporter: 'Jane Roe', modified: t.created, events: [], ...t,
    });
    beforeAll(async () => {
      trac = await startFakeTrac([
        ticket({
          id: 30000, summary: 'slugify() for titles', created: '2018-11-20T09:15:00Z', descriptionHtml: '<p>\nTitles should become URL slugs.\n</p>',
          events: [
            { author: 'Simon', date: '2018-11-21T10:00:00Z', cnum: 1, commentHtml: '<p>\nAccepted, before the merge.\n</p>' },
            { author: 'John Doe', date: '2019-01-10T08:20:00Z', cnum: 2, fields: { status: { old: 'closed', new: 'new' } }, commentHtml: '<p>\nReopened: double spaces give empty segments.\n</p>' },
          ],
        }),
        ticket({ id: 30001, summary: 'Unicode titles', created: '2018-12-20T09:00:00Z', descriptionHtml: '<p>\nOpened after the merge.\n</p>' }),
      ]);
    });
    afterAll(async () => {
      await trac.close();
    });

    it("takes the description of the ticket PR1 fixed, not its comments, not a later ticket, not PR2's", async () => {
      const collector = contextCollector({
        repo: 'django/django', clone: '/nonexistent', repoDir: join(root, 'trac'), tracker: 'trac', offline: false, log: silentLogger,
        settings: { FORESIGHT_TRAC_URL: trac.baseUrl },
      });
      const pr1 = change({ id: 'a1a1a1a1a1', title: 'Fixed #30000 -- Added slugify().', style: 'commit', mergedAt: '2018-12-01T10:00:00+00:00' });
      const pr2 = change({ id: 'c3c3c3c3c3', title: 'Fixed #30000 -- Fixed slugify() on double spaces.', body: 'Regression in a1a1a1a1a1.', style: 'commit', mergedAt: '2019-01-20T16:45:00+00:00' });
      const talk = await collector.collect(pr1, pr2);
      expect(talk.complete).toBe(true);
      expect(talk.pr_comments!.filter((c) => c.role === 'introducer').map((c) => c.url.replace(trac.baseUrl, ''))).toEqual([
        '/ticket/30000', '/ticket/30000#comment:1', '/ticket/30000#comment:2',
      ]);

      const statement = rawStatement(pr1, pr1OwnMaterial({ pr1, ...talk }));
      expect(statement).toBe('Fixed #30000 -- Added slugify().\n\nTicket #30000\n\nTitles should become URL slugs.');
      expect(pr2Discussion(talk)).toContain('Reopened: double spaces give empty segments.');

      // A change that only refers to a ticket opened after it merged gets nothing from it.
      const early = change({ id: 'b2b2b2b2b2', title: 'Refs #30001 -- Prepared slugify() for unicode.', style: 'commit', mergedAt: '2018-12-10T10:00:00+00:00' });
      const refs = await collector.collect(early, pr2);
      expect(refs.pr_comments!.some((c) => c.role === 'introducer' && c.url.endsWith('/ticket/30001'))).toBe(true);
      expect(pr1OwnMaterial({ pr1: early, ...refs })).toEqual([]);
    });
  });
});
