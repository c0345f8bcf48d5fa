/**
 * Upload flows as autocannon request sequences (run by bench/lib/load-child.ts), so storage is
 * driven by the same load generator as the data API it is compared with. Each connection
 * loops through the sequence; `context` carries the upload's path and URL between steps.
 *   pairs: upload-request, then confirm; the object is written straight into the local
 *          backend's folder in between (standing in for the PUT).
 *   full:  upload-request, a 16-byte PUT to the signed URL, confirm.
 */
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type UploadScenario = 'pairs' | 'full';

interface Context {
  filePath?: string;
  signedUrl?: string;
}

const SIZE = 16;
const body16 = Buffer.alloc(SIZE, 1);
const madeDirs = new Set<string>();

/** ext4 allows 65 000 links to one file; a fast machine uploads more than that in a run. */
const LINKS_PER_SOURCE = 60_000;
let linked = 0;

/**
 * Puts the object where the local backend keeps it, as a hard link to a 16-byte file: a
 * single system call, so the stand-in for the PUT costs the shared machine as little as it can
 * (the project folder and each source file, per load process, are made once).
 */
function putDirectly(storageDir: string, filePath: string): void {
  const file = path.join(storageDir, filePath);
  const dir = path.dirname(file);
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  const source = path.join(storageDir, `.bench-object-${process.pid}-${Math.floor(linked / LINKS_PER_SOURCE)}`);
  if (linked++ % LINKS_PER_SOURCE === 0) writeFileSync(source, body16);
  linkSync(source, file);
}

export function uploadRequests(scenario: UploadScenario, storageDir: string): object[] {
  const request = {
    method: 'POST',
    path: '/api/storage/upload-request',
    body: JSON.stringify({ filename: 'r.bin', contentType: 'application/octet-stream', size: SIZE }),
    onResponse: (status: number, body: string, context: Context) => {
      if (status !== 200) throw new Error(`upload-request answered ${status}: ${body}`);
      const data = (JSON.parse(body) as { data: { filePath: string; signedUrl: string } }).data;
      context.filePath = data.filePath;
      context.signedUrl = data.signedUrl;
      if (scenario === 'pairs') putDirectly(storageDir, data.filePath);
    },
  };
  const put = {
    setupRequest: (req: object, context: Context) => {
      const u = new URL(context.signedUrl!);
      return { ...req, method: 'PUT', path: u.pathname + u.search, body: body16, headers: { 'content-type': 'application/octet-stream' } };
    },
  };
  const confirm = {
    method: 'POST',
    path: '/api/storage/upload-confirm',
    setupRequest: (req: object, context: Context) => ({ ...req, body: JSON.stringify({ filePath: context.filePath, size: SIZE }) }),
  };
  return scenario === 'pairs' ? [request, confirm] : [request, put, confirm];
}
