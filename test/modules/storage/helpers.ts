/** Shared steps of the storage tests: the three-step upload through the app (inject). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { vi } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';

export type Headers = Record<string, string>;

/**
 * The SQL statements the admin connection pool runs while `fn` runs that read `table` (public
 * serving reads files and projects there).
 */
export async function statementsReading<T>(env: TestEnv, table: string, fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const reads = new RegExp(`\\b(from|join)\\s+"${table}"`, 'i');
  const executor = env.ctx.db.admin.getExecutor();
  const original = executor.executeQuery.bind(executor);
  const spy = vi.spyOn(executor, 'executeQuery').mockImplementation((query, ...rest) => {
    if (reads.test(query.sql)) statements.push(query.sql);
    return original(query, ...rest);
  });
  try {
    return { result: await fn(), statements };
  } finally {
    spy.mockRestore();
  }
}

export async function requestUpload(env: TestEnv, headers: Headers, body: Record<string, unknown>) {
  return env.app.inject({ method: 'POST', url: '/api/storage/upload-request', headers, payload: body });
}

/** PUTs bytes to a signed URL of the local backend through inject (path + query of the URL). */
export async function putSigned(env: TestEnv, signedUrl: string, bytes: Buffer, headers: Headers = {}) {
  const u = new URL(signedUrl);
  return env.app.inject({
    method: 'PUT',
    url: u.pathname + u.search,
    headers: { 'content-type': 'application/octet-stream', ...headers },
    payload: bytes,
  });
}

export async function confirm(env: TestEnv, headers: Headers, filePath: string, size: number) {
  return env.app.inject({ method: 'POST', url: '/api/storage/upload-confirm', headers, payload: { filePath, size } });
}

export async function deleteFile(env: TestEnv, headers: Headers, path: unknown) {
  return env.app.inject({ method: 'DELETE', url: '/api/storage/file', headers, payload: { path } });
}

/** An upload-request that must succeed: the signed URL and the path. */
export async function grantUpload(env: TestEnv, headers: Headers, size: number, contentType = 'application/octet-stream', filename = 'f.bin') {
  const req = await requestUpload(env, headers, { filename, contentType, size });
  if (req.statusCode !== 200) throw new Error(`upload-request ${req.statusCode}: ${req.body}`);
  return req.json().data as { signedUrl: string; filePath: string };
}

/** request → PUT → confirm; returns the confirm response and the path. */
export async function upload(env: TestEnv, headers: Headers, name: string, bytes: Buffer, contentType = 'application/octet-stream') {
  const { signedUrl, filePath } = await grantUpload(env, headers, bytes.length, contentType, name);
  const put = await putSigned(env, signedUrl, bytes, { 'content-type': contentType });
  if (put.statusCode !== 200) throw new Error(`PUT ${put.statusCode}: ${put.body}`);
  const res = await confirm(env, headers, filePath, bytes.length);
  return { res, filePath, signedUrl };
}

export async function storageUsed(env: TestEnv, projectId: string): Promise<number> {
  const row = await env.ctx.db.admin
    .selectFrom('usage_counters')
    .select('used')
    .where('subject_id', '=', projectId)
    .where('metric', '=', 'storage_bytes')
    .executeTakeFirst();
  return Number(row?.used ?? 0);
}

export const MB = 1024 * 1024;

/** Whether an object path exists in the local backend's directory. */
export const onDisk = (env: TestEnv, objectPath: string) => existsSync(path.join(env.config.storage.localDir, objectPath));
