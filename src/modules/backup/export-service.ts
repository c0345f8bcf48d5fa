/**
 * Project export: one consistent snapshot (a read-only REPEATABLE READ transaction in the
 * operator's tenant scope, so the policies apply) streamed as the archive (archive.ts), gzip
 * compressed, page by page with backpressure. Knows no HTTP.
 */
import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, emptyCounts, type ArchiveRecord, type Counts } from './archive.js';
import * as q from './queries.js';

/** A client that stops reading leaves the snapshot idle: PostgreSQL ends it after this. */
const STALLED_CLIENT_MS = 120_000;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Who watches an export's progress (the console's progress bar: operations.ts). */
export interface ExportOptions {
  /** Called after records are written: how many so far, and about how many there are in all. */
  onProgress?: (written: number, total: number) => void;
  /** Called once the end record is written, with its counts. */
  onEnd?: (counts: Counts) => void;
}

class ArchiveWriter {
  readonly counts: Counts = emptyCounts();
  written = 0;
  total = 1;
  constructor(private readonly out: Gzip, private readonly opts: ExportOptions) {}

  async write(record: ArchiveRecord): Promise<void> {
    if (this.out.destroyed) throw new Error('export stream closed by the client');
    if (++this.written % 200 === 0) this.opts.onProgress?.(this.written, Math.max(this.total, this.written));
    if (this.out.write(`${JSON.stringify(record)}\n`)) return;
    // A client that goes away closes the stream: stop waiting for it to drain.
    const ac = new AbortController();
    await Promise.race([once(this.out, 'drain', { signal: ac.signal }), once(this.out, 'close', { signal: ac.signal })]).catch(() => {});
    ac.abort();
  }
}

/** Walks a table in id order, a page at a time; returns how many rows it wrote. */
async function eachRow<T extends { id: string }>(page: (after: string) => Promise<T[]>, write: (row: T) => Promise<void>, pageSize = q.PAGE): Promise<number> {
  let n = 0;
  for (let after = ''; ;) {
    const rows = await page(after);
    for (const r of rows) await write(r);
    n += rows.length;
    if (rows.length < pageSize) return n;
    after = rows[rows.length - 1]!.id;
  }
}

async function writeCollections(tx: Tx, projectId: string, w: ArchiveWriter) {
  const cols = await q.collections(tx, projectId);
  for (const c of cols) {
    await w.write({ type: 'collection', name: c.name, fields: c.fields, rls: c.rls, indexes: c.indexes, searchLanguage: c.search_language, realtime: c.realtime, rules: c.rules, createdAt: c.created_at.toISOString() });
    w.counts.collections++;
  }
  for (const c of cols) {
    w.counts.documents += await eachRow((after) => q.documentsAfter(tx, projectId, c.id, after), (d) => w.write({
      type: 'document', collection: c.name, id: d.id, ownerId: d.owner_id, data: d.data,
      createdAt: d.created_at.toISOString(), updatedAt: d.updated_at.toISOString(), deletedAt: iso(d.deleted_at),
    }));
  }
}

async function writeUsers(tx: Tx, projectId: string, w: ArchiveWriter) {
  w.counts.users += await eachRow((after) => q.usersAfter(tx, projectId, after), (u) => w.write({
    type: 'user', id: u.id, email: u.email, passwordHash: u.password_hash, emailVerified: u.email_verified, data: u.data,
    githubId: u.github_id, googleId: u.google_id, authProviders: u.auth_providers,
    createdAt: u.created_at.toISOString(), updatedAt: u.updated_at.toISOString(), disabledAt: iso(u.disabled_at),
    ...(u.is_anonymous ? { isAnonymous: true } : {}),
  }));
}

async function writeFiles(tx: Tx, projectId: string, w: ArchiveWriter) {
  w.counts.files += await eachRow((after) => q.filesAfter(tx, projectId, after), (f) => w.write({
    type: 'file', id: f.id, name: f.path.slice(f.path.indexOf('/') + 1), ownerId: f.owner_id, size: f.size,
    contentType: f.content_type, provider: f.provider, createdAt: f.created_at.toISOString(), confirmedAt: iso(f.confirmed_at), private: f.private,
  }));
}

/** What each user signs in with besides a password: second factors and provider identities. */
async function writeSignInMethods(tx: Tx, projectId: string, w: ArchiveWriter) {
  w.counts.totpFactors += await eachRow((after) => q.totpAfter(tx, projectId, after), (t) => w.write({
    type: 'totp', userId: t.user_id, secret: t.secret, verifiedAt: iso(t.verified_at), lastStep: t.last_step === null ? null : Number(t.last_step), createdAt: t.created_at.toISOString(),
  }));
  w.counts.recoveryCodes += await eachRow((after) => q.recoveryCodesAfter(tx, projectId, after), (c) => w.write({
    type: 'recoveryCode', userId: c.user_id, codeHash: c.code_hash, usedAt: iso(c.used_at), createdAt: c.created_at.toISOString(),
  }));
  w.counts.passkeys += await eachRow((after) => q.passkeysAfter(tx, projectId, after), (k) => w.write({
    type: 'passkey', id: k.id, userId: k.user_id, credentialId: k.credential_id, publicKey: k.public_key, counter: Number(k.counter), transports: k.transports,
    rpId: k.rp_id, backupEligible: k.backup_eligible, backedUp: k.backed_up, name: k.name, createdAt: k.created_at.toISOString(), lastUsedAt: iso(k.last_used_at),
  }));
  w.counts.identities += await eachRow((after) => q.identitiesAfter(tx, projectId, after), (i) => w.write({
    type: 'identity', userId: i.user_id, provider: i.provider, issuer: i.issuer, subject: i.subject, email: i.email,
    createdAt: i.created_at.toISOString(), lastSignInAt: i.last_sign_in_at.toISOString(),
  }));
}

