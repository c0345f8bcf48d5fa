/**
 * The import of one archive, record by record, inside the caller's owner transaction:
 * collections are created as a create does, documents, users and file records are inserted in
 * batches of q.PAGE, and the end record is checked against what was read. With new ids
 * (new-ids.ts) documents and users are inserted under their new ids, and at the end every
 * reference to an archived id is rewritten. Knows no HTTP.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { sqlState } from '../../db/errors.js';
import type { Database } from '../../database.js';
import type { FieldDef, RulesConfig } from '../../db/types.js';
import { AppError } from '../../lib/errors.js';
import { METRICS, reserve } from '../../lib/quota-queries.js';
import { updateCollectionRls } from '../collections/queries.js';
import { createCollectionIn } from '../collections/service.js';
import { setRules } from '../rules/queries.js';
import { compileRules } from '../rules/service.js';
import { DataErrors } from '../data/errors.js';
import { planOf, type PlanName } from '../plans/plans.js';
import { decrypt } from '../../lib/crypto.js';
import { objectId, randomId } from '../../lib/ids.js';
import { syncChangeTriggers } from '../collections/change-trigger-queries.js';
import { MailErrors } from '../mail/errors.js';
import { checkEndpointUrl } from '../webhooks/endpoint-url.js';
import { MAX_ENDPOINTS, WEBHOOK_EVENTS } from '../webhooks/service.js';
import { StorageErrors } from '../storage/errors.js';
import { MAX_FUNCTIONS, MAX_SECRET_BYTES, MAX_SECRETS } from '../functions/service.js';
import { normaliseTrigger } from '../functions/triggers.js';
import {
  COUNT_KEYS, emptyCounts, type ArchiveRecord, type AuthMailTemplateRecord, type CollectionRecord, type Counts, type DocumentRecord, type FileRecord,
  type FunctionRecord, type FunctionSecretRecord, type FunctionVersionRecord, type IdentityRecord,
  type MailTemplateRecord, type PasskeyRecord, type RecoveryCodeRecord, type SettingsRecord, type TotpRecord, type UserRecord, type WebhookRecord,
} from './archive.js';
import { archivedRls } from './archived-rls.js';
import { BackupErrors } from './errors.js';
import { NewIds } from './new-ids.js';
import * as q from './queries.js';
import { restoredSettings, type RestoredSettings } from './settings.js';

export interface Target {
  id: string;
  plan: PlanName;
}

const MAX_CONFLICTS = 50;
/** Records held for a batch insert, at most this many characters of archive (large documents). */
const BATCH_CHARS = 4 * 1024 * 1024;
// 54000: a value too long for an index entry (the data API refuses those: value_too_long).
const BAD_VALUE = new Set(['22P02', '22007', '22008', '22009', '22003', '22021', '22P05', '23502', '23514', '54000']);

/** What each user signs in with besides a password, held for a batch insert after the users. */
interface SignInBatches {
  totp: TotpRecord[];
  recoveryCode: RecoveryCodeRecord[];
  passkey: PasskeyRecord[];
  identity: IdentityRecord[];
}

/** A function of the archive as imported: its id here, and the versions read so far. */
interface ImportedFunction {
  record: FunctionRecord;
  line: number;
  id: string;
  versions: Set<number>;
  /** Its id is taken on this server (a conflict): neither it nor its versions are inserted. */
  skipped: boolean;
}

