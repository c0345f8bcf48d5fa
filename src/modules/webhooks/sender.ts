/**
 * One HTTP POST of a signed webhook: a timeout, no redirects followed (a 3xx is a failure: a
 * redirect could lead anywhere, the private network included), the first 1 KB of the answer
 * kept, and, unless private URLs are allowed, a connection only to public addresses (checked
 * when the name resolves: lib/public-network.ts).
 */
import http from 'node:http';
import https from 'node:https';
import { isPublicHost, publicOnlyLookup } from '../../lib/public-network.js';

export const RESPONSE_KEPT_BYTES = 1024;

export interface SendResult {
  /** The HTTP status, or null when no answer came (refused, timed out, reset). */
  status: number | null;
  durationMs: number;
  /** The first 1 KB of the answer's body. */
  response: string | null;
  error: string | null;
  /** Seconds asked by a Retry-After header (429/503), when present. */
  retryAfterSeconds: number | null;
}

function retryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}

export function postWebhook(url: string, headers: Record<string, string>, body: string, opts: { timeoutMs: number; allowPrivate: boolean }): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const target = new URL(url);
    const fail = (error: string) => resolve({ status: null, durationMs: elapsed(), response: null, error, retryAfterSeconds: null });
    if (!opts.allowPrivate && (target.protocol !== 'https:' || !isPublicHost(target.hostname))) return fail('endpoint is not a public https URL');
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
        timeout: opts.timeoutMs,
        agent: false,
        ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () =>
          resolve({
            status: res.statusCode ?? null,
            durationMs: elapsed(),
            response: Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8'),
            error: null,
            retryAfterSeconds: retryAfter(res.headers['retry-after']),
          });
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          kept += c.length;
          if (kept >= RESPONSE_KEPT_BYTES) {
            done(); // the rest is not read: an endless answer cannot hold the worker
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', (err) => fail(err.message));
    req.end(body);
  });
}
