/**
 * Client side of bench/storage.ts, run in its own process (the server must not share its
 * event loop with the load). Runs one flow in CONCURRENCY loops for SECONDS and reports
 * completed flows per second over IPC.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

interface Job {
  flow: 'create' | 'pairs' | 'full';
  base: string;
  secretKey: string;
  storageDir: string;
  seconds: number;
  concurrency: number;
}

const body16 = Buffer.alloc(16, 1);
// node:http with keep-alive: much cheaper per request than fetch, so the client is not the
// bottleneck of the measurement.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function send(url: string, method: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function flows(job: Job) {
  const headers = { 'x-api-key': job.secretKey, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown) => {
    const r = await send(job.base + url, 'POST', headers, JSON.stringify(body));
    if (r.status >= 300) throw new Error(`${url} ${r.status}`);
    return ((JSON.parse(r.text) as { data?: Record<string, string> }).data ?? {});
  };
  const request = () => post('/api/storage/upload-request', { filename: 'r.bin', contentType: 'application/octet-stream', size: 16 });
  return {
    create: async () => void (await post('/api/data/bench', { title: 'x', n: 1 })),
    /** upload-request + confirm; the object is written straight to disk in between. */
    pairs: async () => {
      const { filePath } = await request();
      const file = path.join(job.storageDir, filePath!);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, body16);
      await post('/api/storage/upload-confirm', { filePath, size: 16 });
    },
    /** The whole three-step flow with a 16-byte signed PUT. */
    full: async () => {
      const { signedUrl, filePath } = await request();
      const put = await send(signedUrl!, 'PUT', { 'content-type': 'application/octet-stream' }, body16);
      if (put.status !== 200) throw new Error(`PUT ${put.status}`);
      await post('/api/storage/upload-confirm', { filePath, size: 16 });
    },
  };
}

process.once('message', async (job: Job) => {
  const fn = flows(job)[job.flow];
  const end = Date.now() + job.seconds * 1000;
  let done = 0;
  const loop = async () => {
    while (Date.now() < end) {
      await fn();
      done++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: job.concurrency }, loop));
  process.send!(done / ((Date.now() - t0) / 1000), () => process.exit(0));
});
