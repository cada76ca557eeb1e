import { HubApiError } from '@huggingface/hub';
import { ForesightError } from '../../core/foundation/errors.ts';

/**
 * A failed hub call as one ForesightError: the status mapped to what the user can do. Upstream
 * failures are `external` (the hub or the network), apart from our own mistakes, which are rethrown.
 */
export interface HubCall {
  /** What foresight was doing: `reading test/demo`, `committing to test/demo`. */
  what: string;
  endpoint: string;
  repoId: string;
  revision: string;
}

const TOKEN_REMEDY = 'set HF_TOKEN to a Hugging Face token with write access (https://huggingface.co/settings/tokens)';

/** The hub's own words, on one line, without the URL trailer the library appends. */
function hubWords(err: HubApiError): string {
  return err.message.replace(/\.?\s*URL: .*$/s, '').replace(/\s+/g, ' ').trim().slice(0, 200);
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
        return new ForesightError(`HF_TOKEN may not write to the dataset ${call.repoId} (403) while ${call.what}${said}`, {
          remedy: `use a token with write access to the ${call.repoId.split('/')[0]} namespace, or publish under your own (--repo-id <you>/<name>)`,
          external: true,
          cause: err,
        });
      case 429:
        return new ForesightError(`the hub kept rate-limiting foresight (429) while ${call.what}`, { remedy: 'wait a few minutes and rerun the same command', external: true, cause: err });
      default:
        return new ForesightError(`the hub at ${call.endpoint} answered ${err.statusCode} while ${call.what}${said}`, {
          remedy: err.statusCode >= 500 ? 'the hub is failing: rerun later' : 'check --repo-id, --revision and HF_ENDPOINT',
          external: true,
          cause: err,
        });
    }
  }
  // undici's "fetch failed" carries the reason (ECONNREFUSED, ENOTFOUND) as its cause.
  if (err instanceof TypeError && err.message === 'fetch failed') {
    const cause = err.cause as { code?: string; message?: string } | undefined;
    return new ForesightError(`cannot reach the hub at ${call.endpoint} (${cause?.code ?? cause?.message ?? 'network error'}) while ${call.what}`, {
      remedy: 'check HF_ENDPOINT and the network, then rerun',
      external: true,
      cause: err,
    });
  }
  return err;
}
