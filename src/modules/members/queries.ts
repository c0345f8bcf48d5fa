/** SQL of teams (migrations/071_project_members.sql): members, invitations, transfers. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Role } from './roles.js';

export interface NewMember {
  projectId: string;
  operatorId: string;
  role: Role;
  addedBy: string | null;
}

export async function insertMember(db: Kysely<Database>, m: NewMember): Promise<void> {
  await db.insertInto('project_members').values({ project_id: m.projectId, operator_id: m.operatorId, role: m.role, added_by: m.addedBy }).execute();
}

/** The operator's role in the project, read on every dashboard request (no cache). */
export async function roleOf(db: Kysely<Database>, projectId: string, operatorId: string): Promise<Role | undefined> {
  const r = await db.selectFrom('project_members').select('role').where('project_id', '=', projectId).where('operator_id', '=', operatorId).executeTakeFirst();
  return r?.role;
}

/** A project's members with their email and name, owner first, then by when they joined. */
export function listMembers(db: Kysely<Database>, projectId: string) {
  return db
    .selectFrom('project_members as m')
    .innerJoin('operators as o', 'o.id', 'm.operator_id')
    .select(['m.operator_id', 'm.role', 'm.added_by', 'm.created_at', 'm.updated_at', 'o.email', 'o.name'])
    .where('m.project_id', '=', projectId)
    .orderBy(sql`m.role = 'owner'`, 'desc')
    .orderBy('m.created_at')
    .orderBy('m.operator_id')
    .execute();
}

export type MemberRow = Awaited<ReturnType<typeof listMembers>>[number];

/** Locks and reads one member (for a change that depends on its current role). */
export function lockMember(db: Kysely<Database>, projectId: string, operatorId: string) {
  return db.selectFrom('project_members').selectAll().where('project_id', '=', projectId).where('operator_id', '=', operatorId).forUpdate().executeTakeFirst();
}

export async function setMemberRole(db: Kysely<Database>, projectId: string, operatorId: string, role: Role, now: Date): Promise<void> {
  await db.updateTable('project_members').set({ role, updated_at: now }).where('project_id', '=', projectId).where('operator_id', '=', operatorId).execute();
}

