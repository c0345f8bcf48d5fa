/**
 * SQL of a table of passkeys and of its WebAuthn ceremonies in flight, one set of statements
 * for the two pairs of tables of the same shape:
 *  - end users' (app_user_passkeys, app_user_webauthn_challenges): a project's, run in its
 *    tenant scope, where row-level security keeps each project's rows to itself;
 *  - operators' (operator_passkeys, operator_webauthn_challenges,
 *    migrations/045_operator_passkeys.sql): through the owner connection.
 * A PasskeyTables names the pair, the column of the account (user_id, operator_id) and what
 * makes a credential unique; a row of the end users' tables also carries its project's id
 * (the `scope` of an insert). passkeyStore() is the ceremony's adapter
 * (passkey-ceremony.ts) over one pair.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { storedPasskeyOf, type CeremonyPurpose, type PasskeyStore } from './passkey-ceremony.js';

type Db = Kysely<Database>;

/** End users' passkeys: a project's (each row and ceremony carries its `project_id`). */
export const USER_PASSKEYS = {
  passkeys: 'app_user_passkeys', challenges: 'app_user_webauthn_challenges', owner: 'user_id', unique: ['project_id', 'credential_id'],
} as const;

/** Operators' passkeys: the console's, one relying party. */
export const OPERATOR_PASSKEYS = {
  passkeys: 'operator_passkeys', challenges: 'operator_webauthn_challenges', owner: 'operator_id', unique: ['credential_id'],
} as const;

export type PasskeyTables = typeof USER_PASSKEYS | typeof OPERATOR_PASSKEYS;

/** The columns a new row of these tables carries besides the shared ones: a project's id for end users'. */
export type RowScope<T extends PasskeyTables> = T extends typeof USER_PASSKEYS ? { project_id: string } : Record<never, never>;

const ownerColumn = (t: PasskeyTables, ownerId: string | null) => (t.owner === 'user_id' ? { user_id: ownerId } : { operator_id: ownerId });

export function listPasskeys(db: Db, t: PasskeyTables, ownerId: string) {
  return db
    .selectFrom(t.passkeys)
    .select(['id', 'name', 'credential_id', 'transports', 'created_at', 'last_used_at', 'backed_up', 'backup_eligible'])
    .where(t.owner, '=', ownerId)
    .orderBy('created_at')
    .execute();
}

/** The passkey of a credential id, with its account as `owner_id`. */
export function findPasskeyByCredential(db: Db, t: PasskeyTables, credentialId: string) {
  return db
    .selectFrom(t.passkeys)
    .select(['id', `${t.owner} as owner_id` as const, 'credential_id', 'public_key', 'counter', 'transports', 'backup_eligible'])
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

export interface NewPasskey {
  id: string;
  ownerId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  rpId: string;
  backupEligible: boolean;
  backedUp: boolean;
  name: string;
  now: Date;
}

/** False when the credential is already registered (in this project, for end users). */
export async function insertPasskey<T extends PasskeyTables>(db: Db, table: T, scope: RowScope<T>, p: NewPasskey): Promise<boolean> {
  const t: PasskeyTables = table;
  const extra: { project_id?: string } = scope;
  const row = await db
    .insertInto(t.passkeys)
    .values({
      ...extra, ...ownerColumn(t, p.ownerId),
      id: p.id, credential_id: p.credentialId, public_key: p.publicKey, counter: p.counter, transports: p.transports,
      rp_id: p.rpId, backup_eligible: p.backupEligible, backed_up: p.backedUp, name: p.name, created_at: p.now,
    })
    .onConflict((oc) => oc.columns(t.unique).doNothing())
    .returning('id')
    .executeTakeFirst();
  return !!row;
}

/**
 * Records a verified use: only if the counter grew (or stays 0 for authenticators without one),
 * so two concurrent uses of one signed assertion cannot both pass.
 */
export async function recordPasskeyUse(db: Db, t: PasskeyTables, id: string, counter: number, backedUp: boolean, now: Date): Promise<boolean> {
  const res = await db
    .updateTable(t.passkeys)
    .set({ counter, backed_up: backedUp, last_used_at: now })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', counter)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function renamePasskey(db: Db, t: PasskeyTables, ownerId: string, id: string, name: string): Promise<boolean> {
  const res = await db.updateTable(t.passkeys).set({ name }).where('id', '=', id).where(t.owner, '=', ownerId).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Removes one passkey of the account; what the last factor gone takes with it is the caller's (same transaction). */
export async function deletePasskey(db: Db, t: PasskeyTables, ownerId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom(t.passkeys).where('id', '=', id).where(t.owner, '=', ownerId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface NewCeremony {
  challenge: string;
  /** The account (registration), or null (a discoverable sign-in: any account). */
  ownerId: string | null;
  purpose: CeremonyPurpose;
  expiresAt: Date;
}

export async function insertWebauthnChallenge<T extends PasskeyTables>(db: Db, table: T, scope: RowScope<T>, c: NewCeremony): Promise<void> {
  const t: PasskeyTables = table;
  const extra: { project_id?: string } = scope;
  await db
    .insertInto(t.challenges)
    .values({ ...extra, ...ownerColumn(t, c.ownerId), challenge: c.challenge, purpose: c.purpose, expires_at: c.expiresAt })
    .execute();
}

/** Takes a ceremony's challenge out (single use); false when unknown, another purpose or account, or expired. */
export async function takeWebauthnChallenge(db: Db, t: PasskeyTables, challenge: string, purpose: CeremonyPurpose, ownerId: string | null, now: Date): Promise<boolean> {
  let q = db.deleteFrom(t.challenges).where('challenge', '=', challenge).where('purpose', '=', purpose);
  q = ownerId === null ? q.where(t.owner, 'is', null) : q.where(t.owner, '=', ownerId);
  const row = await q.returning('expires_at').executeTakeFirst();
  return !!row && new Date(row.expires_at) > now;
}

/** The ceremony's adapter over one pair of tables (end users': in the project's tenant scope). */
export function passkeyStore<T extends PasskeyTables>(db: Db, t: T, scope: RowScope<T>): PasskeyStore {
  return {
    list: async (ownerId) => (await listPasskeys(db, t, ownerId)).map((p) => storedPasskeyOf(p)),
    findByCredential: async (credentialId) => {
      const row = await findPasskeyByCredential(db, t, credentialId);
      return row && { ...storedPasskeyOf(row), id: row.id, ownerId: row.owner_id };
    },
    recordUse: (id, counter, backedUp, now) => recordPasskeyUse(db, t, id, counter, backedUp, now),
    insertChallenge: (c) => insertWebauthnChallenge(db, t, scope, c),
    takeChallenge: (challenge, purpose, ownerId, now) => takeWebauthnChallenge(db, t, challenge, purpose, ownerId, now),
  };
}
