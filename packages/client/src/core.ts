/**
 * The transport every feature shares: the base URL and API key, the `Plinth-Client` version
 * header, the user's access token (refreshed before it expires, and once more after a 401),
 * the envelope (`{success, data, message}`) unwrapped, errors as PlinthError, and retries:
 * reads and writes that carry an `Idempotency-Key` are retried after a network failure, a 429
 * (after its `Retry-After`), 502, 503 or 504. A write is sent with its key from the first
 * attempt, so the server answers a retry with the first answer and never writes twice
 * (docs/data.md, "Retries: Idempotency-Key").
 */
import { PlinthError, errorOf } from './errors.js';
import { CLIENT_VERSION } from './version.js';

export type QueryValue = string | number | boolean | Date | null | undefined | ReadonlyArray<string | number | boolean | Date>;
export type QueryInit = Record<string, QueryValue> | ReadonlyArray<readonly [string, string]>;

export interface RequestOptions {
  method?: string;
  /** The path below the base URL, e.g. `/api/data/posts`. */
  path: string;
  query?: QueryInit;
  /** A JSON body (encoded here). */
  body?: unknown;
  /** A body sent as is (Blob, ArrayBuffer, bytes, text) instead of JSON. */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  /** Send the signed-in user's access token (default true). */
  auth?: boolean;
  /** A write that is safe to retry because it carries an Idempotency-Key (generated unless given). */
  idempotent?: boolean;
  idempotencyKey?: string;
  /** Attempts after the first (default: the client's `retries`). */
  retries?: number;
  signal?: AbortSignal;
}

/** What the transport needs from the session layer (auth.ts implements it). */
export interface TokenSource {
  /** A valid access token or null; refreshes first when it is about to expire. */
  accessToken(): Promise<string | null> | string | null;
  /** The request with `token` was answered 401: refresh (once for all callers); true when a new token exists. */
  recover(token: string): Promise<boolean>;
  /** `include` in cookie mode (the refresh token is an HttpOnly cookie), else `omit`. */
  readonly credentials: RequestCredentials;
}

export interface TransportOptions {
  /** Base URL of the Plinth server, e.g. `https://api.example.com`. */
  url: string;
  /** The project's publishable key (`pk_live_…`) in browsers, or its secret key (`sk_live_…`) on servers. */
  apiKey: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /** Retries after the first attempt for retryable failures (default 2; 0 turns retries and automatic keys off). */
  retries?: number;
  /** The longest `Retry-After` (seconds) waited for before giving up (default 10). */
  maxRetryAfter?: number;
}

const RETRYABLE = new Set([429, 502, 503, 504]);
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function randomId(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export function encodeQuery(query: QueryInit | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  const put = (k: string, v: QueryValue) => {
    if (v === undefined) return;
    if (Array.isArray(v)) q.append(k, v.map((x) => (x instanceof Date ? x.toISOString() : String(x))).join(','));
    else q.append(k, v instanceof Date ? v.toISOString() : String(v));
  };
  if (Array.isArray(query)) for (const [k, v] of query as ReadonlyArray<readonly [string, string]>) q.append(k, v);
  else for (const k of Object.keys(query)) put(k, (query as Record<string, QueryValue>)[k]);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The envelope's `data`, or the body itself for the routes that answer a bare document. */
export function unwrap<T>(body: unknown): T {
  if (body && typeof body === 'object' && (body as { success?: unknown }).success === true && 'data' in body) return (body as { data: T }).data;
  return body as T;
}

export async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class Transport {
  readonly url: string;
  readonly apiKey: string;
  readonly retries: number;
  /** Set by the client once its session layer exists. */
  tokens: TokenSource | null = null;
  private readonly fetchImpl: typeof fetch;
  private readonly extraHeaders: Record<string, string>;
  private readonly maxRetryAfter: number;

  constructor(opts: TransportOptions) {
    if (!opts.url) throw new TypeError('Plinth client: `url` is required');
    if (!opts.apiKey) throw new TypeError('Plinth client: `apiKey` is required');
    this.url = opts.url.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    this.retries = opts.retries ?? 2;
    this.maxRetryAfter = opts.maxRetryAfter ?? 10;
    this.extraHeaders = opts.headers ?? {};
    const f = opts.fetch ?? globalThis.fetch;
    // A bare `fetch` called as a method of another object throws "Illegal invocation" in browsers.
    this.fetchImpl = (input, init) => f(input, init);
  }

  /** The full URL of `path` (with `query`). */
  href(path: string, query?: QueryInit): string {
    return this.url + path + encodeQuery(query);
  }

  /** Sends a request (token, retries, refresh after a 401) and returns the raw Response, whatever its status. */
  async send(o: RequestOptions): Promise<Response> {
    const method = (o.method ?? 'GET').toUpperCase();
    const retries = o.retries ?? this.retries;
    const key = o.idempotencyKey ?? (o.idempotent && retries > 0 ? randomId() : undefined);
    const canRetry = SAFE.has(method) || key !== undefined;
    const url = this.href(o.path, o.query);
    const useToken = o.auth !== false && this.tokens !== null;
    let recovered = false;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { 'x-api-key': this.apiKey, 'plinth-client': CLIENT_VERSION, ...this.extraHeaders, ...o.headers };
      const token = useToken ? await this.tokens!.accessToken() : null;
      if (token) headers.authorization = `Bearer ${token}`;
      if (key) headers['idempotency-key'] = key;
      let body: BodyInit | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method, headers, body, signal: o.signal, credentials: this.tokens?.credentials ?? 'omit' });
      } catch (err) {
        if (o.signal?.aborted) throw new PlinthError('The request was aborted.', 0, 'aborted');
        if (canRetry && attempt < retries) {
          await sleep(backoff(attempt));
          continue;
        }
        throw new PlinthError(`Network error: ${(err as Error)?.message ?? err}`, 0, 'network_error', { cause: err });
      }
      if (res.status === 401 && token && !recovered) {
        recovered = true;
        if (await this.tokens!.recover(token)) {
          attempt--;
          continue;
        }
      }
      if (RETRYABLE.has(res.status) && canRetry && attempt < retries) {
        const after = Number(res.headers.get('retry-after'));
        const wait = Number.isFinite(after) && after > 0 ? after * 1000 : backoff(attempt);
        if (wait <= this.maxRetryAfter * 1000) {
          await res.body?.cancel().catch(() => {});
          await sleep(wait);
          continue;
        }
      }
      return res;
    }
  }

  /** Sends a request and returns the envelope's `data` (or the bare body); throws PlinthError on a non-2xx. */
  async request<T = unknown>(o: RequestOptions): Promise<T> {
    const res = await this.send(o);
    const body = await readBody(res);
    if (!res.ok) throw errorOf(res, body);
    return unwrap<T>(body);
  }
}

function backoff(attempt: number): number {
  return Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}
