/**
 * The project archive (format version 3; versions 1 and 2 are still read): gzip-compressed
 * NDJSON, one record per line, in this order: a header, the collections, their documents, the
 * end users, what each user signs in with besides a password (authenticator-app factors,
 * recovery codes, passkeys, provider identities), the file records, the project's own mail
 * templates and auth mail texts, its webhook endpoints, its functions (each followed by all its
 * versions) and function secrets, its plain settings, an end record with
 * the counts (a missing end means a truncated archive). What never enters it: API keys, JWT
 * secret, provider keys and client secrets, bucket credentials, sessions, one-time codes and
 * anything in flight (docs/backup.md). End users' password hashes do (argon2id), and their
 * second factors as stored (the TOTP secret, webhook signing secrets and function secrets
 * AES-256-GCM encrypted with ENCRYPTION_KEY, recovery codes as keyed hashes), so users sign in after a restore.
 */
import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { CompoundIndex, FieldDef, RlsConfig, RulesConfig } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';
import { isObjectId } from '../../lib/ids.js';
import { jsonTooDeep } from '../../lib/json-depth.js';
import { isPlainObject } from '../../lib/objects.js';
import { MAX_COMPILED_BYTES, MAX_SOURCE_BYTES } from '../functions/compile.js';
import { UNIT_GLOBAL } from '../functions/sandbox/guest-prelude.js';
import type { FunctionKind } from '../functions/tables.js';
import { BackupErrors } from './errors.js';

export const ARCHIVE_FORMAT = 'plinth-project-archive';
/**
 * A new record type is a new version: a server that reads only older versions then refuses the
 * archive at its header (400 naming the version), not at the first record it does not know.
 */
export const ARCHIVE_VERSION = 3;
/** The versions this server reads: 1 (before factors, identities, templates, webhooks and settings), 2 (before functions) and 3. */
export const READABLE_VERSIONS: ReadonlySet<number> = new Set([1, 2, 3]);

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
  /** Access rules as written (docs/rules.md); absent or null: none. */
  rules?: Partial<RulesConfig> | null;
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
  /** Null for an anonymous user (isAnonymous). */
  email: string | null;
  passwordHash: string;
  emailVerified: boolean;
  data: Record<string, unknown>;
  githubId: string | null;
  googleId: string | null;
  authProviders: string[];
  createdAt: string;
  updatedAt: string;
  disabledAt: string | null;
  /** Absent in archives written before anonymous users existed: false. */
  isAnonymous?: boolean;
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
  /** true/false set for this file, null: the project's default (absent in version 1: null). */
  private?: boolean | null;
}

/** A user's authenticator app; `secret` as stored, encrypted with ENCRYPTION_KEY. */
export interface TotpRecord {
  type: 'totp';
  userId: string;
  secret: Encrypted;
  verifiedAt: string | null;
  lastStep: number | null;
  createdAt: string;
}

/** One recovery code, as its keyed hash (bound to ENCRYPTION_KEY and the user's id). */
export interface RecoveryCodeRecord {
  type: 'recoveryCode';
  userId: string;
  codeHash: string;
  usedAt: string | null;
  createdAt: string;
}

