import type { PullRequest } from '../../../../core/foundation/model/change.ts';
import { hookComment, type FakeTracTicket } from '../../../helpers/fake-trac.ts';

/** A full 40-hex sha made from a short tag (deterministic). */
export const sha = (tag: string): string => (tag + '0'.repeat(40)).slice(0, 40);

function change(tag: string, mergedAt: string, message: string): PullRequest {
  const [title, ...rest] = message.split('\n');
  const s = sha(tag);
  return {
    id: s.slice(0, 10), number: null, title: title!, body: rest.join('\n').trim(), author: 'Committer', mergedAt,
    mergeSha: s, baseSha: 'f'.repeat(40), style: 'commit', commits: [s],
  };
}

/** Django-like mainline commits, oldest first. */
export const CHANGES: PullRequest[] = [
  change('a1a1a1a1a1', '2018-12-01T10:00:00+00:00', 'Fixed #30000 -- Fixed crash of QuerySet.union() with ordering by an annotation.\n\nThanks Jane Roe for the report.'),
  change('b2b2b2b2b2', '2018-12-15T09:30:00+00:00', 'Refs #29999 -- Added tests for Field.get_choices() ordering.'),
  change('c3c3c3c3c3', '2019-01-20T16:45:00+00:00', 'Fixed #30000 -- Fixed crash of QuerySet.union() ordering by an annotation on a subquery.\n\nRegression in a1a1a1a1a1.'),
  change('d4d4d4d4d4', '2019-02-10T08:00:00+00:00', 'Fixed #30001 -- Added support for the "json" format to inspectdb.'),
  change('e5e5e5e5e5', '2019-03-01T12:00:00+00:00', 'Fixed #30002 -- Made EmailValidator reject trailing newlines.'),
  change('abcdef0123', '2019-03-05T12:00:00+00:00', 'Refs #30002 -- Added release note for EmailValidator fix.'),
  change('f6f6f6f6f6', '2019-04-01T14:00:00+00:00', 'Fixed #29999 -- Made Field.get_choices() respect ordering.'),
  change('0707070707', '2019-04-02T14:00:00+00:00', 'Bumped version for 2.2 release.'),
];

export const C = (tag: string) => CHANGES.find((c) => c.mergeSha.startsWith(tag))!;

const closeFixed = { status: { old: 'assigned', new: 'closed' }, resolution: { old: '', new: 'fixed' } };

