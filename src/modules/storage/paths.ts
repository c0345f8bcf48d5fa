/**
 * File paths: `<projectId>/<id>_<sanitised name>`. `sanitiseFilename` makes any client name
 * safe as one path segment; `checkPath` accepts a client-supplied path only when it is exactly
 * a path this project could have been issued (anything else: 403 `Access denied.`).
 */
import { isObjectId } from '../../lib/ids.js';
import { StorageErrors } from './errors.js';

const MAX_NAME_BYTES = 150;

const isControl = (ch: string) => {
  const n = ch.codePointAt(0) ?? 0;
  return n < 0x20 || (n >= 0x7f && n <= 0x9f);
};

/** True when the text holds a C0/C1 control character (NUL, CR, LF, DEL...). */
export function hasControlChars(text: string): boolean {
  return Array.from(text).some(isControl);
}

/** Whitespace runs → `_`; separators, control characters and reserved URL characters dropped. */
export function sanitiseFilename(name: string): string {
  let out = name
    .normalize('NFC')
    .replace(/\s+/g, '_')
    .split('')
    .filter((ch) => !isControl(ch))
    .join('')
    .replace(/[/\\]/g, '')
    .replace(/[?#%*:|"<>]/g, '')
    .replace(/^\.+/, '');
  while (Buffer.byteLength(out) > MAX_NAME_BYTES) out = Array.from(out).slice(0, -1).join('');
  return out || 'file';
}

export function buildPath(projectId: string, fileId: string, filename: string): string {
  return `${projectId}/${fileId}_${sanitiseFilename(filename)}`;
}

export interface ParsedPath {
  path: string;
  fileId: string;
}

/**
 * Validates a path a client sent. Rejected: another project's prefix, `.`/`..` segments,
 * backslashes, control characters, percent-encoded anything (`%2f`, `%5c`, `%2e`...), and
 * any shape other than `<projectId>/<24-hex id>_<name>`.
 */
export function checkPath(projectId: string, raw: unknown): ParsedPath {
  if (typeof raw !== 'string') throw StorageErrors.access_denied();
  const path = raw.replace(/^\/+/, '');
  if (hasControlChars(path) || /[\\%]/.test(path)) throw StorageErrors.access_denied();
  const segments = path.split('/');
  if (segments.length !== 2 || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw StorageErrors.access_denied();
  }
  const [prefix, name] = segments as [string, string];
  const fileId = name.slice(0, 24);
  if (prefix !== projectId || !isObjectId(fileId) || name[24] !== '_' || name.length < 26) {
    throw StorageErrors.access_denied();
  }
  if (sanitiseFilename(name.slice(25)) !== name.slice(25)) throw StorageErrors.access_denied();
  return { path, fileId };
}

/** Encodes a path for use in a URL (each segment percent-encoded, `/` kept). */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
