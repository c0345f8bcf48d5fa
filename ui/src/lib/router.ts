/** Hash routes (`#/p/<id>/data/<collection>?…`): the server needs no SPA fallback. */
import { signal } from '@preact/signals';

export interface Route {
  path: string[];
  query: URLSearchParams;
}

function parse(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const [p = '/', q = ''] = raw.split('?', 2);
  return { path: p.split('/').filter(Boolean).map((s) => decodeURIComponent(s)), query: new URLSearchParams(q) };
}

export const route = signal<Route>(parse(location.hash));
window.addEventListener('hashchange', () => (route.value = parse(location.hash)));

export function href(...segments: string[]): string {
  return '#/' + segments.map(encodeURIComponent).join('/');
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  route.value = parse(location.hash);
}

/** Rewrites the query part of the current route without a history entry. */
export function setQuery(query: URLSearchParams): void {
  const base = location.hash.split('?')[0] || '#/';
  const qs = query.toString();
  navigate(qs ? `${base}?${qs}` : base, true);
}
