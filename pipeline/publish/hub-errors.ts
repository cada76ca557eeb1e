import { HubApiError, InvalidApiResponseFormatError } from '@huggingface/hub';
import { ForesightError } from '../../core/foundation/errors.ts';

/**
 * A failed hub call as one ForesightError of one line: the status mapped to what the user can do, in the
 * hub's own words when it gave any. Upstream failures are `external` (the hub or the network), apart from
 * our own mistakes, which are rethrown.
 */
export interface HubCall {
  /** What foresight was doing: `reading test/demo`, `committing to test/demo`. */
  what: string;
  endpoint: string;
  repoId: string;
  revision: string;
}

const TOKEN_REMEDY = 'set HF_TOKEN to a Hugging Face token with write access (https://huggingface.co/settings/tokens)';
/** Whatever fails at the hub, the dry run still works: it asks no hub. */
const OFFLINE_HINT = 'foresight publish --dry-run (without --remote hub) works without the hub';

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Text a JSON value says: a string as it is, an object's `error`, `message` or `detail` (the hub nests them). */
function textOf(value: unknown, depth = 0): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (depth > 3 || value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) return value.map((v) => textOf(v, depth + 1)).filter(Boolean).join('; ') || null;
  const o = value as Record<string, unknown>;
  for (const key of ['error', 'message', 'detail', 'msg']) {
    const said = textOf(o[key], depth + 1);
    if (said) return said;
  }
  return null;
}

/** A text body's words: an HTML page's title (a proxy's error page), else the text without markup. */
function pageWords(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  if (title?.trim()) return title;
  return text.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ');
}

/**
 * The hub's own words, on one line: from the body the library keeps (`data`: the JSON answer, or
 * `{message: text}`), never the library's message, which interpolates a JSON object as `[object Object]`.
 */
export function hubWords(err: HubApiError): string {
  const data = err.data as Record<string, unknown> | undefined;
  let words: string | null = null;
  if (data !== undefined) {
    const main = textOf(data);
    const more = textOf(data.error_description);
    words = main && more && main !== more ? `${main}: ${more}` : (main ?? more);
    // A text body (`{message: text}`) may be a page of HTML.
    if (words && Object.keys(data).length === 1 && typeof data.message === 'string') words = pageWords(words);
  } else {
    words = err.message.replace(/\.?\s*URL: .*$/s, '');
  }
  const line = oneLine(words ?? '').replace(/^Api error with status \d+$/, '');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * A failed response as the library reports one (HubApiError with the body in `data`): for the requests
 * foresight makes itself, so their errors read like the library's.
 */
export async function responseError(res: Response): Promise<HubApiError> {
  const err = new HubApiError(res.url, res.status, res.headers.get('X-Request-Id') ?? undefined, `Api error with status ${res.status}`);
  const text = await res.text().catch(() => '');
  let data: unknown = { message: text };
  if (res.headers.get('Content-Type')?.startsWith('application/json')) {
    try {
      data = JSON.parse(text);
    } catch {
      // A body that is not the JSON it claims: kept as text.
    }
  }
  err.data = (data !== null && typeof data === 'object' && !Array.isArray(data) ? data : { message: text }) as HubApiError['data'];
  return err;
}

/** Why a request reached no hub: undici's cause (ECONNREFUSED, ENOTFOUND, both addresses of a name refused). */
function networkReason(cause: unknown): string {
  if (cause instanceof AggregateError) {
    const codes = [...new Set(cause.errors.map((e) => networkReason(e)))];
    return codes.join(', ') || 'network error';
  }
  if (cause && typeof cause === 'object') {
    const c = cause as { code?: unknown; message?: unknown };
    if (typeof c.code === 'string' && c.code) return c.code;
    if (typeof c.message === 'string' && c.message.trim()) return oneLine(c.message).slice(0, 120);
  }
  return 'network error';
}

export function isStaleParent(err: unknown): boolean {
  // The hub refuses a commit whose parentCommit is no longer the branch head (409 Conflict, or 412).
  return err instanceof HubApiError && (err.statusCode === 409 || err.statusCode === 412);
}

export function hubError(err: unknown, call: HubCall): unknown {
  if (err instanceof ForesightError) return err;
  if (err instanceof HubApiError) {
    const words = hubWords(err);
    const said = words ? `: ${words}` : '';
    switch (err.statusCode) {
      case 401:
        return new ForesightError(`the hub at ${call.endpoint} refused HF_TOKEN (401) while ${call.what}${said}`, { remedy: TOKEN_REMEDY, external: true, cause: err });
      case 403:
        return new ForesightError(`the hub at ${call.endpoint} refused HF_TOKEN access to the dataset ${call.repoId} (403) while ${call.what}${said}`, {
          remedy: `use a token with write access to the ${call.repoId.split('/')[0]} namespace, or publish under your own (--repo-id <you>/<name>)`,
          external: true,
          cause: err,
        });
      case 429:
        return new ForesightError(`the hub kept rate-limiting foresight (429) while ${call.what}`, { remedy: 'wait a few minutes and rerun the same command', external: true, cause: err });
      default:
        return new ForesightError(`the hub at ${call.endpoint} answered ${err.statusCode} while ${call.what}${said}`, {
          remedy: err.statusCode >= 500 ? `the hub (or a proxy before it) is failing: rerun later; ${OFFLINE_HINT}` : 'check --repo-id, --revision and HF_ENDPOINT',
          external: true,
          cause: err,
        });
    }
  }
  // undici's "fetch failed" carries the reason (ECONNREFUSED, ENOTFOUND) as its cause.
  if (err instanceof TypeError && err.message === 'fetch failed') {
    return new ForesightError(`cannot reach the hub at ${call.endpoint} (${networkReason(err.cause)}) while ${call.what}`, {
      remedy: `check HF_ENDPOINT and the network, then rerun; ${OFFLINE_HINT}`,
      external: true,
      cause: err,
    });
  }
  // An answer that is not the hub's JSON: something else listens at HF_ENDPOINT (a proxy, a login page).
  if (err instanceof SyntaxError || err instanceof InvalidApiResponseFormatError) {
    return new ForesightError(`the answer at ${call.endpoint} is not a Hugging Face hub's while ${call.what} (${oneLine(err.message).slice(0, 120)})`, {
      remedy: `check HF_ENDPOINT points at a Hugging Face hub and no proxy answers in its place; ${OFFLINE_HINT}`,
      external: true,
      cause: err,
    });
  }
  return err;
}
