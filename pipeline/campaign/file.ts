/**
 * A campaign file: the repositories one dataset is mined from, each with where to clone it from, its windows,
 * its recipe and tracker options and a language hint. YAML, read with the `yaml` package and checked with zod;
 * every problem is one error naming the file, the line and the field.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { CHANGE_UNITS, LANGUAGE_HINTS, RECIPE_MODES, TRACKERS } from '../../core/foundation/settings.ts';

const REPO = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
const DAY = /^\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date as YAML gives it: `2023-05-01` reads as a Date unquoted, a string quoted. */
const IsoDate = z.union([z.date(), z.string().regex(DAY, 'an ISO date such as 2023-05-01')]).transform((v, ctx) => {
  const d = v instanceof Date ? v : new Date(/T/.test(v) ? v : `${v}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) {
    ctx.addIssue({ code: 'custom', message: 'not a date' });
    return z.NEVER;
  }
  return d.toISOString();
});

const WindowSchema = z
  .object({ since: IsoDate.optional(), until: IsoDate.optional() })
  .strict()
  .refine((w) => !w.since || !w.until || w.since < w.until, 'since must be before until');

export const CampaignRepoSchema = z
  .object({
    /** owner/name. */
    repo: z.string().regex(REPO, 'owner/name'),
    /** A local clone (a path, relative to the campaign file) or a git URL; default: FORESIGHT_GIT_URL/owner/name. */
    clone: z.string().min(1).optional(),
    /** The branch whose first-parent history is mined. */
    branch: z.string().min(1).optional(),
    /** Fixes merged in any of these windows `[since, until)`; none: the whole history. */
    windows: z.array(WindowSchema).min(1).optional(),
    units: z.enum(CHANGE_UNITS).optional(),
    tracker: z.enum(TRACKERS).optional(),
    trac_url: z.url({ protocol: /^https?$/ }).optional(),
    /** `shipped` (a recipe file when foresight ships one) or `detect`. */
    recipes: z.enum(RECIPE_MODES).optional(),
    /** Which ecosystem recipe detection tries first. */
    language: z.enum(LANGUAGE_HINTS).optional(),
  })
  .strict();
export type CampaignRepo = z.infer<typeof CampaignRepoSchema>;

export const CampaignSchema = z
  .object({
    /** Names the campaign's folder (`<data>/campaigns/<name>/`) and its dataset. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "-", "_", "." (a folder name)'),
    /** The dataset's title (the card's pretty_name). */
    title: z.string().min(1).optional(),
    repos: z.array(CampaignRepoSchema).min(1),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.repos.forEach((r, i) => {
      if (seen.has(r.repo.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['repos', i, 'repo'], message: `${r.repo} is listed twice` });
      seen.add(r.repo.toLowerCase());
    });
  });

export interface Campaign extends z.infer<typeof CampaignSchema> {
  /** The campaign file, absolute. */
  file: string;
}

/** A repository's clone as the file gives it: a local path (resolved against the file's folder) or a URL. */
export type CloneSource = { kind: 'default' } | { kind: 'path'; path: string } | { kind: 'url'; url: string };

export function cloneSource(campaign: Campaign, r: CampaignRepo): CloneSource {
  if (r.clone === undefined) return { kind: 'default' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(r.clone) || /^[\w.-]+@[\w.-]+:/.test(r.clone)) return { kind: 'url', url: r.clone };
  return { kind: 'path', path: isAbsolute(r.clone) ? r.clone : resolve(dirname(campaign.file), r.clone) };
}

function where(lines: LineCounter, doc: ReturnType<typeof parseDocument>, path: ReadonlyArray<PropertyKey>): string {
  const node = doc.getIn(path.filter((p): p is string | number => typeof p !== 'symbol'), true) as { range?: [number, number, number] } | undefined;
  const at = node?.range?.[0];
  return at === undefined ? '' : `:${lines.linePos(at).line}`;
}

/** Read and check a campaign file. */
export async function loadCampaign(file: string): Promise<Campaign> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw new ForesightError(`no campaign file at ${abs}`, { remedy: 'pass the path of a campaign YAML file (README: "Campaigns and releases")' });
  const text = await readFile(abs, 'utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new ForesightError(`campaign ${abs}:${lines.linePos(e.pos[0]).line} is not valid YAML: ${e.message.split('\n')[0]}`, { remedy: 'fix the YAML syntax there' });
  }
  const parsed = CampaignSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') || '(top level)';
    const what = issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message;
    const at = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
    throw new ForesightError(`campaign ${abs}${where(lines, doc, at)}: ${field}: ${what}`, {
      remedy: 'fields: name, title, repos[] of repo, clone, branch, windows[{since, until}], units, tracker, trac_url, recipes, language (README: "Campaigns and releases")',
    });
  }
  return { ...parsed.data, file: abs };
}