export async function deleteMember(db: Kysely<Database>, projectId: string, operatorId: string): Promise<boolean> {
  const r = await db.deleteFrom('project_members').where('project_id', '=', projectId).where('operator_id', '=', operatorId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Serialises member and invitation changes of one project (the limits count both). */
export async function lockProject(db: Kysely<Database>, projectId: string): Promise<void> {
  await db.selectFrom('projects').select('id').where('id', '=', projectId).forUpdate().execute();
}

export async function countMembersAndPending(db: Kysely<Database>, projectId: string, now: Date): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT (SELECT count(*) FROM project_members WHERE project_id = ${projectId})
         + (SELECT count(*) FROM project_invitations
             WHERE project_id = ${projectId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}) AS n`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

export async function countRecentInvitations(db: Kysely<Database>, inviterId: string, since: Date): Promise<number> {
  const r = await db
    .selectFrom('project_invitations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('invited_by', '=', inviterId)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export interface NewInvitation {
  projectId: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  tokenHash: string;
  invitedBy: string;
  now: Date;
  expiresAt: Date;
}

/** A new invitation; an open one to the same address in the project is revoked first (replaced). */
export async function insertInvitation(db: Kysely<Database>, i: NewInvitation) {
  await db
    .updateTable('project_invitations')
    .set({ revoked_at: i.now })
    .where('project_id', '=', i.projectId)
    .where('email', '=', i.email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  return db
    .insertInto('project_invitations')
    .values({ project_id: i.projectId, email: i.email, role: i.role, token_hash: i.tokenHash, invited_by: i.invitedBy, created_at: i.now, expires_at: i.expiresAt })
    .returning(['id', 'project_id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

const INVITATION_COLUMNS = ['i.id', 'i.project_id', 'i.email', 'i.role', 'i.invited_by', 'i.created_at', 'i.expires_at', 'i.accepted_at', 'i.revoked_at'] as const;

/** Open, unexpired invitations of a project, newest first, with the inviter's email. */
export function listPendingInvitations(db: Kysely<Database>, projectId: string, now: Date) {
  return db
    .selectFrom('project_invitations as i')
    .leftJoin('operators as o', 'o.id', 'i.invited_by')
    .select([...INVITATION_COLUMNS, 'o.email as invited_by_email'])
    .where('i.project_id', '=', projectId)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', now)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .execute();
}

export type InvitationRow = Awaited<ReturnType<typeof listPendingInvitations>>[number];

/** Revokes an open invitation of this project; false when there is none (unknown, used or revoked). */
export async function revokeInvitation(db: Kysely<Database>, projectId: string, id: string, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('project_invitations')
    .set({ revoked_at: now })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** An invitation by its token's hash, locked, with its project's name (for accepting it). */
export function lockInvitationByHash(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('project_invitations as i')
    .innerJoin('projects as p', 'p.id', 'i.project_id')
    .select([...INVITATION_COLUMNS, 'p.name as project_name'])
    .where('i.token_hash', '=', tokenHash)
    .forUpdate('i')
    .executeTakeFirst();
}

export function findInvitationByHash(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('project_invitations as i')
    .innerJoin('projects as p', 'p.id', 'i.project_id')
    .leftJoin('operators as o', 'o.id', 'i.invited_by')
    .select([...INVITATION_COLUMNS, 'p.name as project_name', 'o.email as invited_by_email'])
    .where('i.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function markInvitationAccepted(db: Kysely<Database>, id: string, operatorId: string, now: Date): Promise<void> {
  await db.updateTable('project_invitations').set({ accepted_at: now, accepted_by: operatorId }).where('id', '=', id).execute();
}

// Ownership transfers.

export async function upsertTransfer(db: Kysely<Database>, t: { projectId: string; fromId: string; toId: string; now: Date; expiresAt: Date }): Promise<void> {
  await db
    .insertInto('project_transfers')
    .values({ project_id: t.projectId, from_id: t.fromId, to_id: t.toId, created_at: t.now, expires_at: t.expiresAt })
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ from_id: t.fromId, to_id: t.toId, created_at: t.now, expires_at: t.expiresAt }))
    .execute();
}

export function findTransfer(db: Kysely<Database>, projectId: string) {
  return db
    .selectFrom('project_transfers as t')
    .innerJoin('operators as o', 'o.id', 't.to_id')
    .select(['t.project_id', 't.from_id', 't.to_id', 't.created_at', 't.expires_at', 'o.email as to_email'])
    .where('t.project_id', '=', projectId)
    .executeTakeFirst();
}

export function lockTransfer(db: Kysely<Database>, projectId: string) {
  return db.selectFrom('project_transfers').selectAll().where('project_id', '=', projectId).forUpdate().executeTakeFirst();
}

export async function deleteTransfer(db: Kysely<Database>, projectId: string): Promise<boolean> {
  const r = await db.deleteFrom('project_transfers').where('project_id', '=', projectId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function setProjectOwner(db: Kysely<Database>, projectId: string, ownerId: string, now: Date): Promise<void> {
  await db.updateTable('projects').set({ owner_id: ownerId, updated_at: now }).where('id', '=', projectId).execute();
}

// Operators' own accounts.

/** The projects an operator owns (their deletion is refused while there are any). */
export function ownedProjects(db: Kysely<Database>, operatorId: string) {
  return db.selectFrom('projects').select(['id', 'name']).where('owner_id', '=', operatorId).orderBy('created_at').execute();
}

/** The projects an operator is a member of (ids): whose streams to close when the account goes. */
export async function membershipsOf(db: Kysely<Database>, operatorId: string): Promise<string[]> {
  const rows = await db.selectFrom('project_members').select('project_id').where('operator_id', '=', operatorId).execute();
  return rows.map((r) => r.project_id);
}

export async function deleteOperatorRow(db: Kysely<Database>, operatorId: string): Promise<void> {
  await db.deleteFrom('operators').where('id', '=', operatorId).execute();
}

export async function projectNameOf(db: Kysely<Database>, projectId: string): Promise<string> {
  const r = await db.selectFrom('projects').select('name').where('id', '=', projectId).executeTakeFirstOrThrow();
  return r.name;
}

/** Drops a pending transfer to this operator (they are no longer a member). */
export async function deleteTransferTo(db: Kysely<Database>, projectId: string, operatorId: string): Promise<void> {
  await db.deleteFrom('project_transfers').where('project_id', '=', projectId).where('to_id', '=', operatorId).execute();
}

export async function operatorExists(db: Kysely<Database>, email: string): Promise<boolean> {
  return !!(await db.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst());
}

/** The owner member's operator id, locked. */
export async function lockOwnerMember(db: Kysely<Database>, projectId: string): Promise<string | undefined> {
  const r = await db.selectFrom('project_members').select('operator_id').where('project_id', '=', projectId).where('role', '=', 'owner').forUpdate().executeTakeFirst();
  return r?.operator_id;
}

export async function lockOperator(db: Kysely<Database>, operatorId: string): Promise<void> {
  await db.selectFrom('operators').select('id').where('id', '=', operatorId).forUpdate().execute();
}
