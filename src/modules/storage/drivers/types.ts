/** The one interface every storage backend implements (local disk, S3-compatible store). */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  size: number;
}

export interface PresignInput {
  path: string;
  size: number;
  contentType: string;
  /** Signing time (ctx.clock) and expiry of the URL. */
  signedAt: Date;
  expiresAt: Date;
}

export interface StorageDriver {
  readonly kind: 'local' | 's3';
  /** A URL the client PUTs the raw bytes to; bound to the path, size and content type. */
  presignPut(input: PresignInput): Promise<string>;
  /** A URL that GETs one stored object until `expiresAt` (private files' signed downloads). */
  presignGet(path: string, signedAt: Date, expiresAt: Date): Promise<string>;
  /** The stored object's size, or null when it does not exist (yet). */
  head(path: string): Promise<ObjectInfo | null>;
  /** A whole object, at most `maxBytes` (null: missing; 'too_large': bigger). For image transforms. */
  read(path: string, maxBytes: number): Promise<Buffer | null | 'too_large'>;
  /** The first `n` bytes of an object (fewer when it is shorter; null: missing). For magic numbers. */
  readHead(path: string, n: number): Promise<Buffer | null>;
  /** Stores a small object whole (an image derivative). */
  putBuffer(path: string, body: Buffer, contentType: string): Promise<void>;
  /**
   * Stores an object of unknown length from a stream, in bounded memory (local: a temp file
   * renamed into place; S3: a multipart upload of 8 MB parts). Nothing is left at `path` when
   * it fails. Returns the bytes stored. For stored backups (docs/backup.md).
   */
  writeStream(path: string, body: Readable, contentType: string): Promise<number>;
  /** A stored object as a stream (null: missing). */
  readStream(path: string): Promise<Readable | null>;
  /** Removes objects; missing ones are not an error. */
  remove(paths: string[]): Promise<void>;
  /** Removes every object under `<prefix>/` (a project's folder). */
  removePrefix(prefix: string): Promise<void>;
  /** The public address of a confirmed object, or null when the backend has none. */
  publicUrl(path: string): string | null;
  /** Why `publicUrl` is null, for the confirm response's `warning`. */
  readonly noPublicUrlWarning: string;
}

export const GENERIC_NO_URL_WARNING = 'Upload confirmed, but a public URL is unavailable.';
