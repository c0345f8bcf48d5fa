/**
 * A minimal tus 1.0 client for tests (real HTTP, so a connection can be cut mid-body), and a
 * second API node over the same database and data directory as a test env.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { boot } from '../../../src/boot.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp, type App } from '../../../src/server.js';
import type { TestEnv } from '../../helpers/context.js';

export type Headers = Record<string, string>;
const TUS = { 'tus-resumable': '1.0.0' };

export interface Node {
  base: string;
  app: App;
  close(): Promise<void>;
}

export async function listen(app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** Another API node: its own process state, the env's database and data directory. */
export async function secondNode(env: TestEnv, extraEnv: Record<string, string> = {}): Promise<Node> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    PLINTH_DATA_DIR: env.config.dataDir,
    DATABASE_URL: env.databaseUrl,
    ...extraEnv,
  });
  const booted = await boot(config, { clock: env.clock, skipMigrations: true });
  const app = await buildApp(booted.ctx);
  const base = await listen(app);
  return { base, app, close: async () => { await app.close(); await booted.close(); } };
}

const meta = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',');

export async function create(base: string, headers: Headers, size: number | null, m: Record<string, string> = { filename: 'big.bin', filetype: 'application/octet-stream' }) {
  const lengthHeader: Headers = size === null ? { 'upload-defer-length': '1' } : { 'upload-length': String(size) };
  return fetch(`${base}/api/storage/tus`, { method: 'POST', headers: { ...TUS, ...headers, ...lengthHeader, 'upload-metadata': meta(m) } });
}

/** The upload id (last URL segment) of a creation's Location. */
export const idOf = (res: Response) => new URL(res.headers.get('location')!).pathname.split('/').pop()!;

export async function offset(base: string, headers: Headers, id: string): Promise<Response> {
  return fetch(`${base}/api/storage/tus/${id}`, { method: 'HEAD', headers: { ...TUS, ...headers } });
}

export async function patch(base: string, headers: Headers, id: string, at: number, bytes: Buffer): Promise<Response> {
  return fetch(`${base}/api/storage/tus/${id}`, {
    method: 'PATCH',
    headers: { ...TUS, ...headers, 'upload-offset': String(at), 'content-type': 'application/offset+octet-stream' },
    body: new Uint8Array(bytes),
  });
}

/**
 * A PATCH whose connection is cut after `sent` bytes of the declared rest: what a client
 * losing its network mid-upload does. Resolves once the socket is gone.
 */
export async function cutPatch(base: string, headers: Headers, id: string, at: number, rest: Buffer, sent: number): Promise<void> {
  const u = new URL(`${base}/api/storage/tus/${id}`);
  await new Promise<void>((resolve) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      method: 'PATCH',
      headers: { ...TUS, ...headers, 'upload-offset': String(at), 'content-type': 'application/offset+octet-stream', 'content-length': String(rest.length) },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(rest.subarray(0, sent), () => setTimeout(() => req.destroy(), 150));
  });
}

export async function offsetOf(base: string, headers: Headers, id: string): Promise<number> {
  const r = await offset(base, headers, id);
  if (r.status !== 200) throw new Error(`HEAD ${r.status}`);
  return Number(r.headers.get('upload-offset'));
}

/** Abandons an upload (tus termination). */
export async function terminate(base: string, headers: Headers, id: string): Promise<Response> {
  return fetch(`${base}/api/storage/tus/${id}`, { method: 'DELETE', headers: { ...TUS, ...headers } });
}

/** The file path of an upload (tests know the id's layout, resumable/ids.ts: project id + file id). */
export async function uploadPath(env: TestEnv, id: string): Promise<string> {
  const row = await env.ctx.db.admin.selectFrom('files').select('path').where('project_id', '=', id.slice(0, 24)).where('id', '=', id.slice(24)).executeTakeFirstOrThrow();
  return row.path;
}
