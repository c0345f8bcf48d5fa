/**
 * `@plinth/client/files`: file storage (docs/storage.md). Presigned uploads (ask, PUT, confirm)
 * with progress; resumable uploads over tus 1.0 with progress that resume after a cut, a reload
 * or another node (the upload's address is kept in storage under the file's fingerprint); image
 * URLs with transformations; signed download URLs for private files; delete.
 */
import type { PlinthClient } from './index.js';
import type { SchemaMap } from './data.js';
import type { Transport } from './core.js';
import { PlinthError, errorOf } from './errors.js';
import { readBody } from './core.js';
import { localStorageStorage, memoryStorage, type TokenStorage } from './storage.js';

export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface UploadOptions {
  /** Default: the File's name, else `file`. */
  filename?: string;
  /** Default: the Blob's type, else `application/octet-stream`. */
  contentType?: string;
  /** Served only with a signed URL, the secret key or the owner's token. */
  private?: boolean;
  onProgress?(p: UploadProgress): void;
  signal?: AbortSignal;
}

export interface ResumableOptions extends UploadOptions {
  /** Bytes per PATCH (default 5 MiB). */
  chunkSize?: number;
  /** What identifies the file for resuming (default: name, size, type and modification time). */
  fingerprint?: string;
}

export interface UploadedFile {
  path: string;
  url: string | null;
  provider?: string;
  warning?: string;
}

export interface ImageTransform {
  width?: number;
  height?: number;
  fit?: 'cover' | 'contain' | 'inside';
  format?: 'webp' | 'avif' | 'jpeg' | 'png' | 'auto';
  quality?: number;
}

export interface FilesOptions {
  /** Where resumable uploads remember their address (default: localStorage in browsers, else memory). */
  storage?: TokenStorage;
}

type Body = Blob | ArrayBuffer | Uint8Array;
const sizeOf = (b: Body) => (b instanceof Blob ? b.size : b.byteLength);
const slice = (b: Body, from: number, to: number): Blob | Uint8Array =>
  b instanceof Blob ? b.slice(from, to) : b instanceof Uint8Array ? b.subarray(from, to) : new Uint8Array(b, from, to - from);
const b64 = (s: string) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));
const enc = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** PUT with upload progress: XMLHttpRequest in browsers (fetch cannot report it), fetch elsewhere. */
function put(url: string, body: Blob | Uint8Array, contentType: string, onProgress?: (loaded: number) => void, signal?: AbortSignal): Promise<Response | { ok: boolean; status: number; text: string }> {
  if (typeof XMLHttpRequest !== 'undefined' && onProgress) {
    return new Promise((resolve, reject) => {
      const x = new XMLHttpRequest();
      x.open('PUT', url);
      x.setRequestHeader('content-type', contentType);
      x.upload.onprogress = (e) => onProgress(e.loaded);
      x.onload = () => resolve({ ok: x.status >= 200 && x.status < 300, status: x.status, text: x.responseText });
      x.onerror = () => reject(new PlinthError('Network error during upload.', 0, 'network_error'));
      x.onabort = () => reject(new PlinthError('The upload was aborted.', 0, 'aborted'));
      signal?.addEventListener('abort', () => x.abort());
      x.send(body as XMLHttpRequestBodyInit);
    });
  }
  return fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: body as BodyInit, signal });
}

export class Files {
  private readonly t: Transport;
  private readonly resumes: TokenStorage;

  constructor(client: PlinthClient<SchemaMap>, opts: FilesOptions = {}) {
    this.t = client.transport;
    this.resumes = opts.storage ?? (typeof localStorage !== 'undefined' ? localStorageStorage() : memoryStorage());
  }

  /** The three-step upload (up to 10 MB): a signed URL, the bytes, the confirmation. */
  async upload(file: Body, opts: UploadOptions = {}): Promise<UploadedFile> {
    const size = sizeOf(file);
    const contentType = opts.contentType || (file instanceof Blob && file.type) || 'application/octet-stream';
    const filename = opts.filename ?? ((file as File).name || 'file');
    const req = await this.t.request<{ signedUrl: string; filePath: string }>({
      method: 'POST',
      path: '/api/storage/upload-request',
      body: { filename, contentType, size, ...(opts.private !== undefined && { private: opts.private }) },
      signal: opts.signal,
    });
    opts.onProgress?.({ loaded: 0, total: size });
    const body = file instanceof ArrayBuffer ? new Uint8Array(file) : file;
    const res = await put(req.signedUrl, body, contentType, (loaded) => opts.onProgress?.({ loaded, total: size }), opts.signal);
    if (!res.ok) {
      const text = 'text' in res && typeof res.text === 'string' ? res.text : await (res as Response).text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      throw errorOf(new Response(null, { status: res.status }), parsed);
    }
    opts.onProgress?.({ loaded: size, total: size });
    // 409 "not visible yet" is worth a few retries (the object store may lag).
    for (let i = 0; ; i++) {
      try {
        return await this.t.request<UploadedFile>({ method: 'POST', path: '/api/storage/upload-confirm', body: { filePath: req.filePath, size }, idempotent: true });
      } catch (err) {
        if (!(err instanceof PlinthError && err.status === 409 && i < 4)) throw err;
        await new Promise((r) => setTimeout(r, 300 * (i + 1)));
      }
    }
  }

