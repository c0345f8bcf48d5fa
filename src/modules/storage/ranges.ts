/** HTTP Range (single byte range) and conditional-request helpers for public file serving. */

export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parses a Range header against a file size: a range, 'unsatisfiable', or null for "serve the
 * whole file" (no header, another unit, or several ranges, which RFC 9110 lets us ignore).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!m) return header.includes(',') || !/^bytes=/i.test(header) ? null : 'unsatisfiable';
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return 'unsatisfiable';
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

export function etagOf(fileId: string, size: number, modified: Date): string {
  return `"${fileId}-${size.toString(16)}-${Math.floor(modified.getTime() / 1000).toString(16)}"`;
}

/** True when the client's cached copy is still current (answer 304). */
export function notModified(headers: Record<string, string | string[] | undefined>, etag: string, modified: Date): boolean {
  const inm = headers['if-none-match'];
  if (typeof inm === 'string') {
    return inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  }
  const ims = headers['if-modified-since'];
  if (typeof ims === 'string') {
    const since = Date.parse(ims);
    return Number.isFinite(since) && Math.floor(modified.getTime() / 1000) <= Math.floor(since / 1000);
  }
  return false;
}

/** If-Range: the range applies only when the validator still matches. */
export function rangeStillValid(ifRange: string | undefined, etag: string, modified: Date): boolean {
  if (!ifRange) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === etag;
  const d = Date.parse(ifRange);
  return Number.isFinite(d) && Math.floor(modified.getTime() / 1000) <= Math.floor(d / 1000);
}