export const TICKETS: FakeTracTicket[] = [
  {
    id: 30000,
    summary: 'QuerySet.union() crashes with ordering by an annotated field',
    status: 'closed', type: 'Bug', component: 'Database layer (models, ORM)', resolution: 'fixed', reporter: 'Jane Roe',
    created: '2018-11-20T09:15:00Z', modified: '2019-01-20T16:46:00Z',
    descriptionHtml:
      '<p>\nUsing <code>QuerySet.union()</code> with <code>order_by()</code> on an annotation crashes &amp; the error is “confusing”:\n</p>\n' +
      '<pre class="wiki">qs1.union(qs2).order_by(&#39;-num&#39;)\nDatabaseError: ORDER BY term does not match any column\n</pre>\n<p>\nTested on Django 2.1 — café.\n</p>',
    events: [
      { author: 'Simon Charette', date: '2018-11-20T10:02:11Z', cnum: 1, fields: { stage: { old: 'Unreviewed', new: 'Accepted' } }, commentHtml: '<p>\nReproduced at <a class="changeset" href="/changeset/0123456/">0123456</a> on master.\n</p>' },
      { author: 'Tim Graham <timograham@…>', date: '2018-12-01T10:00:30Z', cnum: 2, fields: closeFixed, commentHtml: hookComment('a1a1a1a1a1' + '0'.repeat(30), 'Fixed #30000 -- Fixed crash of QuerySet.union() with ordering by an annotation.\n\nThanks Jane Roe for the report.') },
      {
        author: 'John Doe', date: '2019-01-10T08:20:00Z', cnum: 3, fields: { status: { old: 'closed', new: 'new' }, resolution: { old: 'fixed', new: '' } },
        commentHtml: '<p>\nThis still crashes when the annotation is a <code>Subquery</code>, see attached test.\n</p>',
      },
      { author: 'Mariusz Felisiak', date: '2019-01-10T09:00:00Z', cnum: 4, fields: { owner: { old: '', new: 'Mariusz Felisiak' }, status: { old: 'new', new: 'assigned' } } },
      { author: 'Mariusz Felisiak <felisiak.mariusz@…>', date: '2019-01-20T16:46:00Z', cnum: 5, fields: closeFixed, commentHtml: hookComment('c3c3c3c3c3' + '0'.repeat(30), 'Fixed #30000 -- Fixed crash of QuerySet.union() ordering by an annotation on a subquery.\n\nRegression in a1a1a1a1a1.') },
    ],
  },
  {
    id: 30001,
    summary: 'Add "json" format to inspectdb',
    status: 'closed', type: 'New feature', component: 'Core (Management commands)', resolution: 'fixed', reporter: 'Ann Example',
    created: '2019-02-01T13:00:00Z', modified: '2019-02-10T08:01:00Z',
    descriptionHtml: '<p>\nIt would be nice to have <em>JSON</em> output.\n</p>',
    events: [{ author: 'Tim Graham <timograham@…>', date: '2019-02-10T08:01:00Z', cnum: 1, fields: closeFixed, commentHtml: hookComment('d4d4d4d4d4' + '0'.repeat(30), 'Fixed #30001 -- Added support for the "json" format to inspectdb.') }],
  },
  {
    id: 30002,
    summary: 'EmailValidator accepts trailing newline, "foo@example.com\\n"',
    status: 'closed', type: 'Bug', component: 'Core (Other)', resolution: 'fixed', reporter: 'Zoë Reporter',
    created: '2019-02-20T22:10:05Z', modified: '2019-03-05T12:00:10Z',
    descriptionHtml: '<p>\nThe regex uses <code>$</code> instead of <code>\\Z</code>.\n</p>',
    events: [
      { author: 'Carlton Gibson <carlton.gibson@…>', date: '2019-03-01T12:00:20Z', cnum: 1, fields: closeFixed, commentHtml: hookComment('e5e5e5e5e5' + '0'.repeat(30), 'Fixed #30002 -- Made EmailValidator reject trailing newlines.') },
      { author: 'Carlton Gibson <carlton.gibson@…>', date: '2019-03-05T12:00:10Z', cnum: 2, commentHtml: hookComment('abcdef0123' + '0'.repeat(30), 'Refs #30002 -- Added release note for EmailValidator fix.') },
    ],
  },
  {
    id: 29999,
    summary: 'Field.get_choices() ignores Meta.ordering',
    status: 'closed', type: 'Bug', component: 'Database layer (models, ORM)', resolution: 'fixed', reporter: 'Old Reporter',
    created: '2018-11-01T07:00:00Z', modified: '2019-04-01T14:00:30Z',
    descriptionHtml: '<p>\nChoices are unordered.\n</p>',
    events: [
      { author: 'Tim Graham', date: '2018-11-02T07:00:00Z', cnum: 1, fields: { status: { old: 'new', new: 'closed' }, resolution: { old: '', new: 'wontfix' } }, commentHtml: '<p>\nI think this is intended.\n</p>' },
      { author: 'Old Reporter', date: '2018-12-10T07:00:00Z', cnum: 2, fields: { status: { old: 'closed', new: 'new' }, resolution: { old: 'wontfix', new: '' } }, commentHtml: '<p>\nReopening after the mailing-list discussion.\n</p>' },
      { author: 'Tim Graham <timograham@…>', date: '2018-12-15T09:30:10Z', cnum: 3, commentHtml: hookComment('b2b2b2b2b2' + '0'.repeat(30), 'Refs #29999 -- Added tests for Field.get_choices() ordering.') },
      { author: 'Tim Graham <timograham@…>', date: '2019-04-01T14:00:30Z', cnum: 4, fields: closeFixed, commentHtml: hookComment('f6f6f6f6f6' + '0'.repeat(30), 'Fixed #29999 -- Made Field.get_choices() respect ordering.') },
    ],
  },
];
