/**
 * METRICS_PORT: /metrics on a second listener bound to 127.0.0.1 only, without a token (whoever
 * can reach loopback on this host can already read the process). API nodes and separate
 * workers alike, so a worker's mail counters can be scraped too. Plain node:http: no routes,
 * hooks or CORS of the API apply to it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../../context.js';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsListener(ctx: AppContext, port: number, host = '127.0.0.1'): Promise<MetricsListener> {
  const { registry } = ctx.metrics;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
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