/** The project's own mail texts, webhook endpoints, functions and plain settings (never its credentials nor its own bucket). */
async function writeProjectConfig(tx: Tx, projectId: string, w: ArchiveWriter) {
  for (const t of await q.authMailTemplates(tx, projectId)) {
    await w.write({ type: 'authMailTemplate', kind: t.kind, locale: t.locale, subject: t.subject, html: t.html, text: t.text, updatedAt: t.updated_at.toISOString() });
    w.counts.authMailTemplates++;
  }
  for (const t of await q.mailTemplates(tx, projectId)) {
    await w.write({ type: 'mailTemplate', key: t.key, name: t.name, subject: t.subject, html: t.html, text: t.text, createdAt: t.created_at.toISOString(), updatedAt: t.updated_at.toISOString() });
    w.counts.mailTemplates++;
  }
  for (const e of await q.webhookEndpoints(tx, projectId)) {
    await w.write({
      type: 'webhook', id: e.id, url: e.url, description: e.description, events: e.events, collections: e.collections, secret: e.secret,
      enabled: e.enabled, disabledReason: e.disabled_reason, createdAt: e.created_at.toISOString(), updatedAt: e.updated_at.toISOString(),
    });
    w.counts.webhooks++;
  }
  await writeFunctions(tx, projectId, w);
  const row = await q.projectSettings(tx, projectId);
  await w.write({ type: 'settings', siteUrl: row.site_url, settings: portableSettings(row.settings) });
}

/**
 * Each function followed by all its versions (the active one named by the function), then the
 * function secrets as stored, still encrypted with ENCRYPTION_KEY. Not the invocation log.
 */
async function writeFunctions(tx: Tx, projectId: string, w: ArchiveWriter) {
  for (const f of await q.functions(tx, projectId)) {
    await w.write({
      type: 'function', id: f.id, name: f.name, kind: f.kind, trigger: f.trigger, enabled: f.enabled, activeVersion: f.active_version,
      createdAt: f.created_at.toISOString(), updatedAt: f.updated_at.toISOString(),
    });
    w.counts.functions++;
    w.counts.functionVersions += await eachRow((after) => q.functionVersionsAfter(tx, projectId, f.id, after), (v) => w.write({
      type: 'functionVersion', function: f.name, version: v.version, language: v.language, source: v.source, compiled: v.compiled, hash: v.hash, createdAt: v.created_at.toISOString(),
    }), q.VERSION_PAGE);
  }
  for (const s of await q.functionSecrets(tx, projectId)) {
    await w.write({ type: 'functionSecret', name: s.name, value: s.value, updatedAt: s.updated_at.toISOString() });
    w.counts.functionSecrets++;
  }
}

/**
 * The settings that travel: all of them but the project's own bucket (`storage`), whose secret
 * key stays behind (a restored project without it could not reach the bucket; its files'
 * objects are copied to the target's storage instead, docs/backup.md).
 */
export function portableSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([k]) => !NOT_PORTABLE.has(k)));
}
const NOT_PORTABLE = new Set(['storage']);

/**
 * The archive of a project as a gzip stream. The snapshot is taken before this returns, so
 * the archive shows the project as it was at the call; it is then read while the client
 * consumes the stream. An error mid-stream destroys it (the client sees a cut archive, which
 * an import refuses: no end record).
 */
export async function exportProject(ctx: AppContext, project: { id: string; name: string }, opts: ExportOptions = {}): Promise<Gzip> {
  const out = createGzip();
  const w = new ArchiveWriter(out, opts);
  let started!: () => void;
  const snapshotTaken = new Promise<void>((resolve) => (started = resolve));
  const run = ctx.db.snapshot({ projectId: project.id, keyKind: 'operator' }, async (tx) => {
    await q.setIdleTimeout(tx, STALLED_CLIENT_MS);
    if (opts.onProgress) w.total = await q.recordTotal(tx, project.id);
    await w.write({ type: 'header', format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, project, exportedAt: ctx.clock.now().toISOString() });
    started();
    await writeCollections(tx, project.id, w);
    await writeUsers(tx, project.id, w);
    await writeSignInMethods(tx, project.id, w);
    await writeFiles(tx, project.id, w);
    await writeProjectConfig(tx, project.id, w);
    await w.write({ type: 'end', counts: w.counts });
    opts.onProgress?.(w.written, w.written);
    opts.onEnd?.(w.counts);
  });
  run.then(
    () => out.end(),
    (err: unknown) => {
      started();
      ctx.log.error({ err, projectId: project.id }, 'project export failed');
      out.destroy(err instanceof Error ? err : new Error(String(err)));
    },
  );
  await snapshotTaken;
  return out;
}
