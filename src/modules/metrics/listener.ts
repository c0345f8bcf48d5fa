/**
 * METRICS_PORT: /metrics on a second listener bound to 127.0.0.1 only, without a token (whoever
 * can reach loopback on this host can already read the process). API nodes and separate
 * workers alike, so a worker's mail counters can be scraped too. Plain node:http: no routes,
 * hooks or CORS of the API apply to it.
 *
 * A `plinth worker` has no other listener: there it also answers the probes, GET /livez (the
 * event loop runs) and GET /readyz (503 with a reason while the worker cannot run jobs: the
 * database is away, runners are being replaced, or it is shutting down).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../../context.js';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/** A readiness answer: ok, or why not (a stable snake_case reason). */
export type Readiness = { ok: true } | { ok: false; reason: string };

export interface MetricsListenerOptions {
  host?: string;
  /** Serve /livez and /readyz too (the worker process, which has no API listener). */
  ready?: () => Readiness;
}

function probe(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

export async function startMetricsListener(ctx: AppContext, port: number, opts: MetricsListenerOptions = {}): Promise<MetricsListener> {
  const { registry } = ctx.metrics;
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && opts.ready && path === '/livez') return probe(res, 200, { status: 'ok' });
    if (req.method === 'GET' && opts.ready && path === '/readyz') {
      const r = opts.ready();
      return r.ok ? probe(res, 200, { status: 'ok' }) : probe(res, 503, { status: 'unavailable', reason: r.reason });
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(body),
      (err) => {
        ctx.log.warn({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
