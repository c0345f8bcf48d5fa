/**
 * The node's tus server (@tus/server), built on first use: the file store over the local
 * driver's directory (a finished upload's bytes are already at the file's path) or the S3
 * store over the platform bucket (S3 multipart does the work; parts of 8 MiB). Nothing about an
 * upload lives on this node: its metadata is in upload_sessions (PgKvStore), its lease in
 * upload_locks (PgLocker), its quota and status in `files`, so any node resumes any upload.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DataStore, Upload } from '@tus/utils';
import type { Server, ServerOptions } from '@tus/server';
import type { AppContext } from '../../../context.js';
import { errorBody } from '../../../lib/envelope.js';
import { AppError } from '../../../lib/errors.js';
import { StorageErrors } from '../errors.js';
import { isPrivate } from '../file-settings.js';
import { encodePath } from '../paths.js';
import type { Caller } from '../caller.js';
import type { ResumableUploadsHandle } from './handle.js';
import { PgKvStore, reviveS3Metadata, reviveUpload } from './kv-store.js';
import { DEFAULT_LEASE, PgLocker, type LeaseTimings } from './locker.js';
import { deleteSession, hasSession } from './queries.js';
import { uploadIdOf } from './ids.js';
import { createUpload, finishUpload, newUploadPath, resolveUpload } from './service.js';

/** Unfinished uploads are swept after this (sweep.ts); clients see it as Upload-Expires. */
export const RESUMABLE_TTL_MS = 24 * 60 * 60 * 1000;
export const TUS_PATH = '/api/storage/tus';

type TusRequest = Parameters<NonNullable<ServerOptions['onUploadCreate']>>[0];

export class ResumableUploads implements ResumableUploadsHandle {
  private built: Promise<Server> | null = null;
  private readonly callers = new WeakMap<IncomingMessage, Caller>();
  /** The upload path a HEAD/PATCH was resolved to (pathOf) before tus sees the request. */
  private readonly paths = new WeakMap<IncomingMessage, string>();

  constructor(private ctx: AppContext, private lease: LeaseTimings = DEFAULT_LEASE) {}

  /**
   * Serves one tus request for an authenticated caller: a POST, or a HEAD/PATCH of `path`, the
   * upload its URL names as resolved for this caller by `pathOf` (without it, tus finds none).
   */
  async handle(req: IncomingMessage, res: ServerResponse, caller: Caller, path?: string): Promise<void> {
    const server = await this.server();
    this.callers.set(req, caller);
    if (path !== undefined) this.paths.set(req, path);
    jsonErrors(res);
    await server.handle(req, res);
  }

  /** The upload URL of an upload path: its fixed-length id (ids.ts), never its name. */
  urlOf(path: string): string {
    return `${this.ctx.config.publicUrl}${TUS_PATH}/${uploadIdOf(path)}`;
  }

  /** The path of the upload a URL's last segment names, if this caller may reach it (else 403/404). */
  async pathOf(caller: Caller, segment: string | undefined): Promise<string> {
    return (await resolveUpload(this.ctx, caller, segment)).path;
  }

  /**
   * Drops what tus keeps of a deleted or swept upload: its session and, on S3, its multipart
   * upload and `.info` object. Files that never were resumable have no session: nothing to do.
   */
  async forget(path: string): Promise<void> {
    if (!(await hasSession(this.ctx.db.admin, path))) return;
    const server = await this.server();
    // The S3 store aborts the multipart upload (a finished one is gone already: not found).
    await server.datastore.remove(path).catch(() => {});
    if (this.ctx.storage.platform.kind === 's3') await this.ctx.storage.platform.remove([`${path}.info`, `${path}.part`]);
    await deleteSession(this.ctx.db.admin, path);
  }

  private server(): Promise<Server> {
    this.built ??= this.build();
    return this.built;
  }

  private callerOf(req: TusRequest): Caller {
    const raw = nodeRequest(req);
    const caller = raw && this.callers.get(raw);
    if (!caller) throw StorageErrors.access_denied();
    return caller;
  }

  /** The upload path `handle` was given for a request (undefined: tus answers 404). */
  private pathFor(req: TusRequest): string | undefined {
    const raw = nodeRequest(req);
    return raw && this.paths.get(raw);
  }

