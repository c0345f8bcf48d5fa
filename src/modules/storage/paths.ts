/**
 * File paths: `<projectId>/<id>_<sanitised name>`. `sanitiseFilename` makes any client name
 * safe as one path segment; `checkPath` accepts a client-supplied path only when it is exactly
 * a path this project could have been issued: another project's folder or a malformed path is 403
 * `Access denied.`, a name in its own folder that was never issued 404 `File not found.`.
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
 * Validates a path a client sent. 403: another project's prefix, `.`/`..` segments,
 * backslashes, control characters, percent-encoded anything (`%2f`, `%5c`, `%2e`...), any
 * number of segments but two. 404: a name of the own folder other than `<24-hex id>_<name>`.
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
  if (prefix !== projectId) throw StorageErrors.access_denied();
  // A plain name in the project's own folder that we could never have issued simply does not
  // exist (404: docs/storage.md), like an issued-looking one that is not stored.
  const fileId = name.slice(0, 24);
  const issued = isObjectId(fileId) && name[24] === '_' && name.length >= 26 && sanitiseFilename(name.slice(25)) === name.slice(25);
  if (!issued) throw StorageErrors.file_not_found();
  return { path, fileId };
}

/** Encodes a path for use in a URL (each segment percent-encoded, `/` kept). */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** The project folder of an issued path (its first segment). */
export function projectOfPath(path: string): string {
  return path.split('/')[0] ?? '';
}

/** Where a file's image derivatives are kept (a folder no client path can name: three segments). */
export const derivedPrefix = (projectId: string, fileId: string) => `${projectId}/_derived/${fileId}`;
