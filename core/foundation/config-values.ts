import { z } from 'zod';
import { ForesightError } from './errors.ts';

/**
 * The value parsers of the configuration (core/foundation/config.ts): each checks one flag or variable and names it,
 * as the user typed it, in its error. Nothing here reads the environment.
 */

/** Where a value came from, so an error names what the user typed. */
export interface Origin {
  /** `--jobs` or `FORESIGHT_JOBS`. */
  name: string;
  flag: boolean;
}

export function bad(origin: Origin, value: string, what: string, example: string): ForesightError {
  const shown = origin.flag ? `${origin.name} ${value}` : `${origin.name}=${value}`;
  const remedy = origin.flag ? `pass ${origin.name} ${example}` : `set ${origin.name} to ${example} or unset it`;
  return new ForesightError(`${shown} is not ${what}`, { remedy });
}

/** A whole number ≥ min. */
export function int(origin: Origin, v: string, min: number): number {
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw bad(origin, v, `a whole number ≥ ${min}`, min === 0 ? '0 or more' : `a number such as ${Math.max(min, 2)}`);
  return n;
}

/** One of `allowed`; the first is the example the remedy gives. */
export function oneOf<T extends string>(origin: Origin, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw bad(origin, v, `one of ${allowed.join(', ')}`, allowed[0]!);
  return v as T;
}

export function positive(origin: Origin, v: string): number {
  const n = Number(v);
  if (!v.trim() || !Number.isFinite(n) || n <= 0) throw bad(origin, v, 'a positive number', 'a number such as 1.5');
  return n;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO date (2023-01-01) or date-time (2023-01-01T12:00:00Z) that exists on the calendar, as an ISO
 * string in UTC. `Date.parse` alone takes `1` and rolls `2024-02-30` over to March: neither is a date.
 */
export function parseIsoDate(origin: Origin, v: string): string {
  const m = ISO_DATE.exec(v.trim());
  const fail = (): ForesightError => bad(origin, v, 'a date', 'an ISO date such as 2023-01-01');
  if (!m) throw fail();
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) throw fail();
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) throw fail();
  const at = Date.parse(m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : m[7] ? v.trim() : `${v.trim()}Z`);
  if (Number.isNaN(at)) throw fail();
  return new Date(at).toISOString();
}

export function httpUrl(origin: Origin, v: string): string {
  try {
    const u = new URL(v);
    if (u.protocol === 'http:' || u.protocol === 'https:') return v.replace(/\/+$/, '');
  } catch {
    /* reported below */
  }
  throw bad(origin, v, 'an http(s) URL', 'a URL such as https://example.org');
}

/** An http(s) URL without credentials: a token goes in its own secret setting, never in Config. */
export function httpUrlNoCredentials(origin: Origin, v: string): string {
  const url = httpUrl(origin, v);
  if (splitCredentials(url).credentials !== null) throw bad(origin, '<url with credentials>', 'a URL without user or password', 'the URL alone, its token in the setting the README names');
  return url;
}

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
/** Docker's reference grammar: a registry host (a domain or IPv4 address) and an optional port. */
const REGISTRY_HOST = new RegExp(`^${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]{1,5})?$`);
/** A path component of a Docker repository name: lowercase, separators only between alphanumerics. */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

/**
 * Why `value` is not a registry to push to (`HOST[:PORT]/NAMESPACE[/...]`), or null when it is one. The
 * host must look like one to Docker (a dot, a port, or `localhost`): `myhost/ns` would otherwise be read
 * as the namespace `myhost` on Docker Hub, and the images would go somewhere else than asked.
 */
export function registryProblem(value: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'HOST[:PORT]/NAMESPACE (without http:// or https://)';
  if (/[@\s]/.test(value)) return 'HOST[:PORT]/NAMESPACE (no credentials, no spaces)';
  const [host = '', ...path] = value.split('/');
  if (!path.length || !REGISTRY_HOST.test(host)) return 'HOST[:PORT]/NAMESPACE';
  if (!host.includes('.') && !host.includes(':') && host !== 'localhost') return 'a registry host (Docker needs a dot, a port or localhost in it)';
  const port = /:(\d+)$/.exec(host)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return 'a registry with a port in 1..65535';
  if (!path.every((c) => PATH_COMPONENT.test(c))) return 'a registry with a lowercase namespace (a-z, 0-9, and . _ - between them)';
  // Docker refuses repository names longer than 255 characters; `/foresight-eval` is appended.
  if (value.length + '/foresight-eval'.length > 255) return 'a registry short enough for a Docker repository name';
  return null;
}

export function registry(origin: Origin, v: string): string {
  // A `user:password@host` must not be echoed into an error message or a log.
  if (v.includes('@')) {
    throw new ForesightError(`${origin.name} holds an @ (credentials?): a registry is HOST[:PORT]/NAMESPACE`, {
      remedy: `${origin.flag ? 'pass' : 'set'} ${origin.name} without credentials; foresight pushes to registries that need no login`,
    });
  }
  const problem = registryProblem(v);
  if (problem) throw bad(origin, v, problem, 'HOST[:PORT]/NAMESPACE such as 127.0.0.1:5000/foresight');
  return v;
}

const PricesSchema = z.record(z.string(), z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() }).strict());

/** `{"model": {"prompt": USD per 1M tokens, "completion": USD per 1M tokens}, ...}`. */
export function prices(origin: Origin, v: string): Record<string, { prompt: number; completion: number }> {
  let json: unknown;
  try {
    json = JSON.parse(v);
  } catch {
    json = undefined;
  }
  const parsed = PricesSchema.safeParse(json);
  if (!parsed.success) throw bad(origin, v, 'a JSON price table', `'{"model-a":{"prompt":0.15,"completion":0.6}}' (USD per million tokens)`);
  return parsed.data;
}

/** A URL without its user:password, and those credentials (registered as a secret). */
export function splitCredentials(url: string): { url: string; credentials: string | null } {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return { url, credentials: null };
    const credentials = u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : decodeURIComponent(u.username);
    u.username = '';
    u.password = '';
    return { url: u.toString().replace(/\/+$/, ''), credentials };
  } catch {
    return { url, credentials: null };
  }
}

/** Why `value` is not a queue address foresight can use, or null when it is one. */
export function redisUrlProblem(value: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'a redis://HOST:PORT URL';
  }
  if (u.protocol !== 'redis:') return 'a redis://HOST:PORT URL';
  // Jobs and logs carry no secrets: a password-protected Redis is reached through its network, not the URL.
  if (u.username || u.password) return 'a redis://HOST:PORT URL without credentials';
  if (!u.hostname) return 'a redis://HOST:PORT URL';
  if (u.pathname !== '' && u.pathname !== '/' && !/^\/\d{1,2}$/.test(u.pathname)) return 'a redis://HOST:PORT[/DB] URL';
  return null;
}

/** A queue address (redisUrlProblem says what is accepted), without a trailing slash. */
export function redisUrl(origin: Origin, v: string): string {
  const problem = redisUrlProblem(v);
  // A password typed into the URL is not echoed back.
  if (problem) throw bad(origin, v.replace(/\/\/[^@/]*@/, '//***@'), problem, 'redis://127.0.0.1:6379');
  return v.replace(/\/+$/, '');
}
