/**
 * Teams, knowing no HTTP (docs/teams.md): a project's members and their roles, invitations by
 * email, leaving and removal, ownership transfer, and an operator deleting their own account.
 * The role the caller needs for each route is checked before (guard.ts); what depends on the
 * target (the owner is untouchable, no role above one's own) is checked here, inside the
 * transaction that changes it. A membership that ends is announced on the bus: every node
 * closes that operator's console streams of the project.
 */
import type { AppContext } from '../../context.js';
import { randomToken, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { normalizeEmail } from '../../lib/email.js';
import { Errors } from '../../lib/errors.js';
import { verifyPassword } from '../../lib/passwords.js';
import { recordAudit } from '../audit/service.js';
import { requireAal2IfEnrolled, type OperatorIdentity } from '../operators/auth.js';
import { findOperatorById } from '../operators/queries.js';
import { OperatorErrors } from '../operators/errors.js';
import { planOf } from '../plans/plans.js';
import { countProjects } from '../projects/queries.js';
import { ProjectErrors } from '../projects/errors.js';
import { MemberErrors } from './errors.js';
import { forbidden } from './guard.js';
import {
  countMembersAndPending,
  countRecentInvitations,
  deleteMember,
  deleteOperatorRow,
  deleteTransfer,
  deleteTransferTo,
  findInvitationByHash,
  findTransfer,
  insertInvitation,
  insertMember,
  listMembers,
  listPendingInvitations,
  lockInvitationByHash,
  lockMember,
  lockOperator,
  lockOwnerMember,
  lockProject,
  lockTransfer,
  markInvitationAccepted,
  membershipsOf,
  operatorExists,
  ownedProjects,
  projectNameOf,
  revokeInvitation,
  setMemberRole,
  setProjectOwner,
  upsertTransfer,
  type InvitationRow,
  type MemberRow,
} from './queries.js';
import { atLeast, type Role } from './roles.js';

/** Members plus open invitations a project may have. */
export const MAX_MEMBERS_PER_PROJECT = 50;
/** Invitations one operator may send per hour, over all projects. */
export const INVITATIONS_PER_HOUR = 20;
export const INVITATION_TTL_DAYS = 7;
export const TRANSFER_TTL_DAYS = 7;
const DAY_MS = 24 * 3600 * 1000;

export type InvitableRole = Exclude<Role, 'owner'>;

/** The caller of a member route: who, and their role in the project (from the guard). */
export interface Actor {
  operator: OperatorIdentity;
  role: Role;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function memberView(m: MemberRow) {
  return { operatorId: m.operator_id, email: m.email, name: m.name, role: m.role, addedBy: m.added_by, createdAt: iso(m.created_at)!, updatedAt: iso(m.updated_at)! };
}

function invitationView(i: Pick<InvitationRow, 'id' | 'email' | 'role' | 'created_at' | 'expires_at'> & { invited_by_email?: string | null }) {
  return { _id: i.id, email: i.email, role: i.role, invitedBy: i.invited_by_email ?? null, createdAt: iso(i.created_at)!, expiresAt: iso(i.expires_at)! };
}

export async function listProjectMembers(ctx: AppContext, projectId: string) {
  return (await listMembers(ctx.db.admin, projectId)).map(memberView);
}

export async function listInvitations(ctx: AppContext, projectId: string) {
  return (await listPendingInvitations(ctx.db.admin, projectId, ctx.clock.now())).map(invitationView);
}

/** Tells every node that an operator's membership ended (their console streams close). */
async function announceRemoval(ctx: AppContext, projectId: string, operatorId: string): Promise<void> {
  try {
    await ctx.bus.publish({ type: 'member_removed', id: projectId, operatorId });
  } catch (err) {
    // The membership is gone in the database: every request and stream opening already fails.
    ctx.log.warn({ err, projectId }, 'teams: could not announce a removed member');
  }
}

function invitationLink(ctx: AppContext, token: string): string {
  return `${ctx.config.dashboardUrl.replace(/\/+$/, '')}/_/#/invitations/${token}`;
}

/**
 * Invites an address: a role no higher than the inviter's and never owner; within the
 * project's limit of members and open invitations and the inviter's hourly limit. A new
 * invitation to the same address replaces the open one. The token goes out in the mail only;
 * its SHA-256 is stored.
 */
export async function inviteMember(ctx: AppContext, actor: Actor, projectId: string, input: { email: string; role: string }) {
  const role = input.role as InvitableRole;
  if (!['admin', 'developer', 'viewer'].includes(role)) throw MemberErrors.role_invalid();
  if (!atLeast(actor.role, role)) throw MemberErrors.role_above_own(`You cannot invite someone as ${role}: your role is ${actor.role}.`);
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const token = randomToken(32);
  const { invitation, projectName } = await ctx.db.admin.transaction().execute(async (tx) => {
    await lockProject(tx, projectId);
    const members = await listMembers(tx, projectId);
    if (members.some((m) => m.email === email)) throw MemberErrors.member_exists();
    const replacing = (await listPendingInvitations(tx, projectId, now)).some((i) => i.email === email);
    if (!replacing && (await countMembersAndPending(tx, projectId, now)) >= MAX_MEMBERS_PER_PROJECT) {
      throw MemberErrors.member_limit_reached(`The project has reached its limit of ${MAX_MEMBERS_PER_PROJECT} members and pending invitations.`);
    }
    if ((await countRecentInvitations(tx, actor.operator.id, new Date(now.getTime() - 3600_000))) >= INVITATIONS_PER_HOUR) {
      throw MemberErrors.invitation_rate_limited(`You can send ${INVITATIONS_PER_HOUR} invitations per hour. Try again later.`, undefined, { headers: { 'retry-after': '3600' } });
    }
    const row = await insertInvitation(tx, { projectId, email, role, tokenHash: sha256Hex(token), invitedBy: actor.operator.id, now, expiresAt: new Date(now.getTime() + INVITATION_TTL_DAYS * DAY_MS) });
    return { invitation: row, projectName: await projectNameOf(tx, projectId) };
  });
  const link = invitationLink(ctx, token);
  const who = actor.operator.name ? `${actor.operator.name} (${actor.operator.email})` : actor.operator.email;
  try {
    await ctx.mailer.sendSystemMail({
      projectId: null,
      to: email,
      subject: `You are invited to the Plinth project ${projectName}`,
      text: `${who} invites you to the Plinth project "${projectName}" as ${role}.\n\nAccept the invitation: ${link}\n\nThe link works once and expires in ${INVITATION_TTL_DAYS} days. Sign in (or create your account) with this address, ${email}, to accept it. If you did not expect it, ignore this email.`,
      html: `<p>${escapeHtml(who)} invites you to the Plinth project <strong>${escapeHtml(projectName)}</strong> as ${role}.</p><p><a href="${escapeHtml(link)}">Accept the invitation</a></p><p>The link works once and expires in ${INVITATION_TTL_DAYS} days. Sign in (or create your account) with this address, ${escapeHtml(email)}, to accept it. If you did not expect it, ignore this email.</p>`,
      tag: 'operator.invitation',
    });
  } catch (err) {
    ctx.log.error({ err: (err as Error).message, projectId }, 'teams: invitation mail failed');
    await revokeInvitation(ctx.db.admin, projectId, invitation.id, ctx.clock.now());
    throw Errors.upstream_failed('Could not send the invitation email. Please try again later.');
  }
  return invitationView({ ...invitation, invited_by_email: actor.operator.email });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export async function revokeProjectInvitation(ctx: AppContext, projectId: string, invitationId: string): Promise<void> {
  if (!(await revokeInvitation(ctx.db.admin, projectId, invitationId, ctx.clock.now()))) throw MemberErrors.invitation_not_found();
}

/** An invitation as the link's page shows it before signing in: the token is the credential. */
export async function lookupInvitation(ctx: AppContext, token: string) {
  const row = await findInvitationByHash(ctx.db.admin, sha256Hex(token));
  if (!row || row.accepted_at || row.revoked_at) throw MemberErrors.invitation_invalid();
  if (new Date(row.expires_at).getTime() <= ctx.clock.now().getTime()) throw MemberErrors.invitation_expired();
  const accountExists = await operatorExists(ctx.db.admin, row.email);
  return { projectName: row.project_name, email: row.email, role: row.role, invitedBy: row.invited_by_email ?? null, expiresAt: iso(row.expires_at)!, accountExists };
}

/**
 * Accepts an invitation as the signed-in operator, whose verified address must be the one
 * invited. Single use: the row is locked, checked and marked in one transaction.
 */
export async function acceptInvitation(ctx: AppContext, operator: OperatorIdentity, token: string) {
  const now = ctx.clock.now();
  return ctx.db.admin.transaction().execute(async (tx) => {
    const row = await lockInvitationByHash(tx, sha256Hex(token));
    if (!row || row.accepted_at || row.revoked_at) throw MemberErrors.invitation_invalid();
    if (new Date(row.expires_at).getTime() <= now.getTime()) throw MemberErrors.invitation_expired();
    if (!safeEqual(normalizeEmail(operator.email), row.email)) throw MemberErrors.invitation_email_mismatch();
    if (!operator.isVerified) throw MemberErrors.invitation_email_unverified();
    const existing = await lockMember(tx, row.project_id, operator.id);
    if (!existing) await insertMember(tx, { projectId: row.project_id, operatorId: operator.id, role: row.role, addedBy: row.invited_by });
    await markInvitationAccepted(tx, row.id, operator.id, now);
    return { _id: row.project_id, name: row.project_name, role: existing?.role ?? row.role };
  });
}

/** Changes a member's role: never the owner's, never to owner, never above the caller's own. */
export async function changeMemberRole(ctx: AppContext, actor: Actor, projectId: string, operatorId: string, nextRole: string) {
  const role = nextRole as InvitableRole;
  if (!['admin', 'developer', 'viewer'].includes(role)) throw MemberErrors.role_invalid();
  if (!atLeast(actor.role, role)) throw MemberErrors.role_above_own(`You cannot give the ${role} role: your role is ${actor.role}.`);
  await ctx.db.admin.transaction().execute(async (tx) => {
    const target = await lockMember(tx, projectId, operatorId);
    if (!target) throw MemberErrors.member_not_found();
    if (target.role === 'owner') throw MemberErrors.member_is_owner();
    // An admin may not lower another member above their own rank (only the owner outranks admins).
    if (!atLeast(actor.role, target.role)) throw forbidden(target.role, actor.role);
    await setMemberRole(tx, projectId, operatorId, role, ctx.clock.now());
  });
  return (await listProjectMembers(ctx, projectId)).find((m) => m.operatorId === operatorId)!;
}

/** Removes a member (not the owner); their next request, and their open console streams, fail. */
export async function removeMember(ctx: AppContext, actor: Actor, projectId: string, operatorId: string): Promise<void> {
  await ctx.db.admin.transaction().execute(async (tx) => {
    const target = await lockMember(tx, projectId, operatorId);
    if (!target) throw MemberErrors.member_not_found();
    if (target.role === 'owner') throw MemberErrors.member_is_owner();
    if (!atLeast(actor.role, target.role)) throw forbidden(target.role, actor.role);
    await deleteMember(tx, projectId, operatorId);
    await deleteTransferTo(tx, projectId, operatorId);
  });
  await announceRemoval(ctx, projectId, operatorId);
}

/** The caller leaves the project (anyone but the owner). */
export async function leaveProject(ctx: AppContext, actor: Actor, projectId: string): Promise<void> {
  if (actor.role === 'owner') throw MemberErrors.owner_cannot_leave();
  await ctx.db.admin.transaction().execute(async (tx) => {
    await deleteMember(tx, projectId, actor.operator.id);
    await deleteTransferTo(tx, projectId, actor.operator.id);
  });
  await announceRemoval(ctx, projectId, actor.operator.id);
}

// Ownership transfer.

function transferView(t: NonNullable<Awaited<ReturnType<typeof findTransfer>>>) {
  return { toOperatorId: t.to_id, toEmail: t.to_email, fromOperatorId: t.from_id, createdAt: iso(t.created_at)!, expiresAt: iso(t.expires_at)! };
}

export async function getTransfer(ctx: AppContext, projectId: string) {
  const t = await findTransfer(ctx.db.admin, projectId);
  return t && new Date(t.expires_at).getTime() > ctx.clock.now().getTime() ? transferView(t) : null;
}

/** The owner offers the project to one of its admins; done when that admin accepts. */
export async function offerTransfer(ctx: AppContext, actor: Actor, projectId: string, toOperatorId: string) {
  requireAal2IfEnrolled(actor.operator);
  if (toOperatorId === actor.operator.id) throw MemberErrors.transfer_target_invalid();
  const now = ctx.clock.now();
  await ctx.db.admin.transaction().execute(async (tx) => {
    const target = await lockMember(tx, projectId, toOperatorId);
    if (!target || target.role !== 'admin') throw MemberErrors.transfer_target_invalid();
    await upsertTransfer(tx, { projectId, fromId: actor.operator.id, toId: toOperatorId, now, expiresAt: new Date(now.getTime() + TRANSFER_TTL_DAYS * DAY_MS) });
  });
  return (await getTransfer(ctx, projectId))!;
}

/** The owner withdraws the offer, or the admin it was made to declines it. */
export async function cancelTransfer(ctx: AppContext, actor: Actor, projectId: string): Promise<void> {
  const t = await findTransfer(ctx.db.admin, projectId);
  if (!t) throw MemberErrors.transfer_not_found('There is no pending ownership transfer for this project.');
  if (actor.role !== 'owner' && t.to_id !== actor.operator.id) throw forbidden('owner', actor.role);
  await deleteTransfer(ctx.db.admin, projectId);
}

/**
 * The admin the project was offered to accepts: they become its owner (on their plan, within
 * its project limit) and the previous owner an admin, in one transaction.
 */
export async function acceptTransfer(ctx: AppContext, actor: Actor, projectId: string) {
  requireAal2IfEnrolled(actor.operator);
  const now = ctx.clock.now();
  await ctx.db.admin.transaction().execute(async (tx) => {
    await lockProject(tx, projectId);
    const t = await lockTransfer(tx, projectId);
    if (!t || t.to_id !== actor.operator.id) throw MemberErrors.transfer_not_found();
    if (new Date(t.expires_at).getTime() <= now.getTime()) throw MemberErrors.transfer_expired();
    const me = await lockMember(tx, projectId, actor.operator.id);
    if (!me || me.role !== 'admin') throw MemberErrors.transfer_target_invalid();
    const limit = planOf(actor.operator.plan).projectsPerOperator;
    if (limit >= 0 && (await countProjects(tx, actor.operator.id)) >= limit) {
      throw ProjectErrors.project_limit_reached(`You already own ${limit} projects, your plan's limit: upgrade it to take this one over.`);
    }
    const owner = await lockOwnerMember(tx, projectId);
    if (owner) await setMemberRole(tx, projectId, owner, 'admin', now);
    await setMemberRole(tx, projectId, actor.operator.id, 'owner', now);
    await setProjectOwner(tx, projectId, actor.operator.id, now);
    await deleteTransfer(tx, projectId);
  });
  // The project's plan (its owner's) changed: cached copies go.
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  return { _id: projectId, role: 'owner' as const };
}

// The operator's own account.

/**
 * Deletes the signed-in operator's account, after their password (and second factor when
 * enrolled). Refused while they own projects (409 with the list). Their memberships, sessions
 * and factors go with the row; each project they were a member of records it in its audit log,
 * and their console streams close.
 */
export async function deleteOwnAccount(ctx: AppContext, operator: OperatorIdentity, password: string, ip: string | null): Promise<void> {
  const row = await findOperatorById(ctx.db.admin, operator.id);
  if (!row) throw OperatorErrors.operator_not_found();
  requireAal2IfEnrolled(operator);
  if (!(await verifyPassword(row.password_hash, password))) throw OperatorErrors.incorrect_password('Incorrect password');
  const projects = await ctx.db.admin.transaction().execute(async (tx) => {
    await lockOperator(tx, operator.id);
    const owned = await ownedProjects(tx, operator.id);
    if (owned.length) {
      throw MemberErrors.owns_projects(`You own ${owned.length} project(s): ${owned.map((p) => p.name).join(', ')}. Transfer or delete them before deleting your account.`, {
        projects: owned.map((p) => ({ _id: p.id, name: p.name })),
      });
    }
    const memberOf = await membershipsOf(tx, operator.id);
    await deleteOperatorRow(tx, operator.id);
    return memberOf;
  });
  for (const projectId of projects) {
    await announceRemoval(ctx, projectId, operator.id);
    try {
      await recordAudit(ctx, { projectId, operator: { id: operator.id, email: operator.email }, ip, action: 'operator.delete', target: operator.email, before: { member: operator.email }, after: null });
    } catch (err) {
      ctx.log.error({ err, projectId, action: 'operator.delete' }, 'audit: the entry of a successful change could not be written');
    }
  }
}
