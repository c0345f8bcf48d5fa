/**
 * The project archive (format version 1): gzip-compressed NDJSON, one record per line, in this
 * order: a header, the collections, their documents, the end users, the file records, an end
 * record with the counts (a missing end means a truncated archive). Secrets never enter it:
 * no API keys, JWT secret, provider keys, sessions or one-time codes; end users' password
 * hashes do (argon2id), so users can sign in after a restore.
 */
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { CompoundIndex, FieldDef, RlsConfig } from '../../db/types.js';
import { isObjectId } from '../../lib/ids.js';
import { jsonTooDeep } from '../../lib/json-depth.js';
import { isPlainObject } from '../../lib/objects.js';
import { BackupErrors } from './errors.js';

export const ARCHIVE_FORMAT = 'plinth-project-archive';
export const ARCHIVE_VERSION = 1;

export interface HeaderRecord {
  type: 'header';
  format: typeof ARCHIVE_FORMAT;
  version: number;
  project: { id: string; name: string };
  exportedAt: string;
}

export interface CollectionRecord {
  type: 'collection';
  name: string;
  fields: FieldDef[];
  rls: RlsConfig;
  indexes: CompoundIndex[];
  /** Full-text search language (absent in archives from before it existed: simple). */
  searchLanguage?: string;
  /** Streams changes to realtime subscribers (absent in archives from before it existed: off). */
  realtime?: boolean;
  createdAt: string;
}

export interface DocumentRecord {
  type: 'document';
  collection: string;
  id: string;
  ownerId: string | null;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export interface UserRecord {
  type: 'user';
  id: string;
  email: string;
  passwordHash: string;
  emailVerified: boolean;
  data: Record<string, unknown>;
  githubId: string | null;
  googleId: string | null;
  authProviders: string[];
  createdAt: string;
  updatedAt: string;
  disabledAt: string | null;
}

export interface FileRecord {
  type: 'file';
  id: string;
  /** The file's name within the project's folder (`<id>_<name>`); the folder is the project's own. */
  name: string;
  ownerId: string | null;
  size: number;
  contentType: string;
  provider: 'internal' | 'external';
  createdAt: string;
  confirmedAt: string | null;
}

export interface Counts {
  collections: number;
  documents: number;
  users: number;
  files: number;
}

export interface EndRecord {
  type: 'end';
  counts: Counts;
}

export type ArchiveRecord = HeaderRecord | CollectionRecord | DocumentRecord | UserRecord | FileRecord | EndRecord;

/** The longest line accepted (a document is at most the body limit; its JSON line a little more). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const bad = (line: number, why: string) => BackupErrors.invalid_archive(`Line ${line}: ${why}.`);

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
const isOptionalTime = (v: unknown) => v === null || isTime(v);
const isOptionalId = (v: unknown) => v === null || typeof v === 'string';

/** Checks the members a record of each type must have, with the right types. */
function checkRecord(r: Record<string, unknown>, line: number): ArchiveRecord {
  switch (r.type) {
    case 'header':
      if (r.format !== ARCHIVE_FORMAT) throw bad(line, 'not a Plinth project archive');
      if (r.version !== ARCHIVE_VERSION) throw bad(line, `archive version ${String(r.version)} is not supported (this server reads ${ARCHIVE_VERSION})`);
      return r as unknown as HeaderRecord;
    case 'collection':
      if (typeof r.name !== 'string' || !Array.isArray(r.fields) || !isPlainObject(r.rls) || !Array.isArray(r.indexes)) throw bad(line, 'a collection needs name, fields, rls and indexes');
      return r as unknown as CollectionRecord;
    case 'document':
      if (typeof r.collection !== 'string' || !isObjectId(r.id) || !isPlainObject(r.data) || !isOptionalId(r.ownerId)) throw bad(line, 'a document needs collection, an ObjectId id, ownerId and an object data');
      if (!isTime(r.createdAt) || !isTime(r.updatedAt) || !isOptionalTime(r.deletedAt)) throw bad(line, 'a document needs createdAt, updatedAt and deletedAt times');
      return r as unknown as DocumentRecord;
    case 'user':
      if (!isObjectId(r.id) || typeof r.email !== 'string' || typeof r.passwordHash !== 'string' || typeof r.emailVerified !== 'boolean') throw bad(line, 'a user needs an ObjectId id, email, passwordHash and emailVerified');
      if (!isPlainObject(r.data) || !isOptionalId(r.githubId) || !isOptionalId(r.googleId) || !Array.isArray(r.authProviders) || !r.authProviders.every((p) => typeof p === 'string')) throw bad(line, 'a user needs data, githubId, googleId and authProviders');
      if (!isTime(r.createdAt) || !isTime(r.updatedAt) || !isOptionalTime(r.disabledAt)) throw bad(line, 'a user needs createdAt, updatedAt and disabledAt times');
      return r as unknown as UserRecord;
    case 'file':
      if (!isObjectId(r.id) || typeof r.name !== 'string' || r.name.includes('/') || !r.name.startsWith(`${String(r.id)}_`)) throw bad(line, 'a file needs an ObjectId id and a name <id>_<file name> without a slash');
      if (!Number.isSafeInteger(r.size) || (r.size as number) < 0 || typeof r.contentType !== 'string' || (r.provider !== 'internal' && r.provider !== 'external') || !isOptionalId(r.ownerId)) throw bad(line, 'a file needs size, contentType, provider and ownerId');
      if (!isTime(r.createdAt) || !isOptionalTime(r.confirmedAt)) throw bad(line, 'a file needs createdAt and confirmedAt times');
      return r as unknown as FileRecord;
    case 'end':
      if (!isPlainObject(r.counts)) throw bad(line, 'the end record needs counts');
      return r as unknown as EndRecord;
    default:
      throw bad(line, `unknown record type ${JSON.stringify(r.type)}`);
  }
}

/** One archive line → its record; 400 invalid_archive naming the line for anything else. */
export function parseRecord(text: string, line: number): ArchiveRecord {
  if (jsonTooDeep(text)) throw bad(line, 'nested too deeply');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad(line, 'not JSON');
  }
  if (!isPlainObject(value)) throw bad(line, 'not a JSON object');
  return checkRecord(value, line);
}

/**
 * The archive's records, one per line, from a gzip stream: decompressed with a cap on the
 * total size and on each line, so a small upload cannot expand into unbounded memory.
 */
export async function* readArchive(input: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<{ record: ArchiveRecord; line: number }> {
  const decoder = new StringDecoder('utf8'); // a character may span two chunks
  const gunzip = createGunzip();
  const feeding = pipeline(input, gunzip).catch((err: unknown) => gunzip.destroy(err as Error));
  let total = 0;
  let line = 0;
  let rest = '';
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw BackupErrors.archive_too_large(`The archive expands beyond ${maxBytes} bytes (IMPORT_MAX_BYTES).`);
      const parts = (rest + decoder.write(chunk)).split('\n');
      rest = parts.pop()!;
      if (Buffer.byteLength(rest) > MAX_LINE_BYTES) throw bad(line + 1, 'line too long');
      for (const text of parts) {
        line++;
        if (text.trim()) yield { record: parseRecord(text, line), line };
      }
    }
  } catch (err) {
    if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) throw BackupErrors.invalid_archive('The archive is not valid gzip data.');
    throw err;
  } finally {
    gunzip.destroy();
    await feeding;
  }
  if (rest.trim()) yield { record: parseRecord(rest, line + 1), line: line + 1 };
}