export class Importer {
  readonly counts: Counts = emptyCounts();
  readonly conflicts: string[] = [];
  /** What the operator should know about a successful import (what did not come along, and why). */
  readonly notes: string[] = [];
  private signIn: SignInBatches = { totp: [], recoveryCode: [], passkey: [], identity: [] };
  private authMailTemplates: AuthMailTemplateRecord[] = [];
  private mailTemplates: MailTemplateRecord[] = [];
  private webhooks: Array<{ record: WebhookRecord; line: number }> = [];
  /** By name (kept on import): few (MAX_FUNCTIONS), their versions are inserted as they come. */
  private readonly functions = new Map<string, ImportedFunction>();
  private readonly secretNames = new Set<string>();
  private settings: RestoredSettings | null = null;
  private settingsSeen = false;
  /** Recovery codes left out of a copy with new ids (they are bound to the old id). */
  private recoveryCodesLeft = 0;
  private readonly collectionIds = new Map<string, string>();
  /** Collections' access rules, compiled once every collection exists (a rule may look another up). */
  private readonly rules: Array<{ id: string; name: string; fields: FieldDef[]; rules: RulesConfig; line: number }> = [];
  private docs = new Map<string, DocumentRecord[]>();
  private users: UserRecord[] = [];
  private files: FileRecord[] = [];
  private pendingLines: [number, number] = [0, 0];
  private pendingChars = 0;
  private readonly plan;
  dbBytes = 0;
  fileBytes = 0;
  sourceProject: string | null = null;
  ended: Partial<Counts> | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly tx: Kysely<Database>,
    private readonly target: Target,
    /** A copy: new ids for documents and users (new-ids.ts); null keeps the archive's ids. */
    private readonly newIds: NewIds | null,
  ) {
    this.plan = planOf(target.plan);
  }

  async start(): Promise<void> {
    if (this.newIds) await q.createArchivedIds(this.tx);
  }

  conflict(message: string) {
    if (this.conflicts.length < MAX_CONFLICTS) this.conflicts.push(message);
  }

  /** One record; `chars` is the length of its line (what holding it for the batch costs). */
  async add(record: ArchiveRecord, line: number, chars = 0): Promise<void> {
    if (line > 1 && record.type === 'header') throw BackupErrors.invalid_archive(`Line ${line}: a second header.`);
    if (line === 1 && record.type !== 'header') throw BackupErrors.invalid_archive('Line 1: the archive must start with its header.');
    if (this.ended) throw BackupErrors.invalid_archive(`Line ${line}: a record after the end record.`);
    if (this.pendingChars + chars > BATCH_CHARS) await this.flushAll();
    this.pendingChars += chars;
    this.pendingLines = [this.pendingLines[0] || line, line];
    switch (record.type) {
      case 'header':
        this.sourceProject = record.project?.id ?? null;
        return;
      case 'collection':
        return this.collection(record, line);
      case 'document':
        return this.document(record, line);
      case 'user':
        this.users.push(record);
        if (this.users.length >= q.PAGE) await this.flushUsers();
        return;
      case 'file':
        this.files.push(record);
        if (this.files.length >= q.PAGE) await this.flushFiles();
        return;
      case 'totp':
      case 'recoveryCode':
      case 'passkey':
      case 'identity': {
        const list = this.signIn[record.type] as ArchiveRecord[];
        list.push(record);
        if (list.length >= q.PAGE) await this.flushSignIn();
        return;
      }
      case 'authMailTemplate':
        this.authMailTemplates.push(record);
        if (this.authMailTemplates.length >= q.PAGE) await this.flushTemplates();
        return;
      case 'mailTemplate':
        this.mailTemplates.push(record);
        if (this.mailTemplates.length >= q.PAGE) await this.flushTemplates();
        return;
      case 'webhook':
        if (this.webhooks.length >= MAX_ENDPOINTS) throw BackupErrors.invalid_archive(`Line ${line}: more than ${MAX_ENDPOINTS} webhook endpoints (a project has at most ${MAX_ENDPOINTS}).`);
        this.webhooks.push({ record, line });
        this.counts.webhooks++;
        return;
      case 'function':
        return this.functionRecord(record, line);
      case 'functionVersion':
        return this.functionVersion(record, line);
      case 'functionSecret':
        return this.functionSecret(record, line);
      case 'settings':
        return this.settingsRecord(record, line);
      case 'end':
        await this.flushAll();
        this.ended = record.counts;
    }
  }

  private async collection(r: CollectionRecord, line: number) {
    try {
      const rls = archivedRls(r.name, r.fields, r.rls, line);
      const created = await createCollectionIn(this.tx, this.ctx.clock.now(), this.target.id, this.target.plan, { name: r.name, fields: r.fields, rls: rls.input, indexes: r.indexes, searchLanguage: r.searchLanguage, realtime: r.realtime === true });
      // An owner field the schema does not declare (the API stores those too): kept as it was.
      if (created.rls.ownerField !== rls.ownerField) await updateCollectionRls(this.tx, created.id, { ...created.rls, ownerField: rls.ownerField }, this.ctx.clock.now());
      this.collectionIds.set(r.name, created.id);
      this.counts.collections++;
      if (r.rules) this.rules.push({ id: created.id, name: r.name, fields: created.fields, rules: { list: null, view: null, create: null, update: null, delete: null, ...r.rules }, line });
    } catch (err) {
      if (err instanceof AppError && !err.message.startsWith(`Line ${line}`)) throw err.withMessage(`Line ${line} (collection ${r.name}): ${err.message}`);
      throw err;
    }
  }

  private async document(r: DocumentRecord, line: number) {
    if (!this.collectionIds.has(r.collection)) throw BackupErrors.invalid_archive(`Line ${line}: document of collection '${r.collection}', which the archive does not declare before it.`);
    const list = this.docs.get(r.collection) ?? [];
    list.push(r);
    this.docs.set(r.collection, list);
    if (list.length >= q.PAGE) await this.flushDocs(r.collection, list);
  }

  /** Runs one batch insert; a database refusal names the lines it came from. */
  private async guarded(what: string, fn: () => Promise<void>) {
    const [from, to] = this.pendingLines;
    const where = from === to ? `Line ${from}` : `Lines ${from}-${to}`;
    try {
      await fn();
    } catch (err) {
      const code = sqlState(err);
      if (code === '23505') {
        this.conflict(`${where}: ${what}: a value that must be unique is already taken (${(err as { constraint?: string }).constraint ?? 'unique index'}).`);
        throw BackupErrors.import_conflicts(undefined, { conflicts: this.conflicts });
      }
      if (code && BAD_VALUE.has(code)) throw BackupErrors.invalid_archive(`${where}: ${what}: a value the database refuses (${(err as Error).message}).`);
      throw err;
    }
  }

  /** The collections this import created (their partitions' ids). */
  get createdCollections(): string[] {
    return [...this.collectionIds.values()];
  }

  /** With new ids: the batch under its new ids, and its old ids remembered for the rewrite. */
  private async renamed<T extends { id: string }>(batch: T[]): Promise<T[]> {
    if (!this.newIds) return batch;
    const ids = this.newIds;
    await q.addArchivedIds(this.tx, batch.map((r) => [r.id, ids.of(r.id)]));
    return batch.map((r) => ({ ...r, id: ids.of(r.id) }));
  }

  private async flushDocs(name: string, list: DocumentRecord[]) {
    this.docs.set(name, []);
    const batch = await this.renamed(list);
    await this.guarded(`documents of '${name}'`, async () => {
      this.dbBytes += await q.insertDocuments(this.tx, this.target.id, this.collectionIds.get(name)!, batch);
    });
    // The plan's database limit ends a runaway import at the first batch beyond it.
    if (this.plan.databaseBytes >= 0 && this.dbBytes > this.plan.databaseBytes) throw DataErrors.database_limit(`The documents need more than ${this.plan.databaseBytes} bytes, the plan's database limit.`);
    this.counts.documents += list.length;
    this.pendingLines = [0, 0];
  }

  private async flushUsers() {
    const batch = await this.renamed(this.users);
    this.users = [];
    const taken = new Set(await q.takenUserIds(this.tx, batch.map((u) => u.id)));
    for (const id of taken) this.conflict(`User ${id}: this id is taken on this server (is the source project still here? Import with newIds=true for a copy, delete the source first, or import on another server).`);
    await this.guarded('users', () => q.insertUsers(this.tx, this.target.id, batch.filter((u) => !taken.has(u.id))));
    this.counts.users += batch.length;
    this.pendingLines = [0, 0];
  }

  private async flushFiles() {
    const batch = this.files;
    this.files = [];
    await this.guarded('files', async () => {
      this.fileBytes += await q.insertFiles(this.tx, this.target.id, batch);
    });
    if (this.plan.storageBytes >= 0 && this.fileBytes > this.plan.storageBytes) throw StorageErrors.storage_limit_exceeded(`The files need more than ${this.plan.storageBytes} bytes, the plan's storage limit.`);
    this.counts.files += batch.length;
    this.pendingLines = [0, 0];
  }

  async flushAll() {
    this.pendingChars = 0;
    for (const [name, list] of this.docs) if (list.length) await this.flushDocs(name, list);
    if (this.users.length) await this.flushUsers();
    await this.flushSignIn();
    if (this.files.length) await this.flushFiles();
    await this.flushTemplates();
  }

  private userIdOf(id: string): string {
    return this.newIds ? this.newIds.of(id) : id;
  }

  /**
   * Each batch must name users of this import: an inserted row is joined to its user in the
   * target project, so a record naming any other account (of another project, or none) is
   * refused, not attached. While conflicts are pending (users already taken), the rows of those
   * users are merely skipped: the import fails on the conflicts anyway.
   */
  private checkInserted(kind: string, expected: number, inserted: number) {
    if (inserted !== expected && !this.conflicts.length) {
      const [from, to] = this.pendingLines;
      throw BackupErrors.invalid_archive(`Lines ${from}-${to}: ${expected - inserted} ${kind} name a user the archive does not hold (before them).`);
    }
  }

  /** Second factors and provider identities, after the users they belong to. */
  private async flushSignIn() {
    const b = this.signIn;
    if (!b.totp.length && !b.recoveryCode.length && !b.passkey.length && !b.identity.length) return;
    if (this.users.length) await this.flushUsers();
    this.signIn = { totp: [], recoveryCode: [], passkey: [], identity: [] };
    const key = this.ctx.config.encryptionKey;
    // A secret this server cannot read would be a factor nobody can use (and a user locked out
    // where a second factor is required): the archive was made on a server with another key.
    const totp = b.totp.filter((t) => {
      if (decrypt(key, t.secret) !== null) return true;
      this.conflict(`User ${t.userId}: the authenticator-app secret was encrypted with another ENCRYPTION_KEY than this server's; restore on a server with the source's ENCRYPTION_KEY (docs/backup.md).`);
      return false;
    });
    if (totp.length) {
      await this.guarded('authenticator apps', async () => {
        this.checkInserted('authenticator apps', totp.length, await q.insertTotp(this.tx, this.target.id, totp.map((t) => ({ ...t, userId: this.userIdOf(t.userId) }))));
      });
    }
    this.counts.totpFactors += b.totp.length;
    if (this.newIds) {
      // A recovery code is kept as a keyed hash bound to the account's id: under a new id no
      // code would ever match. Users with a factor generate a new set (docs/backup.md).
      this.recoveryCodesLeft += b.recoveryCode.length;
    } else if (b.recoveryCode.length) {
      await this.guarded('recovery codes', async () => {
        this.checkInserted('recovery codes', b.recoveryCode.length, await q.insertRecoveryCodes(this.tx, this.target.id, b.recoveryCode));
      });
    }
    this.counts.recoveryCodes += b.recoveryCode.length;
    if (b.passkey.length) {
      // Passkey ids are unique per server: a copy's get new ones (sign-in finds a passkey by its credential id).
      const keys = b.passkey.map((k) => ({ ...k, id: this.newIds ? randomId() : k.id, userId: this.userIdOf(k.userId) }));
      await this.guarded('passkeys', async () => {
        this.checkInserted('passkeys', keys.length, await q.insertPasskeys(this.tx, this.target.id, keys));
      });
    }
    this.counts.passkeys += b.passkey.length;
    if (b.identity.length) {
      await this.guarded('provider identities', async () => {
        this.checkInserted('provider identities', b.identity.length, await q.insertIdentities(this.tx, this.target.id, b.identity.map((i) => ({ ...i, userId: this.userIdOf(i.userId) }))));
      });
    }
    this.counts.identities += b.identity.length;
    this.pendingLines = [0, 0];
  }

  /** The project's own auth mail texts and mail templates (custom templates are a plan feature). */
  private async flushTemplates() {
    const auth = this.authMailTemplates;
    const own = this.mailTemplates;
    this.authMailTemplates = [];
    this.mailTemplates = [];
    if (auth.length) {
      await this.guarded('auth mail templates', () => q.insertAuthMailTemplates(this.tx, this.target.id, auth));
      this.counts.authMailTemplates += auth.length;
    }
    if (own.length) {
      if (!this.plan.customMailTemplates) throw MailErrors.mail_custom_templates_pro('The archive holds custom mail templates, a Pro feature: import it into a project of a Pro account.');
      await this.guarded('mail templates', () => q.insertMailTemplates(this.tx, this.target.id, own));
      this.counts.mailTemplates += own.length;
    }
  }

  /**
   * The webhook endpoints, once the collections exist (an endpoint decides which collections
   * write to the change stream), checked as a create checks them, with their signing secrets as
   * stored (receivers keep verifying). A copy with new ids gets them disabled: enabled, it would
   * send its own events, signed alike, to the original's receivers.
   */
  private async applyWebhooks() {
    if (!this.webhooks.length) return;
    const key = this.ctx.config.encryptionKey;
    const rows: Array<Omit<WebhookRecord, 'type'>> = [];
    for (const { record: w, line } of this.webhooks) {
      if (decrypt(key, w.secret) === null) {
        this.conflict(`Webhook endpoint ${w.id}: its signing secret was encrypted with another ENCRYPTION_KEY than this server's; restore on a server with the source's ENCRYPTION_KEY (docs/backup.md).`);
        continue;
      }
      let url: string;
      try {
        url = checkEndpointUrl(w.url, this.ctx.config.webhooks.allowPrivateUrls);
      } catch (err) {
        if (err instanceof AppError) throw BackupErrors.invalid_archive(`Line ${line} (webhook endpoint): ${err.message}`);
        throw err;
      }
      const unknown = w.events.find((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
      if (unknown !== undefined) throw BackupErrors.invalid_archive(`Line ${line} (webhook endpoint): unknown event '${unknown.slice(0, 40)}' (${WEBHOOK_EVENTS.join(', ')}).`);
      const copy = this.newIds !== null;
      rows.push({
        id: copy ? objectId() : w.id, url, description: w.description, events: [...new Set(w.events)], collections: [...new Set(w.collections.map((c) => c.toLowerCase()))],
        secret: w.secret, enabled: copy ? false : w.enabled, disabledReason: copy ? 'copied from a backup: enable it when this copy should send its events' : w.disabledReason,
        createdAt: w.createdAt, updatedAt: w.updatedAt,
      });
    }
    if (rows.length) {
      this.pendingLines = [this.webhooks[0]!.line, this.webhooks[this.webhooks.length - 1]!.line];
      await this.guarded('webhook endpoints', () => q.insertWebhooks(this.tx, this.target.id, rows));
      await syncChangeTriggers(this.tx, this.target.id);
      if (this.newIds && this.webhooks.some((w) => w.record.enabled)) this.notes.push('Webhook endpoints were copied disabled (a copy would send its events to the original\'s receivers): enable them when this copy should send.');
    }
  }

  /** Runs one insert of the record on `line` (a refusal names that line), whatever batch is pending. */
  private async guardedAt(line: number, what: string, fn: () => Promise<void>) {
    const pending = this.pendingLines;
    this.pendingLines = [line, line];
    try {
      await this.guarded(what, fn);
    } finally {
      this.pendingLines = pending;
    }
  }

  /**
   * A function, checked as a deploy checks it (its trigger normalised by its kind, a hook not on
   * users, one auth hook per event, at most MAX_FUNCTIONS), inserted at once so its versions can
   * follow; its name is kept, its id is new in a copy (new-ids.ts) and kept otherwise (function
   * ids are unique per server: a taken one is a conflict, as a user's is).
   */
  private async functionRecord(r: FunctionRecord, line: number) {
    const bad = (why: string) => BackupErrors.invalid_archive(`Line ${line} (function ${r.name}): ${why}`);
    if (this.functions.size >= MAX_FUNCTIONS) throw bad(`more than ${MAX_FUNCTIONS} functions (a project has at most ${MAX_FUNCTIONS}).`);
    if (this.functions.has(r.name)) throw bad('a second function of this name.');
    let trigger: Record<string, unknown>;
    try {
      trigger = normaliseTrigger(r.kind, r.trigger);
    } catch (err) {
      if (err instanceof AppError) throw bad(err.message);
      throw err;
    }
    if (trigger.collection === 'users') throw bad('hooks on users are auth functions (kind "auth" or "after" with trigger.auth).');
    if (r.kind === 'auth') {
      const other = [...this.functions.values()].find((f) => f.record.kind === 'auth' && f.record.trigger.event === trigger.event);
      if (other) throw bad(`the function '${other.record.name}' already handles ${String(trigger.event)} (one auth hook per event).`);
    }
    const id = this.newIds ? this.newIds.of(r.id) : r.id;
    const skipped = !this.newIds && (await q.takenFunctionIds(this.tx, [id])).length > 0;
    if (skipped) this.conflict(`Function ${r.name}: its id ${id} is taken on this server (is the source project still here? Import with newIds=true for a copy, delete the source first, or import on another server).`);
    const record = { ...r, trigger };
    this.functions.set(r.name, { record, line, id, versions: new Set(), skipped });
    if (!skipped) await this.guardedAt(line, `function ${r.name}`, () => q.insertFunctions(this.tx, this.target.id, [{ ...record, id }]));
    this.counts.functions++;
  }

  /**
   * One version of a function declared before it: the bundle that runs is restored as it was
   * (the same bytes on every node, not compiled again by this server's esbuild), so its hash
   * must be the sha256 of it (the hash names the sandbox unit that runs it).
   */
  private async functionVersion(r: FunctionVersionRecord, line: number) {
    const f = this.functions.get(r.function);
    if (!f) throw BackupErrors.invalid_archive(`Line ${line}: a version of function '${r.function}', which the archive does not declare before it.`);
    if (f.versions.has(r.version)) throw BackupErrors.invalid_archive(`Line ${line}: a second version ${r.version} of function '${r.function}'.`);
    if (createHash('sha256').update(r.compiled).digest('hex') !== r.hash) throw BackupErrors.invalid_archive(`Line ${line}: version ${r.version} of function '${r.function}': its hash is not the sha256 of its compiled code.`);
    f.versions.add(r.version);
    if (!f.skipped) {
      await this.guardedAt(line, `version ${r.version} of function ${r.function}`, () => q.insertFunctionVersions(this.tx, this.target.id, [{
        functionId: f.id, version: r.version, language: r.language, source: r.source, compiled: r.compiled, hash: r.hash, createdAt: r.createdAt,
      }]));
    }
    this.counts.functionVersions++;
  }

  /**
   * A function secret, as stored (encrypted with ENCRYPTION_KEY), as webhook signing secrets
   * are: one this server cannot decrypt is a conflict (the archive was made on a server with
   * another key; the function would run without it).
   */
  private async functionSecret(r: FunctionSecretRecord, line: number) {
    if (this.secretNames.size >= MAX_SECRETS) throw BackupErrors.invalid_archive(`Line ${line}: more than ${MAX_SECRETS} function secrets (a project has at most ${MAX_SECRETS}).`);
    if (this.secretNames.has(r.name)) throw BackupErrors.invalid_archive(`Line ${line}: a second function secret ${r.name}.`);
    this.secretNames.add(r.name);
    this.counts.functionSecrets++;
    const plain = decrypt(this.ctx.config.encryptionKey, r.value);
    if (plain === null) {
      this.conflict(`Function secret ${r.name}: it was encrypted with another ENCRYPTION_KEY than this server's; restore on a server with the source's ENCRYPTION_KEY, or set it again after a restore without it (docs/backup.md).`);
      return;
    }
    if (Buffer.byteLength(plain) > MAX_SECRET_BYTES) throw BackupErrors.invalid_archive(`Line ${line}: function secret ${r.name} is larger than ${MAX_SECRET_BYTES} bytes.`);
    await this.guardedAt(line, `function secret ${r.name}`, () => q.insertFunctionSecrets(this.tx, this.target.id, [r]));
  }

  /**
   * Every function has the version it runs; a hook naming a collection the archive lacks is
   * kept as stored (the API keeps one whose collection was deleted) and named in the notes.
   */
  private checkFunctions() {
    const collections = new Set([...this.collectionIds.keys()].map((n) => n.toLowerCase()));
    const orphans: string[] = [];
    for (const f of this.functions.values()) {
      if (!f.versions.has(f.record.activeVersion)) {
        throw BackupErrors.invalid_archive(`Line ${f.line} (function ${f.record.name}): its active version ${f.record.activeVersion} is not among its versions in the archive (${[...f.versions].sort((a, b) => a - b).join(', ') || 'none'}).`);
      }
      const target = f.record.trigger.collection;
      if (typeof target === 'string' && !collections.has(target)) orphans.push(`${f.record.name} (${target})`);
    }
    if (orphans.length) this.notes.push(`Hooks on collections the archive does not hold were restored as they were, and run once such a collection exists: ${orphans.slice(0, 20).join(', ')}.`);
    const scheduled = [...this.functions.values()].filter((f) => f.record.enabled && (f.record.kind === 'schedule' || f.record.kind === 'after')).map((f) => f.record.name);
    if (this.newIds && scheduled.length) this.notes.push(`Functions were copied enabled, with the same secrets: the scheduled functions and after-hooks of the copy (${scheduled.slice(0, 20).join(', ')}) call out as the original's do; disable them if this copy should not.`);
  }

  private settingsRecord(r: SettingsRecord, line: number) {
    if (this.settingsSeen) throw BackupErrors.invalid_archive(`Line ${line}: a second settings record.`);
    this.settingsSeen = true;
    this.settings = restoredSettings(this.ctx, r.settings, r.siteUrl, line);
  }

  /**
   * The collections' access rules, compiled against the imported collections as a save of them
   * would be (docs/rules.md), so the partitions get their policies; a rule that does not
   * compile here (a field or collection the archive lacks) is the archive's error.
   */
  private async applyRules() {
    for (const c of this.rules) {
      try {
        const compiled = await compileRules(this.tx, this.target.id, { id: c.id, fields: c.fields }, c.rules);
        await setRules(this.tx, c.id, c.rules, compiled, this.ctx.clock.now());
      } catch (err) {
        if (err instanceof AppError) throw BackupErrors.invalid_archive(`Line ${c.line} (collection ${c.name}): ${err.message}`);
        throw err;
      }
    }
  }

  /**
   * The archive's settings over the target's own (which keeps its bucket, and whatever the
   * archive does not set). Provider client secrets never travel: the providers the archive
   * enables work again once their secrets are entered again.
   */
  private async applySettings() {
    const s = this.settings;
    if (!s) return;
    await q.mergeProjectSettings(this.tx, this.target.id, s.settings, s.siteUrl, this.ctx.clock.now());
    if (s.unknown.length) this.notes.push(`Settings this server does not know were left out: ${s.unknown.slice(0, 20).join(', ')}.`);
    const providers = [
      ...['github', 'google'].filter((p) => (s.settings.authProviders as Record<string, { enabled?: boolean }> | undefined)?.[p]?.enabled),
      ...Object.keys((s.settings.oidcProviders ?? {}) as Record<string, unknown>),
    ];
    if (providers.length) this.notes.push(`Sign-in providers came back without their client secrets (never in an archive): enter them again for ${providers.join(', ')}.`);
  }

  /** The archive is whole (its end record matches what was read) and the plan allows it. */
  async finish() {
    if (!this.ended) throw BackupErrors.invalid_archive('The archive has no end record: it was cut short.');
    for (const k of COUNT_KEYS) {
      // A version 1 end record counts the first four only: the others are then 0.
      const counted = this.ended[k] ?? 0;
      if (counted !== this.counts[k]) throw BackupErrors.invalid_archive(`The end record counts ${String(counted)} ${k}, the archive holds ${this.counts[k]}.`);
    }
    if (this.newIds) await this.rewriteReferences(this.newIds);
    await this.applyRules();
    await this.applyWebhooks();
    this.checkFunctions();
    await this.applySettings();
    if (this.recoveryCodesLeft) {
      this.notes.push(`${this.recoveryCodesLeft} recovery codes were left out: they are bound to the user's id, which newIds changes. Those users generate a new set (their authenticator apps and passkeys came along).`);
    }
    const db = { subjectId: this.target.id, metric: METRICS.dbBytes };
    const storage = { subjectId: this.target.id, metric: METRICS.storageBytes };
    if ((await reserve(this.tx, db, this.dbBytes, this.plan.databaseBytes)) === null) throw DataErrors.database_limit(`The documents need ${this.dbBytes} bytes, over the plan's database limit.`);
    if ((await reserve(this.tx, storage, this.fileBytes, this.plan.storageBytes)) === null) throw StorageErrors.storage_limit_exceeded(`The files need ${this.fileBytes} bytes, over the plan's storage limit.`);
  }

  /**
   * Every archived id still held somewhere (owner ids, owner fields, references, any string of
   * documents' and users' data, files' owners) becomes its new id: a pass over what was
   * inserted, a page at a time, once all the archive's ids are known.
   */
  private async rewriteReferences(ids: NewIds) {
    for (const collectionId of this.collectionIds.values()) {
      for (let after = ''; ;) {
        const rows = await q.importedDocumentsAfter(this.tx, this.target.id, collectionId, after);
        const found = new Set<string>();
        for (const r of rows) {
          NewIds.candidates(r.data, found);
          if (r.owner_id) found.add(r.owner_id);
        }
        const archived = await q.archivedAmong(this.tx, [...found]);
        const changed = rows
          .map((r) => ({ id: r.id, ownerId: r.owner_id && archived.has(r.owner_id) ? ids.of(r.owner_id) : r.owner_id, json: JSON.stringify(ids.rewrite(r.data, archived)), before: r }))
          .filter((r) => r.ownerId !== r.before.owner_id || r.json !== JSON.stringify(r.before.data));
        await q.rewriteDocuments(this.tx, this.target.id, collectionId, changed);
        if (rows.length < q.PAGE) break;
        after = rows[rows.length - 1]!.id;
      }
    }
    for (let after = ''; ;) {
      const rows = await q.importedUsersAfter(this.tx, this.target.id, after);
      const archived = await q.archivedAmong(this.tx, [...NewIds.candidates(rows.map((r) => r.data))]);
      for (const r of rows) {
        const json = JSON.stringify(ids.rewrite(r.data, archived));
        if (json !== JSON.stringify(r.data)) await q.rewriteUserData(this.tx, this.target.id, r.id, json);
      }
      if (rows.length < q.PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    await q.rewriteFileOwners(this.tx, this.target.id);
  }
}
