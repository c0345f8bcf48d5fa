/**
 * Where a link mailed by Plinth may send a browser: only to URLs the operator configured (the
 * project's site URL and its extra redirect URLs), never to one a client names freely (an open
 * redirect would hand a sign-in token to any site). The check runs on the parsed URL (WHATWG
 * parsing: `..`, `%2e%2e`, backslashes and default ports already resolved), and the link is
 * built from that parsed URL, so what was checked is what is mailed.
 */

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A URL a browser may be sent to: https, or http on a loopback host; no credentials, no fragment. */
export function parseRedirectUrl(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname));
  if (!secure || url.username || url.password || url.hash || raw.includes('#')) return null;
  return url;
}

/** The stored form of a configured redirect URL (no trailing slash), or null when it is not one. */
export function normaliseRedirectUrl(raw: string): string | null {
  const url = parseRedirectUrl(raw);
  if (!url) return null;
  return url.href.replace(/\/+$/, '');
}

/** The path of an allowed entry, without its trailing slash ('' for the origin's root). */
const basePath = (u: URL) => u.pathname.replace(/\/+$/, '');

/**
 * Whether `target` lies under one of the allowed URLs: the same scheme, host and port, and a
 * path equal to the entry's or below it on a segment boundary (`/app` allows `/app` and
 * `/app/x`, not `/apple`). Query strings are the app's own business and are kept.
 */
export function allowedRedirect(target: string, allowed: readonly string[]): URL | null {
  const url = parseRedirectUrl(target);
  if (!url) return null;
  for (const entry of allowed) {
    const base = parseRedirectUrl(entry);
    if (!base || base.origin !== url.origin) continue;
    const prefix = basePath(base);
    if (url.pathname === prefix || url.pathname === `${prefix}/` || url.pathname.startsWith(`${prefix}/`)) return url;
  }
  return null;
}
