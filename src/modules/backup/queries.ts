/**
 * SQL of project export and import. Export reads run in the operator's tenant snapshot (the
 * policies apply); import writes run in one owner transaction, every statement naming the
 * target project.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../database.js';
import type { Tx } from '../../db/pool.js';
import type {
  AuthMailTemplateRecord, DocumentRecord, FileRecord, FunctionRecord, FunctionSecretRecord, FunctionVersionRecord, IdentityRecord, MailTemplateRecord, PasskeyRecord,
  RecoveryCodeRecord, TotpRecord, UserRecord, WebhookRecord,
} from './archive.js';
import { WHOLE_DATA_AS_DATA, WHOLE_DATA_SQL } from '../../db/whole-data.js';

/** Serialises imports and collection creates of one project (the collections module's lock). */
export { lockProject } from '../collections/queries.js';

type Db = Kysely<Database>;

export const PAGE = 500;

export async function collections(tx: Tx, projectId: string) {
  return tx
    .selectFrom('collections')
    .select(['id', 'name', 'fields', 'rls', 'indexes', 'search_language', 'realtime', 'rules', 'created_at'])
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** `data` with the hidden fields merged back (db/whole-data.ts). */
const WHOLE_DATA_EXPR = sql.raw(WHOLE_DATA_SQL);
const WHOLE_DATA = sql.raw(WHOLE_DATA_AS_DATA);

/** Every document of a collection, soft-deleted ones included, by id after `after`. */
export async function documentsAfter(tx: Tx, projectId: string, collectionId: string, after: string) {
  const res = await sql<{ id: string; owner_id: string | null; data: Record<string, unknown>; created_at: Date; updated_at: Date; deleted_at: Date | null }>`
    SELECT id, owner_id, ${WHOLE_DATA}, created_at, updated_at, deleted_at FROM documents
    WHERE project_id = ${projectId} AND collection_id = ${collectionId} AND id > ${after}
    ORDER BY id LIMIT ${PAGE}`.execute(tx);
  return res.rows;
}

export async function usersAfter(tx: Tx, projectId: string, after: string) {
  return tx
    .selectFrom('app_users')
    // `data` whole: the hidden profile fields merged back (split again on import by app_users' trigger).
    .select(['id', 'email', 'password_hash', 'email_verified', sql<Record<string, unknown>>`${WHOLE_DATA_EXPR}`.as('data'), 'github_id', 'google_id', 'auth_providers', 'created_at', 'updated_at', 'disabled_at', 'is_anonymous'])
    .where('project_id', '=', projectId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
}

/** Confirmed files only: a pending upload is not a file yet. */
export async function filesAfter(tx: Tx, projectId: string, after: string) {
  return tx
    .selectFrom('files')
    .select(['id', 'path', 'owner_id', 'size', 'content_type', 'provider', 'created_at', 'confirmed_at', 'private'])
    .where('project_id', '=', projectId)
    .where('status', '=', 'confirmed')
    .where('id', '>', after)
    .orderBy('id')
    .limit(PAGE)
    .execute();
}

/*
 * What users sign in with besides a password, read a page at a time by a key of their own
 * (`id` is what the export's pager walks by; the row's other members are what it writes).
 */

export async function totpAfter(tx: Tx, projectId: string, after: string) {
  const rows = await tx.selectFrom('app_user_totp').select(['user_id', 'secret', 'verified_at', 'last_step', 'created_at'])
    .where('project_id', '=', projectId).where('user_id', '>', after).orderBy('user_id').limit(PAGE).execute();
  return rows.map((r) => ({ ...r, id: r.user_id }));
}

export async function recoveryCodesAfter(tx: Tx, projectId: string, after: string) {
  const res = await sql<{ id: string; user_id: string; code_hash: string; used_at: Date | null; created_at: Date }>`
    SELECT user_id || ':' || code_hash AS id, user_id, code_hash, used_at, created_at FROM app_user_recovery_codes
    WHERE project_id = ${projectId} AND (user_id || ':' || code_hash) COLLATE "C" > ${after}
    ORDER BY (user_id || ':' || code_hash) COLLATE "C" LIMIT ${PAGE}`.execute(tx);
  return res.rows;
}

export async function passkeysAfter(tx: Tx, projectId: string, after: string) {
  return tx.selectFrom('app_user_passkeys')
    .select(['id', 'user_id', 'credential_id', 'public_key', 'counter', 'transports', 'rp_id', 'backup_eligible', 'backed_up', 'name', 'created_at', 'last_used_at'])
    .where('project_id', '=', projectId).where('id', '>', after).orderBy('id').limit(PAGE).execute();
}

export async function identitiesAfter(tx: Tx, projectId: string, after: string) {
  const res = await sql<{ id: string; user_id: string; provider: string; issuer: string; subject: string; email: string | null; created_at: Date; last_sign_in_at: Date }>`
    SELECT json_build_array(provider, issuer, subject)::text AS id, user_id, provider, issuer, subject, email, created_at, last_sign_in_at
      FROM app_user_identities
     WHERE project_id = ${projectId} AND json_build_array(provider, issuer, subject)::text COLLATE "C" > ${after}
     ORDER BY json_build_array(provider, issuer, subject)::text COLLATE "C" LIMIT ${PAGE}`.execute(tx);
  return res.rows;
}

/** The project's own auth mail texts and mail templates (few: read at once). */
export async function authMailTemplates(tx: Tx, projectId: string) {
  return tx.selectFrom('auth_mail_templates').select(['kind', 'locale', 'subject', 'html', 'text', 'updated_at'])
    .where('project_id', '=', projectId).orderBy('kind').orderBy('locale').execute();
}

export async function mailTemplates(tx: Tx, projectId: string) {
  return tx.selectFrom('mail_templates').select(['key', 'name', 'subject', 'html', 'text', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId).where('is_system', '=', false).orderBy('key').execute();
}

/** The project's webhook endpoints (at most 20: read at once), secrets as stored. */
export async function webhookEndpoints(tx: Tx, projectId: string) {
  return tx.selectFrom('webhook_endpoints')
    .select(['id', 'url', 'description', 'events', 'collections', 'secret', 'enabled', 'disabled_reason', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
}

export async function insertWebhooks(db: Db, projectId: string, rows: Array<Omit<WebhookRecord, 'type'>>): Promise<void> {
  await db.insertInto('webhook_endpoints')
    .values(rows.map((w) => ({
      id: w.id, project_id: projectId, url: w.url, description: w.description, events: w.events, collections: w.collections,
      secret: JSON.stringify(w.secret), enabled: w.enabled, disabled_reason: w.disabledReason, created_at: w.createdAt, updated_at: w.updatedAt,
    })))
    .execute();
}

/** The project's functions (at most 100: read at once), by name. */
export async function functions(tx: Tx, projectId: string) {
  return tx.selectFrom('functions')
    .select(['id', 'name', 'kind', 'trigger', 'enabled', 'active_version', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId).orderBy('name').execute();
}

/**
 * A function's versions, a page at a time by version number (each may hold 1.25 MB of source
 * and bundle: never all of a project's at once). `id` is what the export's pager walks by.
 */
export async function functionVersionsAfter(tx: Tx, projectId: string, functionId: string, after: string) {
  const rows = await tx.selectFrom('function_versions')
    .select(['version', 'language', 'source', 'compiled', 'hash', 'created_at'])
    .where('project_id', '=', projectId).where('function_id', '=', functionId)
    .where('version', '>', after === '' ? 0 : Number(after))
    .orderBy('version').limit(VERSION_PAGE).execute();
  // Zero-padded, so the pager's string order is the number order.
  return rows.map((r) => ({ ...r, id: String(r.version).padStart(10, '0') }));
}
/** Versions read at once: a page stays within a few tens of MB (sources and bundles are capped). */
export const VERSION_PAGE = 20;

/** The project's function secrets (at most 100), values as stored: encrypted. */
export async function functionSecrets(tx: Tx, projectId: string) {
  return tx.selectFrom('function_secrets').select(['name', 'value', 'updated_at']).where('project_id', '=', projectId).orderBy('name').execute();
}

export async function insertFunctions(db: Db, projectId: string, rows: Array<Omit<FunctionRecord, 'type'>>): Promise<void> {
  await db.insertInto('functions')
    .values(rows.map((f) => ({
      id: f.id, project_id: projectId, name: f.name, kind: f.kind, trigger: JSON.stringify(f.trigger), enabled: f.enabled,
      active_version: f.activeVersion, created_at: f.createdAt, updated_at: f.updatedAt,
    })))
    .execute();
}

export async function insertFunctionVersions(db: Db, projectId: string, rows: Array<Omit<FunctionVersionRecord, 'type' | 'function'> & { functionId: string }>): Promise<void> {
  await db.insertInto('function_versions')
    .values(rows.map((v) => ({
      function_id: v.functionId, project_id: projectId, version: v.version, language: v.language, source: v.source, compiled: v.compiled, hash: v.hash, created_at: v.createdAt,
    })))
    .execute();
}

export async function insertFunctionSecrets(db: Db, projectId: string, rows: FunctionSecretRecord[]): Promise<void> {
  await db.insertInto('function_secrets')
    .values(rows.map((s) => ({ project_id: projectId, name: s.name, value: JSON.stringify(s.value), updated_at: s.updatedAt })))
    .execute();
}

/** Function ids are unique per server: those already taken (by any project). */
export async function takenFunctionIds(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('functions').select('id').where('id', 'in', ids).execute();
  return rows.map((r) => r.id);
}

export async function projectSettings(db: Tx, projectId: string) {
  return db.selectFrom('projects').select(['site_url', 'settings']).where('id', '=', projectId).executeTakeFirstOrThrow();
}

/** What the project already holds: an import goes only into an empty one. */
/** About how many records a project's archive has (its largest tables), for an export's progress. */
export async function recordTotal(tx: Tx, projectId: string): Promise<number> {
  const res = await sql<{ n: number }>`
    SELECT (SELECT count(*) FROM documents WHERE project_id = ${projectId})
         + (SELECT count(*) FROM app_users WHERE project_id = ${projectId})
         + (SELECT count(*) FROM files WHERE project_id = ${projectId} AND status = 'confirmed') + 2 AS n`.execute(tx);
  return Number(res.rows[0]!.n);
}

export async function contents(db: Db, projectId: string) {
  const res = await sql<{ collections: number; users: number; files: number; functions: number; functionSecrets: number }>`
    SELECT (SELECT count(*)::int FROM collections WHERE project_id = ${projectId}) AS collections,
           (SELECT count(*)::int FROM app_users WHERE project_id = ${projectId}) AS users,
           (SELECT count(*)::int FROM files WHERE project_id = ${projectId}) AS files,
           (SELECT count(*)::int FROM functions WHERE project_id = ${projectId}) AS functions,
           (SELECT count(*)::int FROM function_secrets WHERE project_id = ${projectId}) AS "functionSecrets"`.execute(db);
  return res.rows[0]!;
}

/**
 * A restore over the project's own contents (`replace`): its end users (with their sessions,
 * factors and identities, by cascade), file records and uploads in flight, its own mail texts
 * its webhook endpoints (with their deliveries), and its functions (with their versions) and
 * function secrets, inside the import's transaction. The collections go through the collections module.
 * Returns the stored bytes of platform storage the file records were charged.
 */
export async function deleteProjectContents(db: Db, projectId: string): Promise<number> {
  await db.deleteFrom('app_users').where('project_id', '=', projectId).execute();
  await db.deleteFrom('upload_sessions').where('project_id', '=', projectId).execute();
  const res = await sql<{ bytes: number }>`
    WITH gone AS (DELETE FROM files WHERE project_id = ${projectId} RETURNING size, provider)
    SELECT coalesce(sum(size) FILTER (WHERE provider = 'internal'), 0)::bigint AS bytes FROM gone`.execute(db);
  await db.deleteFrom('auth_mail_templates').where('project_id', '=', projectId).execute();
  await db.deleteFrom('mail_templates').where('project_id', '=', projectId).execute();
  await db.deleteFrom('webhook_endpoints').where('project_id', '=', projectId).execute();
  await db.deleteFrom('functions').where('project_id', '=', projectId).execute();
  await db.deleteFrom('function_secrets').where('project_id', '=', projectId).execute();
  return Number(res.rows[0]?.bytes ?? 0);
}

/** End-user ids are unique across the deployment: those already taken (by any project). */
export async function takenUserIds(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('app_users').select('id').where('id', 'in', ids).execute();
  return rows.map((r) => r.id);
}

/**
 * Inserts documents as they were (ids, owners, times); returns the bytes they are charged. Each
 * document's JSON is sent once (its size is taken from the stored value, as SIZE does).
 */
export async function insertDocuments(db: Db, projectId: string, collectionId: string, docs: DocumentRecord[]): Promise<number> {
  if (!docs.length) return 0;
  const values = docs.map((d) => sql`(${d.id}, ${d.ownerId}, ${JSON.stringify(d.data)}::jsonb, ${d.createdAt}::timestamptz, ${d.updatedAt}::timestamptz, ${d.deletedAt}::timestamptz)`);
  const res = await sql<{ bytes: number }>`
    WITH ins AS (
      INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at, deleted_at)
      SELECT ${projectId}, ${collectionId}, v.id, v.owner_id, v.data, octet_length(v.data::text), v.created_at, v.updated_at, v.deleted_at
        FROM (VALUES ${sql.join(values)}) AS v (id, owner_id, data, created_at, updated_at, deleted_at)
      RETURNING size_bytes)
    SELECT coalesce(sum(size_bytes), 0)::bigint AS bytes FROM ins`.execute(db);
  return Number(res.rows[0]?.bytes ?? 0);
}

export async function insertUsers(db: Db, projectId: string, users: UserRecord[]): Promise<void> {
  if (!users.length) return;
  await db
    .insertInto('app_users')
    .values(users.map((u) => ({
      id: u.id, project_id: projectId, email: u.email, password_hash: u.passwordHash, email_verified: u.emailVerified,
      data: JSON.stringify(u.data) as unknown as Record<string, unknown>, github_id: u.githubId, google_id: u.googleId,
      auth_providers: u.authProviders, created_at: u.createdAt, updated_at: u.updatedAt, disabled_at: u.disabledAt ? new Date(u.disabledAt) : null,
      is_anonymous: u.isAnonymous === true,
    })))
    .execute();
}

/** File records under the target project's folder; returns their bytes. */
export async function insertFiles(db: Db, projectId: string, files: FileRecord[]): Promise<number> {
  if (!files.length) return 0;
  await db
    .insertInto('files')
    .values(files.map((f) => ({
      project_id: projectId, id: f.id, path: `${projectId}/${f.name}`, owner_id: f.ownerId, size: f.size,
      content_type: f.contentType, provider: f.provider, status: 'confirmed' as const,
      created_at: f.createdAt, confirmed_at: f.confirmedAt ?? f.createdAt, private: f.private ?? null,
    })))
    .execute();
  return files.reduce((n, f) => n + f.size, 0);
}

/*
 * Users' second factors and identities. Each row is joined to its user in the target project:
 * a row naming any other account is not inserted, and the caller compares the counts.
 */

async function insertedCount(db: Db, query: RawBuilder<{ n: number }>): Promise<number> {
  const res = await query.execute(db);
  return Number(res.rows[0]?.n ?? 0);
}

export async function insertTotp(db: Db, projectId: string, rows: TotpRecord[]): Promise<number> {
  const values = rows.map((t) => sql`(${t.userId}, ${JSON.stringify(t.secret)}::jsonb, ${t.verifiedAt}::timestamptz, ${t.lastStep}::bigint, ${t.createdAt}::timestamptz)`);
  return insertedCount(db, sql<{ n: number }>`
    WITH ins AS (
      INSERT INTO app_user_totp (user_id, project_id, secret, verified_at, last_step, created_at)
      SELECT v.user_id, ${projectId}, v.secret, v.verified_at, v.last_step, v.created_at
        FROM (VALUES ${sql.join(values)}) AS v (user_id, secret, verified_at, last_step, created_at)
        JOIN app_users u ON u.id = v.user_id AND u.project_id = ${projectId}
      RETURNING 1)
    SELECT count(*)::int AS n FROM ins`);
}

export async function insertRecoveryCodes(db: Db, projectId: string, rows: RecoveryCodeRecord[]): Promise<number> {
  const values = rows.map((c) => sql`(${c.userId}, ${c.codeHash}, ${c.usedAt}::timestamptz, ${c.createdAt}::timestamptz)`);
  return insertedCount(db, sql<{ n: number }>`
    WITH ins AS (
      INSERT INTO app_user_recovery_codes (user_id, code_hash, project_id, used_at, created_at)
      SELECT v.user_id, v.code_hash, ${projectId}, v.used_at, v.created_at
        FROM (VALUES ${sql.join(values)}) AS v (user_id, code_hash, used_at, created_at)
        JOIN app_users u ON u.id = v.user_id AND u.project_id = ${projectId}
      RETURNING 1)
    SELECT count(*)::int AS n FROM ins`);
}

export async function insertPasskeys(db: Db, projectId: string, rows: PasskeyRecord[]): Promise<number> {
  const values = rows.map((k) => sql`(${k.id}, ${k.userId}, ${k.credentialId}, ${k.publicKey}, ${k.counter}::bigint, ${k.transports}::text[], ${k.rpId},
    ${k.backupEligible}::boolean, ${k.backedUp}::boolean, ${k.name}, ${k.createdAt}::timestamptz, ${k.lastUsedAt}::timestamptz)`);
  return insertedCount(db, sql<{ n: number }>`
    WITH ins AS (
      INSERT INTO app_user_passkeys (id, project_id, user_id, credential_id, public_key, counter, transports, rp_id, backup_eligible, backed_up, name, created_at, last_used_at)
      SELECT v.id, ${projectId}, v.user_id, v.credential_id, v.public_key, v.counter, v.transports, v.rp_id, v.backup_eligible, v.backed_up, v.name, v.created_at, v.last_used_at
        FROM (VALUES ${sql.join(values)}) AS v (id, user_id, credential_id, public_key, counter, transports, rp_id, backup_eligible, backed_up, name, created_at, last_used_at)
        JOIN app_users u ON u.id = v.user_id AND u.project_id = ${projectId}
      RETURNING 1)
    SELECT count(*)::int AS n FROM ins`);
}

export async function insertIdentities(db: Db, projectId: string, rows: IdentityRecord[]): Promise<number> {
  const values = rows.map((i) => sql`(${i.provider}, ${i.issuer}, ${i.subject}, ${i.userId}, ${i.email}, ${i.createdAt}::timestamptz, ${i.lastSignInAt}::timestamptz)`);
  return insertedCount(db, sql<{ n: number }>`
    WITH ins AS (
      INSERT INTO app_user_identities (project_id, provider, issuer, subject, user_id, email, created_at, last_sign_in_at)
      SELECT ${projectId}, v.provider, v.issuer, v.subject, v.user_id, v.email, v.created_at, v.last_sign_in_at
        FROM (VALUES ${sql.join(values)}) AS v (provider, issuer, subject, user_id, email, created_at, last_sign_in_at)
        JOIN app_users u ON u.id = v.user_id AND u.project_id = ${projectId}
      RETURNING 1)
    SELECT count(*)::int AS n FROM ins`);
}

export async function insertAuthMailTemplates(db: Db, projectId: string, rows: AuthMailTemplateRecord[]): Promise<void> {
  await db.insertInto('auth_mail_templates')
    .values(rows.map((t) => ({ project_id: projectId, kind: t.kind, locale: t.locale, subject: t.subject, html: t.html, text: t.text, updated_at: t.updatedAt })))
    .execute();
}

export async function insertMailTemplates(db: Db, projectId: string, rows: MailTemplateRecord[]): Promise<void> {
  await db.insertInto('mail_templates')
    .values(rows.map((t) => ({ project_id: projectId, key: t.key, name: t.name, subject: t.subject, html: t.html, text: t.text, is_system: false, created_at: t.createdAt, updated_at: t.updatedAt })))
    .execute();
}

/** The archive's settings over the project's own; its site URL when the archive has one. */
export async function mergeProjectSettings(db: Db, projectId: string, settings: Record<string, unknown>, siteUrl: string | null, now: Date): Promise<void> {
  await sql`UPDATE projects SET settings = settings || ${JSON.stringify(settings)}::jsonb, site_url = coalesce(${siteUrl}, site_url), updated_at = ${now}
            WHERE id = ${projectId}`.execute(db);
}

/** Ends the export's snapshot transaction when the client stops reading for this long. */
export async function setIdleTimeout(tx: Tx, ms: number): Promise<void> {
  await sql`SELECT set_config('idle_in_transaction_session_timeout', ${String(ms)}, true)`.execute(tx);
}

/** Advisory-lock space of imports (two-key form: apart from every one-key lock of the code). */
const IMPORT_LOCK_SPACE = 0x504c4e49;

/**
 * At most one import per operator at a time, across every node: a lock held until the
 * import's transaction ends (commit, rollback, or the connection dropped). False: one runs.
 */
export async function tryLockOperatorImport(db: Db, operatorId: string): Promise<boolean> {
  const res = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${IMPORT_LOCK_SPACE}, hashtext(${operatorId})) AS locked`.execute(db);
  return res.rows[0]!.locked;
}

/** A copy with new ids (new-ids.ts): the archive's ids and their new ids, for this transaction. */
export async function createArchivedIds(db: Db): Promise<void> {
  await sql`CREATE TEMP TABLE backup_archived_ids (id text PRIMARY KEY, new_id text NOT NULL) ON COMMIT DROP`.execute(db);
}

export async function addArchivedIds(db: Db, pairs: Array<[string, string]>): Promise<void> {
  if (!pairs.length) return;
  await sql`INSERT INTO backup_archived_ids (id, new_id)
            SELECT * FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[])
            ON CONFLICT DO NOTHING`.execute(db);
}

/** Which of these strings are ids the archive holds. */
export async function archivedAmong(db: Db, candidates: string[]): Promise<Set<string>> {
  if (!candidates.length) return new Set();
  const res = await sql<{ id: string }>`SELECT id FROM backup_archived_ids WHERE id = ANY(${candidates}::text[])`.execute(db);
  return new Set(res.rows.map((r) => r.id));
}

export async function importedDocumentsAfter(db: Db, projectId: string, collectionId: string, after: string) {
  const res = await sql<{ id: string; owner_id: string | null; data: Record<string, unknown> }>`
    SELECT id, owner_id, ${WHOLE_DATA} FROM documents
    WHERE project_id = ${projectId} AND collection_id = ${collectionId} AND id > ${after}
    ORDER BY id LIMIT ${PAGE}`.execute(db);
  return res.rows;
}

/** Owner ids and data with the new ids; same lengths, so the charged sizes do not change. */
export async function rewriteDocuments(db: Db, projectId: string, collectionId: string, rows: Array<{ id: string; ownerId: string | null; json: string }>): Promise<void> {
  if (!rows.length) return;
  const values = rows.map((r) => sql`(${r.id}, ${r.ownerId}, ${r.json})`);
  await sql`
    UPDATE documents d SET owner_id = v.owner_id, data = v.data::jsonb
      FROM (VALUES ${sql.join(values)}) AS v (id, owner_id, data)
     WHERE d.project_id = ${projectId} AND d.collection_id = ${collectionId} AND d.id = v.id`.execute(db);
}

export async function importedUsersAfter(db: Db, projectId: string, after: string) {
  return db.selectFrom('app_users').select(['id', sql<Record<string, unknown>>`${WHOLE_DATA_EXPR}`.as('data')]).where('project_id', '=', projectId).where('id', '>', after).orderBy('id').limit(PAGE).execute();
}

/** The whole profile (`json`: data and hidden fields), which app_users' trigger splits again. */
export async function rewriteUserData(db: Db, projectId: string, id: string, json: string): Promise<void> {
  await sql`UPDATE app_users SET private = NULL, secret = NULL, data = ${json}::jsonb WHERE project_id = ${projectId} AND id = ${id}`.execute(db);
}

/** Files' owners: the new id of each archived owner. */
export async function rewriteFileOwners(db: Db, projectId: string): Promise<void> {
  await sql`UPDATE files f SET owner_id = a.new_id FROM backup_archived_ids a WHERE f.project_id = ${projectId} AND f.owner_id = a.id`.execute(db);
}
