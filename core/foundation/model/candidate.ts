import { z } from 'zod';
import { ExclusionSchema, PullRequestSchema } from './change.ts';

/** A reference in a change's message (or its tracker) to earlier work. */
export const ReferenceSchema = z.object({
  kind: z.enum(['regression', 'refs', 'mention', 'revert', 'cross_reference']),
  /** The change (PullRequest.id) it resolves to; null when the referenced commit belongs to no change. */
  target: z.string().nullable(),
  /** The commit named, when the reference is by sha. */
  sha: z.string().nullable(),
  /** The text that matched, for evidence. */
  text: z.string(),
  /** Which source found it (git message, GitHub timeline, Trac ...). */
  source: z.string(),
});
export type Reference = z.infer<typeof ReferenceSchema>;

/** A security advisory whose fix is this change. */
export const AdvisorySchema = z.object({
  id: z.string(),
  aliases: z.array(z.string()),
  summary: z.string(),
  url: z.string(),
  published: z.string().nullable(),
});
export type Advisory = z.infer<typeof AdvisorySchema>;

/** A fix candidate: a PR2 and what points from it to earlier changes. */
export const CandidateSchema = z.object({
  repo: z.string(),
  /** Where the repository's "#N" point: GitHub PRs/issues or Trac tickets. */
  tracker: z.enum(['github', 'trac']),
  pr2: PullRequestSchema,
  references: z.array(ReferenceSchema),
  /** Why this change is a candidate. */
  signals: z.array(z.enum(['fix_keywords', 'explicit_reference', 'revert', 'advisory'])),
  /** When the defect was first reported (issue, ticket, advisory): the inducing change must predate it. */
  reportedAt: z.string().nullable(),
  advisories: z.array(AdvisorySchema),
  /** Later changes with the same patch-id (cherry-picks, re-applications), collapsed into this one. */
  duplicates: z.array(z.string()),
  excluded: ExclusionSchema.nullable(),
});
export type Candidate = z.infer<typeof CandidateSchema>;

/** One entry of the human discussion around a change (a PR comment, review, or Trac ticket comment). */
export const CommentSchema = z.object({
  kind: z.enum(['pr', 'review', 'review_comment', 'trac_ticket', 'issue']),
  number: z.number().int().nullable(),
  author: z.string(),
  url: z.string(),
  created_at: z.string(),
  body: z.string(),
});
export type Comment = z.infer<typeof CommentSchema>;

/** A reporter-side issue a change closes, mentions, or is cross-referenced from. */
export const LinkedIssueSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  title: z.string(),
  body: z.string(),
  labels: z.array(z.string()),
  reactions: z.record(z.string(), z.number()),
  ref_type: z.enum(['closes', 'mentions', 'cross-referenced']),
  created_at: z.string(),
  comments: z.array(z.object({ author: z.string(), created_at: z.string(), body: z.string(), url: z.string() })),
});
export type LinkedIssue = z.infer<typeof LinkedIssueSchema>;
