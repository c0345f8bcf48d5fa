/** The child side of bench/lib/load.ts: runs autocannon with the options it is sent. */
import { createRequire } from 'node:module';
import type { LoadOptions, LoadResult } from './load.js';
import { uploadRequests } from './upload-scenarios.js';

interface Raw {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, res: Raw) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

process.once('message', (opts: LoadOptions) => {
  const pick = () => opts.variants[Math.floor(Math.random() * opts.variants.length)]!;
  // a variant's own headers (e.g. a key) join the common ones instead of replacing them
  const request = (r: { headers?: Record<string, string> }) => {
    const v = pick();
    return { ...r, ...v, headers: { ...r.headers, ...v.headers } };
  };
  autocannon(
    {
      url: opts.url,
      connections: opts.connections ?? 50,
      duration: opts.seconds ?? 6,
      headers: { 'content-type': 'application/json', ...opts.headers },
      requests: opts.uploads
        ? uploadRequests(opts.uploads.scenario, opts.uploads.storageDir)
        : [{ setupRequest: request }],
    },
    (err, res) => {
      if (err) throw err;
      const out: LoadResult = { rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, non2xx: res.non2xx, errors: res.errors };
      process.send!(out, () => process.exit(0));
    },
  );
});
