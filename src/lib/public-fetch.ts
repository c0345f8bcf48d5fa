/**
 * A `fetch` for requests to hosts a tenant chose (an OpenID Connect issuer a project
 * configured): https only, a connection only to public addresses (checked when the name
 * resolves, so DNS rebinding is refused too: lib/public-network.ts), no redirects followed,
 * a time limit and a cap on the answer's size. Shaped for oauth4webapi's `customFetch`.
 */
import http from 'node:http';
import https from 'node:https';
import { isPublicHost, NonPublicAddressError, publicOnlyLookup } from './public-network.js';

export interface PublicFetchOptions {
  /** Loopback and private hosts, and plain http, allowed (development and tests). */
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
}

interface FetchInit {
  method?: string;
  headers?: Record<string, string> | Headers;
  body?: unknown;
  signal?: AbortSignal | null;
}

function headerRecord(h: FetchInit['headers']): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  return { ...h };
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('unsupported request body');
}

export function publicFetch(opts: PublicFetchOptions) {
  return (input: string | URL, init: FetchInit = {}): Promise<Response> => {
    const target = new URL(String(input));
    if (!opts.allowPrivate && (target.protocol !== 'https:' || !isPublicHost(target.hostname))) {
      return Promise.reject(new NonPublicAddressError(target.hostname));
    }
    const body = bodyOf(init.body);
    const headers = headerRecord(init.headers);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const client = target.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = client.request(
        target,
        { method: init.method ?? 'GET', headers, agent: false, timeout: opts.timeoutMs, ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup }) },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > opts.maxBytes) {
              res.destroy();
              reject(new Error(`${target.host} answered more than ${opts.maxBytes} bytes`));
              return;
            }
            chunks.push(c);
          });
          res.on('error', reject);
          res.on('end', () => {
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (v === undefined) continue;
              for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
            }
            const status = res.statusCode ?? 502;
            const nullBody = status === 204 || status === 304;
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: h }));
          });
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error(`${target.host} gave no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => req.destroy(new Error(`${target.host} gave no answer within ${opts.timeoutMs} ms`)));
      req.on('error', reject);
      init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
      req.end(body);
    });
  };
}
