/**
 * Which driver serves a project: its own bucket when one is configured (provider `external`,
 * not charged to the platform quota), else the platform backend chosen by STORAGE_DRIVER
 * (provider `internal`). Drivers are built once and reused.
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.js';
import type { AppContext } from '../../context.js';
import { NETWORK_ERROR_CODES } from '../../lib/availability.js';
import { decrypt, type Encrypted } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { isPublicHost } from '../../lib/public-network.js';
import type { ProjectRecord } from '../projects/cache.js';
import { LocalDriver } from './drivers/local.js';
import { S3Driver, type S3Settings } from './drivers/s3.js';
import type { StorageDriver } from './drivers/types.js';
import { StorageErrors, storageUnreachable } from './errors.js';
import { deriveUrlKey } from './signing.js';
import type { FileProvider } from './tables.js';

/** Stored in projects.settings.storage; the secret key lives in projects.secrets. */
export interface BucketSettings {
  bucket: string;
  region: string;
  endpoint?: string;
  accessKeyId: string;
  forcePathStyle?: boolean;
  publicUrl?: string;
}

export const BUCKET_SECRET = 'storageSecretAccessKey';

export interface Backend {
  driver: StorageDriver;
  provider: FileProvider;
}

/** S3 drivers of projects' own buckets, by project + settings + sealed secret. */
const external = new LRUCache<string, StorageDriver>({ max: 500 });

/** The platform's own store (STORAGE_DRIVER), built once at start-up (src/boot.ts). */
export function createPlatformDriver(config: Config): StorageDriver {
  const { storage, publicUrl, encryptionKey } = config;
  if (storage.driver === 'local') return new LocalDriver(storage.localDir, publicUrl, deriveUrlKey(encryptionKey));
  const s3 = storage.s3;
  if (!s3.bucket || !s3.accessKeyId || !s3.secretAccessKey) {
    throw new Error('STORAGE_DRIVER=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  }
  return new S3Driver({ ...s3, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
}

export const platformDriver = (ctx: AppContext): StorageDriver => ctx.storage.platform;

/** The local driver when the platform backend is local (the public file and PUT routes need it). */
export function localDriver(ctx: AppContext): LocalDriver | null {
  const d = platformDriver(ctx);
  return d instanceof LocalDriver ? d : null;
}

export function bucketSettingsOf(project: Pick<ProjectRecord, 'settings'>): BucketSettings | null {
  const s = project.settings.storage as Partial<BucketSettings> | undefined | null;
  return s && typeof s.bucket === 'string' && s.bucket ? (s as BucketSettings) : null;
}

/** A project bucket endpoint on a non-public host, where those are not allowed (SSRF guard). */
export function isRefusedEndpoint(ctx: AppContext, endpoint: URL): boolean {
  return !ctx.config.storage.allowPrivateEndpoints && !isPublicHost(endpoint.hostname);
}

function externalDriver(ctx: AppContext, project: Pick<ProjectRecord, 'id' | 'settings' | 'secrets'>): StorageDriver | null {
  const settings = bucketSettingsOf(project);
  if (!settings) return null;
  const sealed = project.secrets[BUCKET_SECRET] as Encrypted | undefined;
  // Keyed by the sealed secret: a cached driver was built from this very ciphertext, so the
  // secret is decrypted only on a miss (not on every upload-request and confirm).
  const cacheKey = JSON.stringify([project.id, settings, sealed ?? null]);
  let d = external.get(cacheKey);
  if (!d) {
    const secret = decrypt(ctx.config.encryptionKey, sealed);
    if (!secret) throw StorageErrors.storage_failed('The project bucket credentials cannot be read. Save them again.');
    if (settings.endpoint && isRefusedEndpoint(ctx, new URL(settings.endpoint))) {
      throw StorageErrors.storage_failed('The project bucket endpoint is not a public host.');
    }
    const s3: S3Settings = { ...settings, secretAccessKey: secret };
    d = new S3Driver(s3, { publicOnly: !ctx.config.storage.allowPrivateEndpoints });
    external.set(cacheKey, d);
  }
  return d;
}

/**
 * The store did not answer: refused or broken connection, no such host, a timeout, or a 5xx of
 * its own (S3's 503 SlowDown among them). A store that answered 4xx, or an address the SSRF
 * guard refused, is no outage.
 */
function isStoreUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code)) return true;
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return true;
  return (e.$metadata?.httpStatusCode ?? 0) >= 500;
}

/**
 * A call to a storage backend. Its failure is the backend's, not the client's: a store that
 * cannot be reached is a 503 `storage_unavailable` with Retry-After (logged as a warning, the
 * reason only); any other failure goes to the log in full and the client gets 502
 * `storage_failed`. Our own errors pass through.
 */
export async function storeCall<T>(ctx: AppContext, what: string, detail: Record<string, unknown>, call: () => Promise<T>, message?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (isStoreUnreachable(err)) {
      const { code, name, message: reason } = err as { code?: string; name?: string; message?: string };
      ctx.log.warn({ ...detail, reason: `${code ?? name}: ${reason}` }, `storage ${what}: the store cannot be reached`);
      throw storageUnreachable();
    }
    ctx.log.error({ err, ...detail }, `storage ${what} failed`);
    throw StorageErrors.storage_failed(message);
  }
}

/** The backend new uploads of this project go to. */
export function backendFor(ctx: AppContext, project: Pick<ProjectRecord, 'id' | 'settings' | 'secrets'>): Backend {
  const ext = externalDriver(ctx, project);
  return ext ? { driver: ext, provider: 'external' } : { driver: platformDriver(ctx), provider: 'internal' };
}

/** The backend an existing file lives on (null: its external bucket is no longer configured). */
export function backendOfFile(ctx: AppContext, project: Pick<ProjectRecord, 'id' | 'settings' | 'secrets'>, provider: FileProvider): StorageDriver | null {
  return provider === 'internal' ? platformDriver(ctx) : externalDriver(ctx, project);
}