  private async build(): Promise<Server> {
    const { Server } = await import('@tus/server');
    const ctx = this.ctx;
    const onError = (err: unknown) => ctx.log.warn({ err }, 'storage: resumable upload lease renewal failed');
    return new Server({
      path: TUS_PATH,
      datastore: await this.datastore(),
      locker: new PgLocker(ctx.db.admin, this.lease, onError),
      respectForwardedHeaders: false,
      disableTerminationForFinishedUploads: true,
      allowedOrigins: () => true,
      exposedHeaders: ['Plinth-File-Path', 'Plinth-File-Url'],
      namingFunction: (req, metadata) => newUploadPath(ctx, this.callerOf(req), metadata),
      generateUrl: (_req, { id }) => this.urlOf(id),
      // The URL's id was resolved, and the caller's access checked, by pathOf before tus ran.
      getFileIdFromRequest: (req) => this.pathFor(req),
      onUploadCreate: async (req, upload: Upload) => {
        await createUpload(ctx, this.callerOf(req), { path: upload.id, size: upload.size, metadata: upload.metadata });
        return {};
      },
      onUploadFinish: async (req, upload: Upload) => {
        const row = await finishUpload(ctx, this.callerOf(req), upload.id, upload.offset);
        const caller = this.callerOf(req);
        const url = isPrivate(caller.project, row) ? null : ctx.storage.platform.publicUrl(row.path);
        return { headers: { 'Plinth-File-Path': encodePath(row.path), ...(url && { 'Plinth-File-Url': url }) } };
      },
      onResponseError: (_req, err) => {
        if (err instanceof AppError) return { status_code: err.status, body: JSON.stringify(errorBody(err.message, err.code)) };
        if ('status_code' in err) {
          const mapped = tusError(err.status_code, err.body);
          return { status_code: mapped.status, body: JSON.stringify(errorBody(mapped.message, mapped.code)) };
        }
        ctx.log.error({ err }, 'storage: resumable upload failed');
        const failed = StorageErrors.storage_failed();
        return { status_code: failed.status, body: JSON.stringify(errorBody(failed.message, failed.code)) };
      },
    });
  }

  private async datastore(): Promise<DataStore> {
    const { storage } = this.ctx.config;
    const db = this.ctx.db.admin;
    if (storage.driver === 'local') {
      const { FileStore } = await import('@tus/file-store');
      return new FileStore({ directory: storage.localDir, configstore: new PgKvStore(db, reviveUpload), expirationPeriodInMilliseconds: RESUMABLE_TTL_MS });
    }
    const { S3Store } = await import('@tus/s3-store');
    const s3 = storage.s3;
    return new S3Store({
      partSize: 8 * 1024 * 1024,
      useTags: false,
      maxConcurrentPartUploads: 8,
      expirationPeriodInMilliseconds: RESUMABLE_TTL_MS,
      cache: new PgKvStore(db, reviveS3Metadata, { keepOnDelete: true }) as never,
      s3ClientConfig: {
        bucket: s3.bucket ?? '',
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: s3.forcePathStyle,
        credentials: { accessKeyId: s3.accessKeyId ?? '', secretAccessKey: s3.secretAccessKey ?? '' },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      },
    });
  }
}

/** The Node request under @tus/server's web Request. */
const nodeRequest = (req: TusRequest): IncomingMessage | undefined => (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;

/**
 * @tus/server writes every answer as text/plain; its error answers carry our envelope
 * (onResponseError), so they go out as JSON like every other error of the API.
 */
function jsonErrors(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => ServerResponse;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    if (status >= 400) {
      const i = rest.findIndex((a) => a !== null && typeof a === 'object');
      if (i >= 0) rest[i] = withJsonType(rest[i] as object);
      else res.setHeader('content-type', JSON_TYPE);
    }
    return writeHead(status, ...rest);
  }) as ServerResponse['writeHead'];
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers as Node's writeHead takes them (an object or a flat name, value list), typed JSON. */
function withJsonType(headers: object): object {
  if (!Array.isArray(headers)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() !== 'content-type') out[k] = v;
    return { ...out, 'content-type': JSON_TYPE };
  }
  const pairs: Array<[string, unknown]> = headers.every((h) => Array.isArray(h))
    ? (headers as Array<[string, unknown]>)
    : Array.from({ length: headers.length / 2 }, (_, i) => [String(headers[2 * i]), headers[2 * i + 1]] as [string, unknown]);
  return [...pairs.filter(([k]) => k.toLowerCase() !== 'content-type'), ['content-type', JSON_TYPE]].flat();
}

/**
 * A tus protocol error (@tus/server's `{ status_code, body }`) as an entry of the error
 * catalogue, so a tus client's mistake gets the same envelope and a stable code as every other
 * route (a 4xx never becomes a 5xx; tus's own 5xx stays storage_failed).
 */
function tusError(status: number, body: string): AppError {
  const message = body.trim() || undefined;
  switch (status) {
    case 403: return StorageErrors.access_denied(message);
    case 404: return StorageErrors.file_not_found(message);
    case 409: return StorageErrors.upload_offset_conflict(message);
    case 410: return StorageErrors.upload_gone(message);
    case 412: return StorageErrors.tus_resumable_required(message);
    case 413: return StorageErrors.file_too_large(message);
    default:
      return status >= 400 && status < 500 ? StorageErrors.resumable_request_invalid(message, undefined, { status }) : StorageErrors.storage_failed();
  }
}
