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
