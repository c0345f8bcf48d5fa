/**
 * The console's only way to the server: same-origin fetch with the session cookies. The
 * access token lives in an HttpOnly cookie the script never sees; mutations carry the
 * `x-csrf-token` double-submit header (the readable `csrfToken` cookie). A 401 triggers one
 * refresh (the refresh cookie, path /api/auth) and one retry; if that fails the session ends.
 * Nothing secret is ever kept in storage.
 */
import { signal } from '@preact/signals';

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code: string, readonly body: Record<string, unknown> = {}) {
    super(message);
  }
}

/** Raised to the shell when the session is gone (it shows the sign-in screen). */
export const sessionExpired = signal(0);

export function cookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return null;
}

async function csrfToken(): Promise<string> {
  const existing = cookie('csrfToken');
  if (existing) return existing;
  const res = await fetch('/api/auth/csrf-token', { credentials: 'same-origin' });
  const body = (await res.json()) as { csrfToken?: string };
  return body.csrfToken ?? cookie('csrfToken') ?? '';
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body (file contents) with its own content type. */
  raw?: { data: BodyInit; type: string };
  signal?: AbortSignal;
  /** Do not try a refresh on 401 (the auth calls themselves). */
  noRefresh?: boolean;
}

let refreshing: Promise<boolean> | null = null;

async function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      const res = await fetch('/api/auth/refresh-token', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': await csrfToken() } });
      return res.ok;
    } catch {
      return false;
    } finally {
      setTimeout(() => (refreshing = null), 0);
    }
  })();
  return refreshing;
}

async function send(method: string, url: string, opts: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: BodyInit | undefined;
  if (opts.raw) {
    headers['content-type'] = opts.raw.type;
    body = opts.raw.data;
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = await csrfToken();
  return fetch(url, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
}

export async function request<T = unknown>(method: string, url: string, opts: RequestOptions = {}): Promise<T> {
  let res = await send(method, url, opts);
  if (res.status === 401 && !opts.noRefresh) {
    if (await refresh()) res = await send(method, url, opts);
    if (res.status === 401) sessionExpired.value++;
  }
  const text = await res.text();
  let json: { success?: boolean; data?: T; message?: string; code?: string } = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError(`Unexpected answer from the server (${res.status}).`, res.status, 'bad_response');
  }
  if (!res.ok || json.success === false) throw new ApiError(json.message ?? `Request failed (${res.status}).`, res.status, json.code ?? 'error', json as Record<string, unknown>);
  return json.data as T;
}

/** The whole envelope (when the message matters, e.g. after a create). */
export const api = {
  get: <T>(url: string, signal?: AbortSignal) => request<T>('GET', url, { signal }),
  post: <T>(url: string, body?: unknown) => request<T>('POST', url, { body: body ?? {} }),
  put: <T>(url: string, body?: unknown) => request<T>('PUT', url, { body: body ?? {} }),
  patch: <T>(url: string, body?: unknown) => request<T>('PATCH', url, { body: body ?? {} }),
  del: <T>(url: string, body?: unknown) => request<T>('DELETE', url, body === undefined ? {} : { body }),
};

/** `/api/projects/:id…` with each segment encoded. */
export function projectPath(projectId: string, ...rest: string[]): string {
  return ['/api/projects', projectId, ...rest].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
}
