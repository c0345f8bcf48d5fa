/**
 * Signed upload URLs of the local backend. The service signs, with HMAC-SHA256 under a key
 * derived (HKDF) from ENCRYPTION_KEY, the method, the path, the expiry, the declared size and
 * the declared content type; the PUT handler recomputes and compares in constant time.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { encodePath } from './paths.js';

export const SIGNED_URL_TTL_SECONDS = 600;

export interface UploadGrant {
  path: string;
  /** Unix seconds. */
  expires: number;
  size: number;
  contentType: string;
}

export function deriveUrlKey(encryptionKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', encryptionKey, 'plinth', 'storage-signed-url-v1', 32));
}

function mac(key: Buffer, method: string, g: UploadGrant): Buffer {
  const text = [method, g.path, String(g.expires), String(g.size), normaliseType(g.contentType)].join('\n');
  return createHmac('sha256', key).update(text).digest();
}

/** Media types compare case-insensitively and without blanks around parameters. */
export function normaliseType(value: string): string {
  return value.trim().toLowerCase().replace(/\s*;\s*/g, ';');
}

export function signedUploadUrl(baseUrl: string, key: Buffer, g: UploadGrant): string {
  const q = new URLSearchParams({
    expires: String(g.expires),
    size: String(g.size),
    ct: g.contentType,
    sig: mac(key, 'PUT', g).toString('base64url'),
  });
  return `${baseUrl}/api/storage/objects/${encodePath(g.path)}?${q.toString()}`;
}

export type GrantCheck = 'ok' | 'invalid' | 'expired';

/**
 * What a download URL grants: GET of one file until `expires`, and with `transform` only that
 * rendering of it (the canonical transform parameters). Signed over a text that cannot be read
 * as an upload grant's (another method and shape), so no URL of one kind works as the other.
 */
export interface DownloadGrant {
  path: string;
  /** Unix seconds. */
  expires: number;
  transform?: string;
}

function downloadMac(key: Buffer, g: DownloadGrant): Buffer {
  const text = ['GET', g.path, String(g.expires), g.transform === undefined ? 'download' : `transform:${g.transform}`].join('\n');
  return createHmac('sha256', key).update(text).digest();
}

/** The `expires` and `sig` query parameters of a download URL. */
export function signDownload(key: Buffer, g: DownloadGrant): { expires: string; sig: string } {
  return { expires: String(g.expires), sig: downloadMac(key, g).toString('base64url') };
}

/** Verifies a download grant read back from a request; the signature is checked before the expiry. */
export function verifyDownload(key: Buffer, g: DownloadGrant, sig: string, nowMs: number): GrantCheck {
  const given = Buffer.from(sig, 'base64url');
  const expected = downloadMac(key, g);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return g.expires * 1000 < nowMs ? 'expired' : 'ok';
}

/** Verifies a grant read back from a request; the signature is checked before the expiry. */
export function verifyGrant(key: Buffer, method: string, g: UploadGrant, sig: string, nowMs: number): GrantCheck {
  const given = Buffer.from(sig, 'base64url');
  const expected = mac(key, method, g);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return g.expires * 1000 < nowMs ? 'expired' : 'ok';
}

/** A local-backend download URL: the public file route plus `expires` and `sig` (and `t` for a transform). */
export function signedDownloadUrl(baseUrl: string, key: Buffer, g: DownloadGrant, query: Record<string, string> = {}): string {
  const q = new URLSearchParams({ ...query, ...signDownload(key, g) });
  return `${baseUrl}/api/storage/public/${encodePath(g.path)}?${q.toString()}`;
}
