/**
 * An S3-compatible store on 127.0.0.1 for tests: s3rver (the protocol: HEAD/PUT/GET/DELETE,
 * ListObjectsV2, DeleteObjects) behind a small front that does what s3rver skips — it checks
 * SigV4 presigned URLs (expiry against an injectable clock, and the signature over every
 * signed header, so a wrong Content-Length or Content-Type is refused like AWS does) and the
 * access key of header-signed requests. The real @aws-sdk clients talk to it unchanged.
 * s3rver initiates, uploads and completes multipart uploads but knows neither ListParts nor
 * AbortMultipartUpload (which @tus/s3-store calls): the front answers those two from the parts
 * it saw go through, and a completed or aborted upload is then NoSuchUpload, as on AWS.
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

export const FAKE_KEY = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

class Sha256 {
  private h;
  constructor(secret?: string | Uint8Array) {
    this.h = secret ? createHmac('sha256', secret) : createHash('sha256');
  }
  update(d: string | Uint8Array): void {
    this.h.update(d);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
  reset(): void {}
}

export interface FakeS3 {
  endpoint: string;
  region: string;
  client: S3Client;
  createBucket(name: string): Promise<void>;
  /** Requests the front refused (status and reason), for assertions. */
  refused: Array<{ status: number; reason: string }>;
  close(): Promise<void>;
}

const AUTH_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Content-Sha256'];

function amzDate(s: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return new Date(NaN);
  return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
}

async function checkPresigned(req: http.IncomingMessage, url: URL, region: string, now: Date): Promise<string | null> {
  const q = Object.fromEntries(url.searchParams);
  const date = amzDate(q['X-Amz-Date'] ?? '');
  const expires = Number(q['X-Amz-Expires']);
  if (!Number.isFinite(date.getTime()) || !(expires > 0)) return 'malformed presigned URL';
  if (now.getTime() > date.getTime() + expires * 1000) return 'Request has expired';
  if (!(q['X-Amz-Credential'] ?? '').startsWith(`${FAKE_KEY.accessKeyId}/`)) return 'InvalidAccessKeyId';
  const signed = (q['X-Amz-SignedHeaders'] ?? '').split(';').filter(Boolean);
  const headers: Record<string, string> = {};
  for (const h of signed) headers[h] = String(req.headers[h] ?? '');
  const query = { ...q };
  for (const k of AUTH_PARAMS) delete query[k];
  // Re-sign the request as received, the way the SDK's presigner signs: equal only if nothing changed.
  const signer = new S3RequestPresigner({ region, credentials: FAKE_KEY, sha256: Sha256 as never });
  const out = await signer.presign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers },
    { signingDate: date, expiresIn: expires, signableHeaders: new Set(signed) },
  );
  return out.query?.['X-Amz-Signature'] === q['X-Amz-Signature'] ? null : 'SignatureDoesNotMatch';
}

interface Part {
  number: number;
  etag: string;
  size: number;
}

const xmlError = (res: http.ServerResponse, status: number, code: string) =>
  res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);

/** ListParts and Abort answered by the front; part uploads and completions recorded as they pass. */
function multipart() {
  const uploads = new Map<string, Map<number, Part>>();
  const done = new Set<string>();
  return {
    /** True when the front answered the request itself. */
    answer(req: http.IncomingMessage, url: URL, res: http.ServerResponse): boolean {
      const id = url.searchParams.get('uploadId');
      if (!id || url.searchParams.has('partNumber')) return false;
      if (req.method === 'GET') {
        const parts = uploads.get(id);
        if (!parts || done.has(id)) {
          req.resume();
          xmlError(res, 404, 'NoSuchUpload');
          return true;
        }
        const items = [...parts.values()].sort((x, y) => x.number - y.number)
          .map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${p.etag}</ETag><Size>${p.size}</Size><LastModified>${new Date().toISOString()}</LastModified></Part>`);
        res.writeHead(200, { 'content-type': 'application/xml' }).end(
          `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult><UploadId>${id}</UploadId><IsTruncated>false</IsTruncated>${items.join('')}</ListPartsResult>`,
        );
        return true;
      }
      if (req.method === 'DELETE') {
        req.resume();
        if (!uploads.has(id) || done.has(id)) xmlError(res, 404, 'NoSuchUpload');
        else {
          done.add(id);
          res.writeHead(204).end();
        }
        return true;
      }
      return false;
    },
    /** Called with the upstream answer of a request the front passed on. */
    passed(req: http.IncomingMessage, url: URL, status: number, etag: string | undefined, size: number, body: string): void {
      if (status >= 300) return;
      if (req.method === 'POST' && url.searchParams.has('uploads')) {
        const m = /<UploadId>([^<]+)<\/UploadId>/.exec(body);
        if (m) uploads.set(m[1]!, new Map());
      }
      const id = url.searchParams.get('uploadId');
      if (!id) return;
      if (req.method === 'PUT' && url.searchParams.has('partNumber')) {
        const number = Number(url.searchParams.get('partNumber'));
        if (!uploads.has(id)) uploads.set(id, new Map());
        uploads.get(id)!.set(number, { number, etag: etag ?? '""', size });
      }
      if (req.method === 'POST') done.add(id);
    },
  };
}

export async function startFakeS3(opts: { now?: () => Date; region?: string } = {}): Promise<FakeS3> {
  const region = opts.region ?? 'us-east-1';
  const now = opts.now ?? (() => new Date());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plinth-s3-'));
  const backend = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [] });
  const { port: backendPort } = (await backend.run()) as AddressInfo;
  const refused: FakeS3['refused'] = [];
  const parts = multipart();
  const front = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const reason = url.searchParams.has('X-Amz-Signature')
      ? await checkPresigned(req, url, region, now())
      : /Credential=S3RVER\//.test(String(req.headers.authorization ?? '')) ? null : 'AccessDenied';
    if (reason) {
      refused.push({ status: 403, reason });
      req.resume();
      res.writeHead(403, { 'content-type': 'application/xml' }).end(`<Error><Code>AccessDenied</Code><Message>${reason}</Message></Error>`);
      return;
    }
    if (parts.answer(req, url, res)) return;
    let size = 0;
    req.on('data', (chunk: Buffer) => (size += chunk.length));
    const upstream = http.request({ host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
      const watch = req.method === 'POST' && url.searchParams.has('uploads');
      if (!watch) parts.passed(req, url, r.statusCode ?? 502, r.headers.etag, size, '');
      res.writeHead(r.statusCode ?? 502, r.headers);
      if (!watch) {
        r.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        const body = Buffer.concat(chunks);
        parts.passed(req, url, r.statusCode ?? 502, undefined, 0, body.toString());
        res.end(body);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: FAKE_KEY, requestChecksumCalculation: 'WHEN_REQUIRED' });
  return {
    endpoint,
    region,
    client,
    refused,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async close() {
      client.destroy();
      await new Promise((r) => front.close(r));
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