/** A user's passkey: its public key (no secret). */
export interface PasskeyRecord {
  type: 'passkey';
  id: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  rpId: string;
  backupEligible: boolean;
  backedUp: boolean;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A user's identity at an OpenID Connect provider (GitHub and Google ids are on the user). */
export interface IdentityRecord {
  type: 'identity';
  userId: string;
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  createdAt: string;
  lastSignInAt: string;
}

/** The project's own text of one auth mail in one locale. */
export interface AuthMailTemplateRecord {
  type: 'authMailTemplate';
  kind: string;
  locale: string;
  subject: string;
  html: string;
  text: string;
  updatedAt: string;
}

/** One of the project's own mail templates (the system ones are every project's). */
export interface MailTemplateRecord {
  type: 'mailTemplate';
  key: string;
  name: string;
  subject: string;
  html: string;
  text: string;
  createdAt: string;
  updatedAt: string;
}

/** A webhook endpoint; `secret` (its signing secret) as stored, encrypted with ENCRYPTION_KEY. */
export interface WebhookRecord {
  type: 'webhook';
  id: string;
  url: string;
  description: string;
  events: string[];
  collections: string[];
  secret: Encrypted;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * A server-side function (docs/functions.md): its definition; its versions follow it, each as a
 * `functionVersion` record naming it. `id` is new in a copy (newIds); the name is kept.
 */
export interface FunctionRecord {
  type: 'function';
  id: string;
  name: string;
  kind: FunctionKind;
  /** As stored (normalised by its kind); a hook names its collection by name. */
  trigger: Record<string, unknown>;
  enabled: boolean;
  /** The version that runs (after a rollback, an older one). */
  activeVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** One immutable version of the function `function` (its name): the source and what runs. */
export interface FunctionVersionRecord {
  type: 'functionVersion';
  function: string;
  version: number;
  language: 'js' | 'ts';
  source: string;
  /** esbuild's bundle of `source`, as deployed (not compiled again: the same bytes run). */
  compiled: string;
  /** sha256 of `compiled` (checked on import). */
  hash: string;
  createdAt: string;
}

/** A function secret (`plinth.env`); `value` as stored, encrypted with ENCRYPTION_KEY. */
export interface FunctionSecretRecord {
  type: 'functionSecret';
  name: string;
  value: Encrypted;
  updatedAt: string;
}

/**
 * The project's plain settings (sign-in options, providers' public settings, passkey relying
 * party, MFA policy, default file privacy, mail locale, ...), without its own bucket (whose
 * credentials do not travel) and without any secret; and its site URL.
 */
export interface SettingsRecord {
  type: 'settings';
  siteUrl: string | null;
  settings: Record<string, unknown>;
}

export interface Counts {
  collections: number;
  documents: number;
  users: number;
  files: number;
  totpFactors: number;
  recoveryCodes: number;
  passkeys: number;
  identities: number;
  authMailTemplates: number;
  mailTemplates: number;
  webhooks: number;
  functions: number;
  functionVersions: number;
  functionSecrets: number;
}

/** The counts of an end record; a version 1 archive has only the first four, a version 2 none of the functions'. */
export const COUNT_KEYS = [
  'collections', 'documents', 'users', 'files', 'totpFactors', 'recoveryCodes', 'passkeys', 'identities', 'authMailTemplates', 'mailTemplates', 'webhooks',
  'functions', 'functionVersions', 'functionSecrets',
] as const;

export const emptyCounts = (): Counts => ({
  collections: 0, documents: 0, users: 0, files: 0, totpFactors: 0, recoveryCodes: 0, passkeys: 0, identities: 0, authMailTemplates: 0, mailTemplates: 0, webhooks: 0,
  functions: 0, functionVersions: 0, functionSecrets: 0,
});

export interface EndRecord {
  type: 'end';
  counts: Partial<Counts>;
}

export type ArchiveRecord = HeaderRecord | CollectionRecord | DocumentRecord | UserRecord | FileRecord | TotpRecord | RecoveryCodeRecord | PasskeyRecord | IdentityRecord
  | AuthMailTemplateRecord | MailTemplateRecord | WebhookRecord | FunctionRecord | FunctionVersionRecord | FunctionSecretRecord | SettingsRecord | EndRecord;

const bad = (line: number, why: string) => BackupErrors.invalid_archive(`Line ${line}: ${why}.`);

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
const isOptionalTime = (v: unknown) => v === null || isTime(v);
const isOptionalId = (v: unknown) => v === null || typeof v === 'string';
const isOptionalString = isOptionalId;
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isEncrypted = (v: unknown): v is Encrypted => isPlainObject(v) && typeof v.encrypted === 'string' && typeof v.iv === 'string' && typeof v.tag === 'string';
const isText = (v: unknown, max: number) => typeof v === 'string' && v.length <= max;

/** What migrations/068_functions.sql allows (checked here, so a hostile name is refused by line). */
const FUNCTION_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;
const FUNCTION_KINDS: readonly string[] = ['http', 'before', 'after', 'auth', 'schedule'] satisfies FunctionKind[];
const SHA256_HEX = /^[0-9a-f]{64}$/;
const isVersionNumber = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0 && (v as number) <= 2_147_483_647;
const isBytes = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max && Buffer.byteLength(v) <= max;

const RULE_ACTIONS = ['list', 'view', 'create', 'update', 'delete'] as const;
function isRules(v: unknown): v is Partial<RulesConfig> {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.every((k) => (RULE_ACTIONS as readonly string[]).includes(k)) && RULE_ACTIONS.every((a) => v[a] === undefined || v[a] === null || typeof v[a] === 'string');
}

/** Checks the members a record of each type must have, with the right types. */
function checkRecord(r: Record<string, unknown>, line: number): ArchiveRecord {
  switch (r.type) {
    case 'header':
      if (r.format !== ARCHIVE_FORMAT) throw bad(line, 'not a Plinth project archive');
      if (typeof r.version !== 'number' || !READABLE_VERSIONS.has(r.version)) throw bad(line, `archive version ${String(r.version)} is not supported (this server reads ${[...READABLE_VERSIONS].join(' and ')})`);
      return r as unknown as HeaderRecord;
    case 'collection':
      if (typeof r.name !== 'string' || !Array.isArray(r.fields) || !isPlainObject(r.rls) || !Array.isArray(r.indexes)) throw bad(line, 'a collection needs name, fields, rls and indexes');
      if (r.rules !== undefined && r.rules !== null && !isRules(r.rules)) throw bad(line, `a collection's rules are an object of ${RULE_ACTIONS.join(', ')}, each a string or null`);
      return r as unknown as CollectionRecord;
    case 'document':
      if (typeof r.collection !== 'string' || !isObjectId(r.id) || !isPlainObject(r.data) || !isOptionalId(r.ownerId)) throw bad(line, 'a document needs collection, an ObjectId id, ownerId and an object data');
      if (!isTime(r.createdAt) || !isTime(r.updatedAt) || !isOptionalTime(r.deletedAt)) throw bad(line, 'a document needs createdAt, updatedAt and deletedAt times');
      return r as unknown as DocumentRecord;
    case 'user':
      if (r.isAnonymous !== undefined && typeof r.isAnonymous !== 'boolean') throw bad(line, 'a user\'s isAnonymous is a boolean');
      if (!isObjectId(r.id) || (r.isAnonymous === true ? r.email !== null : typeof r.email !== 'string') || typeof r.passwordHash !== 'string' || typeof r.emailVerified !== 'boolean') throw bad(line, 'a user needs an ObjectId id, email (null only when anonymous), passwordHash and emailVerified');
      if (!isPlainObject(r.data) || !isOptionalId(r.githubId) || !isOptionalId(r.googleId) || !Array.isArray(r.authProviders) || !r.authProviders.every((p) => typeof p === 'string')) throw bad(line, 'a user needs data, githubId, googleId and authProviders');
      if (!isTime(r.createdAt) || !isTime(r.updatedAt) || !isOptionalTime(r.disabledAt)) throw bad(line, 'a user needs createdAt, updatedAt and disabledAt times');
      return r as unknown as UserRecord;
    case 'file':
      if (!isObjectId(r.id) || typeof r.name !== 'string' || r.name.includes('/') || !r.name.startsWith(`${String(r.id)}_`)) throw bad(line, 'a file needs an ObjectId id and a name <id>_<file name> without a slash');
      if (!Number.isSafeInteger(r.size) || (r.size as number) < 0 || typeof r.contentType !== 'string' || (r.provider !== 'internal' && r.provider !== 'external') || !isOptionalId(r.ownerId)) throw bad(line, 'a file needs size, contentType, provider and ownerId');
      if (!isTime(r.createdAt) || !isOptionalTime(r.confirmedAt)) throw bad(line, 'a file needs createdAt and confirmedAt times');
      if (r.private !== undefined && r.private !== null && typeof r.private !== 'boolean') throw bad(line, 'a file\'s private is true, false or null');
      return r as unknown as FileRecord;
    case 'totp':
      if (!isObjectId(r.userId) || !isEncrypted(r.secret) || !isOptionalTime(r.verifiedAt) || !isTime(r.createdAt)) throw bad(line, 'a totp factor needs an ObjectId userId, an encrypted secret, verifiedAt and createdAt');
      if (r.lastStep !== null && !Number.isSafeInteger(r.lastStep)) throw bad(line, 'a totp factor\'s lastStep is an integer or null');
      return r as unknown as TotpRecord;
    case 'recoveryCode':
      if (!isObjectId(r.userId) || !isText(r.codeHash, 200) || !r.codeHash || !isOptionalTime(r.usedAt) || !isTime(r.createdAt)) throw bad(line, 'a recovery code needs an ObjectId userId, codeHash, usedAt and createdAt');
      return r as unknown as RecoveryCodeRecord;
    case 'passkey':
      if (!isText(r.id, 200) || !r.id || !isObjectId(r.userId) || !isText(r.credentialId, 2048) || !r.credentialId || !isText(r.publicKey, 8192) || !isText(r.rpId, 253) || !isText(r.name, 100)) throw bad(line, 'a passkey needs id, an ObjectId userId, credentialId, publicKey, rpId and name');
      if (!Number.isSafeInteger(r.counter) || (r.counter as number) < 0 || !isStrings(r.transports) || typeof r.backupEligible !== 'boolean' || typeof r.backedUp !== 'boolean') throw bad(line, 'a passkey needs counter, transports, backupEligible and backedUp');
      if (!isTime(r.createdAt) || !isOptionalTime(r.lastUsedAt)) throw bad(line, 'a passkey needs createdAt and lastUsedAt times');
      return r as unknown as PasskeyRecord;
    case 'identity':
      if (!isObjectId(r.userId) || typeof r.provider !== 'string' || typeof r.issuer !== 'string' || typeof r.subject !== 'string' || !isOptionalString(r.email)) throw bad(line, 'an identity needs an ObjectId userId, provider, issuer, subject and email');
      if (!isTime(r.createdAt) || !isTime(r.lastSignInAt)) throw bad(line, 'an identity needs createdAt and lastSignInAt times');
      return r as unknown as IdentityRecord;
    case 'authMailTemplate':
      if (typeof r.kind !== 'string' || typeof r.locale !== 'string' || typeof r.subject !== 'string' || typeof r.html !== 'string' || typeof r.text !== 'string' || !isTime(r.updatedAt)) throw bad(line, 'an auth mail template needs kind, locale, subject, html, text and updatedAt');
      return r as unknown as AuthMailTemplateRecord;
    case 'mailTemplate':
      if (typeof r.key !== 'string' || typeof r.name !== 'string' || typeof r.subject !== 'string' || typeof r.html !== 'string' || typeof r.text !== 'string' || !isTime(r.createdAt) || !isTime(r.updatedAt)) throw bad(line, 'a mail template needs key, name, subject, html, text, createdAt and updatedAt');
      return r as unknown as MailTemplateRecord;
    case 'webhook':
      if (!isObjectId(r.id) || typeof r.url !== 'string' || typeof r.description !== 'string' || !isStrings(r.events) || !isStrings(r.collections) || !isEncrypted(r.secret)) throw bad(line, 'a webhook needs an ObjectId id, url, description, events, collections and an encrypted secret');
      if (typeof r.enabled !== 'boolean' || !isOptionalString(r.disabledReason) || !isTime(r.createdAt) || !isTime(r.updatedAt)) throw bad(line, 'a webhook needs enabled, disabledReason, createdAt and updatedAt');
      return r as unknown as WebhookRecord;
    case 'function':
      if (!isObjectId(r.id) || typeof r.name !== 'string' || !FUNCTION_NAME.test(r.name) || typeof r.kind !== 'string' || !FUNCTION_KINDS.includes(r.kind)) throw bad(line, `a function needs an ObjectId id, a name (${FUNCTION_NAME.source}) and a kind (${FUNCTION_KINDS.join(', ')})`);
      if (!isPlainObject(r.trigger) || typeof r.enabled !== 'boolean' || !isVersionNumber(r.activeVersion)) throw bad(line, 'a function needs a trigger (an object), enabled and activeVersion (a positive integer)');
      if (!isTime(r.createdAt) || !isTime(r.updatedAt)) throw bad(line, 'a function needs createdAt and updatedAt times');
      return r as unknown as FunctionRecord;
    case 'functionVersion':
      if (typeof r.function !== 'string' || !FUNCTION_NAME.test(r.function) || !isVersionNumber(r.version) || (r.language !== 'js' && r.language !== 'ts')) throw bad(line, 'a function version needs function (its name), version (a positive integer) and language (js or ts)');
      if (!isBytes(r.source, MAX_SOURCE_BYTES)) throw bad(line, `a function version needs its source, at most ${MAX_SOURCE_BYTES} bytes`);
      if (!isBytes(r.compiled, MAX_COMPILED_BYTES) || !r.compiled.startsWith(`var ${UNIT_GLOBAL} = `)) throw bad(line, `a function version needs compiled, esbuild's bundle of its source (at most ${MAX_COMPILED_BYTES} bytes)`);
      if (typeof r.hash !== 'string' || !SHA256_HEX.test(r.hash) || !isTime(r.createdAt)) throw bad(line, 'a function version needs hash (sha256 of compiled, hex) and createdAt');
      return r as unknown as FunctionVersionRecord;
    case 'functionSecret':
      if (typeof r.name !== 'string' || !SECRET_NAME.test(r.name) || !isEncrypted(r.value) || !isTime(r.updatedAt)) throw bad(line, `a function secret needs a name (${SECRET_NAME.source}), an encrypted value and updatedAt`);
      return r as unknown as FunctionSecretRecord;
    case 'settings':
      if (!isPlainObject(r.settings) || !isOptionalString(r.siteUrl)) throw bad(line, 'the settings record needs settings (an object) and siteUrl');
      return r as unknown as SettingsRecord;
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

export interface ReadLimits {
  /** Decompressed bytes read at most (413 archive_too_large beyond). */
  maxBytes: number;
  /** Lines read at most (413 archive_too_many_lines beyond). */
  maxLines: number;
  /** The longest line (400 invalid_archive beyond): checked before the line is put together. */
  maxLineBytes: number;
  /** The client went away: stop at once, whatever is left to inflate. */
  signal: AbortSignal;
  /** An upload that sends nothing for this long is stopped (408 import_stalled). */
  stallMs: number;
  /** The whole read, trickling uploads included, ends by then (408 import_timeout). */
  maxMs: number;
  /** Told the (compressed) bytes read from the input as they arrive: an import's progress. */
  onInput?: (bytes: number) => void;
}

/**
 * Pipes the upload into the gunzip without ever destroying the upload: on a cap or an error the
 * gunzip is destroyed and the upload merely unpiped, so the HTTP answer (413, 400) still reaches
 * a client that is sending; an upload that fails or is cut ends the gunzip with it.
 */
function feed(input: Readable, gunzip: Gunzip, onInput?: (bytes: number) => void): () => void {
  const cut = (err?: Error) => gunzip.destroy(err ?? new Error('the upload ended early'));
  const onClose = () => { if (!input.readableEnded) cut(); };
  const onData = (chunk: Buffer) => onInput?.(chunk.length);
  // An input that failed or closed before it was fed (a stored backup that did not open) ends the gunzip at once.
  if (input.destroyed) {
    cut((input.errored as Error | null) ?? undefined);
    return () => gunzip.destroy();
  }
  input.once('error', cut);
  input.once('close', onClose);
  input.pipe(gunzip);
  // Added in the tick of the pipe: it sees every chunk the pipe does, and changes no flow.
  if (onInput) input.on('data', onData);
  return () => {
    input.off('data', onData);
    input.unpipe(gunzip);
    input.off('error', cut);
    input.off('close', onClose);
    gunzip.destroy();
  };
}

/** A gzip upload's decompressed chunks, within the byte cap and stopping on abort. */
async function* inflate(input: Readable, limits: ReadLimits): AsyncGenerator<Buffer> {
  const gunzip = createGunzip();
  const stop = feed(input, gunzip, limits.onInput);
  const onAbort = () => gunzip.destroy(BackupErrors.import_aborted());
  limits.signal.addEventListener('abort', onAbort, { once: true });
  let total = 0;
  const deadline = Date.now() + limits.maxMs;
  const timedOut = () => BackupErrors.import_timeout(`The import took longer than ${Math.round(limits.maxMs / 1000)} s (IMPORT_TIMEOUT): it was stopped, nothing was written.`);
  const stalled = () => BackupErrors.import_stalled(`The upload sent nothing for ${limits.stallMs / 1000} s: the import was stopped, nothing was written.`);
  try {
    const chunks = (gunzip as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    for (;;) {
      if (limits.signal.aborted) throw BackupErrors.import_aborted();
      const left = deadline - Date.now();
      if (left <= 0) throw timedOut();
      // Waiting for the next chunk is waiting for the client: a silent or trickling one holds a
      // transaction (and, once a collection is made, a lock every collection create waits for).
      const timer = setTimeout(() => gunzip.destroy(left < limits.stallMs ? timedOut() : stalled()), Math.min(left, limits.stallMs));
      const next = await chunks.next().finally(() => clearTimeout(timer));
      if (next.done) return;
      total += next.value.length;
      if (total > limits.maxBytes) throw BackupErrors.archive_too_large(`The archive expands beyond ${limits.maxBytes} bytes, this import's limit (IMPORT_MAX_BYTES, docs/backup.md).`);
      yield next.value;
    }
  } catch (err) {
    if (limits.signal.aborted) throw BackupErrors.import_aborted();
    if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('Z_')) throw BackupErrors.invalid_archive('The archive is not valid gzip data.');
    throw err;
  } finally {
    limits.signal.removeEventListener('abort', onAbort);
    stop();
  }
}

/**
 * The archive's lines as text, scanned in the decompressed chunks as they come: a line's
 * pieces are kept as they are (no re-joining of a growing string per chunk) and put together
 * once, at its newline, so the work is linear in the bytes; a line over the cap is refused
 * before it is ever assembled.
 */
async function* lines(chunks: AsyncIterable<Buffer>, limits: ReadLimits): AsyncGenerator<{ text: string; line: number }> {
  let pieces: Buffer[] = [];
  let pending = 0;
  let line = 0;
  const tooLong = () => bad(line + 1, `line longer than ${limits.maxLineBytes} bytes`);
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (pending + nl - start > limits.maxLineBytes) throw tooLong();
      if (++line > limits.maxLines) throw BackupErrors.archive_too_many_lines(`The archive has more than ${limits.maxLines} lines (IMPORT_MAX_LINES).`);
      const piece = chunk.subarray(start, nl);
      const text = pieces.length ? Buffer.concat([...pieces, piece]).toString('utf8') : piece.toString('utf8');
      pieces = [];
      pending = 0;
      start = nl + 1;
      yield { text, line };
    }
    if (start < chunk.length) {
      pending += chunk.length - start;
      if (pending > limits.maxLineBytes) throw tooLong();
      pieces.push(chunk.subarray(start));
    }
  }
  if (!pending) return;
  if (++line > limits.maxLines) throw BackupErrors.archive_too_many_lines(`The archive has more than ${limits.maxLines} lines (IMPORT_MAX_LINES).`);
  yield { text: Buffer.concat(pieces).toString('utf8'), line };
}

/**
 * The archive's records, one per line, from a gzip stream, with bounded work: a cap on the
 * decompressed bytes, on the lines and on each line, a blank line refused at once (the format
 * has none), and an abort that stops the inflating when the client leaves. `chars` is the
 * line's length in UTF-16 code units (what holding its text costs), not its bytes.
 */
export async function* readArchive(input: Readable, limits: ReadLimits): AsyncGenerator<{ record: ArchiveRecord; line: number; chars: number }> {
  for await (const { text, line } of lines(inflate(input, limits), limits)) {
    if (!text.trim()) throw bad(line, 'an empty line (an archive has one record on every line)');
    yield { record: parseRecord(text, line), line, chars: text.length };
  }
}
