/**
 * Redaction by value: every credential foresight knows (tokens and keys from the environment, credentials
 * inside URLs such as FORESIGHT_GIT_URL or a pip index) is registered here once, and every place where text
 * leaves the process (log lines, artifacts, checkpoints, build logs, error messages) passes through
 * `redact`. Values are matched as written, JSON-escaped and URL-encoded, since they reach text in all three.
 */

/** Shorter values would hit ordinary text ("test", "abc"): never treated as secrets. */
const MIN_LENGTH = 6;

const secrets = new Map<string, string>();

function variants(value: string): string[] {
  return [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])];
}

/** Remember `value` as the secret `label`; empty and very short values are ignored. */
export function registerSecret(label: string, value: string | null | undefined): void {
  const v = value?.trim();
  if (!v || v.length < MIN_LENGTH) return;
  for (const variant of variants(v)) if (!secrets.has(variant)) secrets.set(variant, `<${label}>`);
}

/** `text` with every registered secret replaced by its label. */
export function redact(text: string): string {
  if (secrets.size === 0 || !text) return text;
  let out = text;
  // Longest first: a secret that contains another is replaced whole.
  for (const [value, label] of [...secrets].sort((a, b) => b[0].length - a[0].length)) {
    if (out.includes(value)) out = out.split(value).join(label);
  }
  return out;
}

/** Whether `text` holds a registered secret (for gates and tests). */
export function containsSecret(text: string): boolean {
  for (const value of secrets.keys()) if (text.includes(value)) return true;
  return false;
}

/** Forget every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
}
