/**
 * The tus headers of a request, checked before @tus/server sees it: @tus/server answers a
 * malformed header (`Upload-Length: abc`, `Upload-Offset: -1`, bad `Upload-Metadata`, a PATCH's
 * Content-Type) in plain text without its error hook, and a missing `Upload-Offset` as a 403.
 * Here each is a 400 in the API's envelope with a stable code (the same rules as tus 1.0 and
 * @tus/server's validators: integers written as plain non-negative decimals).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { StorageErrors } from '../errors.js';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);

/** A non-negative integer as tus writes it: decimal digits, no sign, no leading zeros, safe. */
function isByteCount(v: string): boolean {
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 && String(n) === v;
}

export async function checkTusHeaders(method: string, headers: IncomingHttpHeaders): Promise<void> {
  const invalid = (message: string) => StorageErrors.resumable_request_invalid(message);
  const length = one(headers['upload-length']);
  const offset = one(headers['upload-offset']);
  const defer = one(headers['upload-defer-length']);
  const metadata = one(headers['upload-metadata']);
  if (length !== undefined && !isByteCount(length)) throw invalid('Upload-Length must be a non-negative integer number of bytes.');
  if (offset !== undefined && !isByteCount(offset)) throw invalid('Upload-Offset must be a non-negative integer number of bytes.');
  if (defer !== undefined && defer !== '1') throw invalid('Upload-Defer-Length, when sent, must be 1.');
  if (metadata !== undefined) {
    const { Metadata } = await import('@tus/server'); // loaded on first use, as the tus server
    try {
      Metadata.parse(metadata);
    } catch {
      throw invalid('Upload-Metadata must be comma-separated `key base64value` pairs with unique keys.');
    }
  }
  if (method === 'POST') {
    if (length !== undefined && defer !== undefined) throw invalid('Send Upload-Length or Upload-Defer-Length, not both.');
    if (length === undefined && defer === undefined) throw StorageErrors.upload_length_required();
  }
  if (method === 'PATCH') {
    if (offset === undefined) throw invalid('Upload-Offset is required: the offset the body starts at (the HEAD answer).');
    if (one(headers['content-type']) !== 'application/offset+octet-stream') throw StorageErrors.resumable_request_invalid('A PATCH body is sent as application/offset+octet-stream.', undefined, { status: 415 });
  }
}