  /**
   * A resumable upload (tus 1.0; up to the plan's resumable limit). Call it again with the same
   * file after a failure or a reload and it continues from the server's offset.
   */
  async uploadResumable(file: Body, opts: ResumableOptions = {}): Promise<UploadedFile> {
    const size = sizeOf(file);
    const filename = opts.filename ?? ((file as File).name || 'file');
    const type = opts.contentType || (file instanceof Blob && file.type) || 'application/octet-stream';
    const fp = `plinth.tus:${this.t.url}:${opts.fingerprint ?? [filename, size, type, (file as File).lastModified ?? ''].join(':')}`;
    const tus = { 'tus-resumable': '1.0.0' };
    const pathOf = (loc: string) => new URL(loc, this.t.url + '/').pathname;

    let path = (await this.resumes.get(fp)) ?? null;
    let offset = 0;
    if (path) {
      const head = await this.t.send({ method: 'HEAD', path, headers: tus, signal: opts.signal });
      if (head.ok) offset = Number(head.headers.get('upload-offset') ?? 0);
      else path = null;
    }
    if (!path) {
      const meta = [`filename ${b64(filename)}`, `filetype ${b64(type)}`];
      if (opts.private !== undefined) meta.push(`private ${b64(String(opts.private))}`);
      const res = await this.t.send({
        method: 'POST',
        path: '/api/storage/tus',
        headers: { ...tus, 'upload-length': String(size), 'upload-metadata': meta.join(',') },
        signal: opts.signal,
      });
      if (res.status !== 201) throw errorOf(res, await readBody(res));
      path = pathOf(res.headers.get('location')!);
      await this.resumes.set(fp, path);
    }
    const chunk = opts.chunkSize ?? 5 * 1024 * 1024;
    opts.onProgress?.({ loaded: offset, total: size });
    let last: Response | undefined;
    while (offset < size || !last) {
      const end = Math.min(size, offset + chunk);
      last = await this.t.send({
        method: 'PATCH',
        path,
        headers: { ...tus, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        rawBody: slice(file, offset, end) as BodyInit,
        signal: opts.signal,
        retries: 0,
      });
      if (last.status !== 204) throw errorOf(last, await readBody(last));
      offset = Number(last.headers.get('upload-offset') ?? end);
      opts.onProgress?.({ loaded: offset, total: size });
      if (size === 0) break;
    }
    await this.resumes.remove(fp);
    const filePath = decodeURIComponent(last.headers.get('plinth-file-path') ?? '');
    const url = last.headers.get('plinth-file-url');
    return { path: filePath, url: url ? decodeURIComponent(url) : null };
  }

  /** Abandons a resumable upload started for this fingerprint (its bytes and charge are freed). */
  async abandonResumable(fingerprint: string): Promise<void> {
    const fp = `plinth.tus:${this.t.url}:${fingerprint}`;
    const path = await this.resumes.get(fp);
    if (path) await this.t.send({ method: 'DELETE', path, headers: { 'tus-resumable': '1.0.0' } });
    await this.resumes.remove(fp);
  }

  /** The URL of a public file (local storage driver). */
  publicUrl(path: string): string {
    return `${this.t.url}/api/storage/public/${enc(path)}`;
  }

  /** The URL of a transformed image (`<img src>`): resized, re-encoded, cached by the server. */
  imageUrl(path: string, transform: ImageTransform = {}): string {
    return this.t.href(`/api/storage/render/${enc(path)}`, transform as Record<string, string | number>);
  }

  /** A signed, expiring URL of a (private) file, or of one transformation of it. */
  downloadUrl(path: string, opts: { expiresIn?: number; transform?: ImageTransform } = {}): Promise<{ url: string; expiresAt: string }> {
    return this.t.request({ method: 'POST', path: '/api/storage/download-url', body: { path, ...opts } });
  }

  /** Makes a file private (true), public (false) or the project's default (null). */
  async setPrivate(path: string, isPrivate: boolean | null): Promise<void> {
    await this.t.request({ method: 'PATCH', path: '/api/storage/file', body: { path, private: isPrivate } });
  }

  async delete(path: string): Promise<void> {
    await this.t.request({ method: 'DELETE', path: '/api/storage/file', body: { path } });
  }
}

export function files<S extends SchemaMap>(client: PlinthClient<S>, opts?: FilesOptions): Files {
  return new Files(client as unknown as PlinthClient<SchemaMap>, opts);
}
