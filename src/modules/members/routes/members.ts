/**
 * /api/projects/:projectId/members, /members/invitations and /transfer: a project's team
 * (docs/teams.md). Who may call each route: src/modules/members/permissions.ts.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { envelopeOf, Email } from '../../operators/schemas.js';
import { GivenRole, Invitation, InvitationParams, Member, MemberParams, ProjectParams, Transfer } from '../schemas.js';
import {
  acceptTransfer,
  cancelTransfer,
  changeMemberRole,
  getTransfer,
  inviteMember,
  leaveProject,
  listInvitations,
  listProjectMembers,
  offerTransfer,
  removeMember,
  revokeProjectInvitation,
  type Actor,
} from '../service.js';

const tags = ['dashboard: members'];
const Done = envelopeOf(Type.Object({ message: Type.String() }));

/** The caller and the role the guard read for this request. */
const actorOf = (req: FastifyRequest): Actor => ({ operator: operatorOf(req), role: req.projectRole! });

export default async function memberRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/members',
    { schema: { tags, summary: "The project's members and their roles", params: ProjectParams, response: { 200: envelopeOf(Type.Array(Member)) } } },
    async (req) => ok(await listProjectMembers(ctx, req.params.projectId), 'Members'),
  );

  app.patch(
    '/api/projects/:projectId/members/:operatorId',
    {
      schema: { tags, summary: "Change a member's role (not the owner's; never above your own)", params: MemberParams, body: Type.Object({ role: GivenRole }), response: { 200: envelopeOf(Member) } },
    },
    async (req) => ok(await changeMemberRole(ctx, actorOf(req), req.params.projectId, req.params.operatorId, req.body.role), 'Role changed'),
  );

  app.delete(
    '/api/projects/:projectId/members/:operatorId',
    { schema: { tags, summary: 'Remove a member (not the owner); effective on their next request', params: MemberParams, response: { 200: Done } } },
    async (req) => {
      await removeMember(ctx, actorOf(req), req.params.projectId, req.params.operatorId);
      return ok({ message: 'Member removed' }, 'Member removed');
    },
  );

  app.post(
    '/api/projects/:projectId/members/leave',
    { schema: { tags, summary: 'Leave the project (anyone but its owner)', params: ProjectParams, response: { 200: Done } } },
    async (req) => {
      await leaveProject(ctx, actorOf(req), req.params.projectId);
      return ok({ message: 'You left the project' }, 'You left the project');
    },
  );

  app.get(
    '/api/projects/:projectId/members/invitations',
    { schema: { tags, summary: 'Pending invitations', params: ProjectParams, response: { 200: envelopeOf(Type.Array(Invitation)) } } },
    async (req) => ok(await listInvitations(ctx, req.params.projectId), 'Pending invitations'),
  );

  app.post(
    '/api/projects/:projectId/members/invitations',
    {
      schema: {
        tags,
        summary: 'Invite an address (a mail with a link valid 7 days, single use)',
        params: ProjectParams,
        body: Type.Object({ email: Email, role: GivenRole }),
        response: { 201: envelopeOf(Invitation) },
      },
    },
    async (req, reply) => reply.status(201).send(ok(await inviteMember(ctx, actorOf(req), req.params.projectId, req.body), 'Invitation sent')),
  );

  app.delete(
    '/api/projects/:projectId/members/invitations/:invitationId',
    { schema: { tags, summary: 'Revoke a pending invitation', params: InvitationParams, response: { 200: Done } } },
    async (req) => {
      await revokeProjectInvitation(ctx, req.params.projectId, req.params.invitationId);
      return ok({ message: 'Invitation revoked' }, 'Invitation revoked');
    },
  );

  app.get(
    '/api/projects/:projectId/transfer',
    { schema: { tags, summary: 'The pending ownership transfer, if any', params: ProjectParams, response: { 200: envelopeOf(Type.Union([Transfer, Type.Null()])) } } },
    async (req) => ok(await getTransfer(ctx, req.params.projectId), 'Ownership transfer'),
  );

  app.post(
    '/api/projects/:projectId/transfer',
    {
      schema: {
        tags,
        summary: 'Offer the ownership to an admin (done when they accept)',
        params: ProjectParams,
        body: Type.Object({ operatorId: Type.String({ maxLength: 64 }) }),
        response: { 200: envelopeOf(Transfer) },
      },
    },
    async (req) => ok(await offerTransfer(ctx, actorOf(req), req.params.projectId, req.body.operatorId), 'Ownership transfer offered'),
  );

  app.delete(
    '/api/projects/:projectId/transfer',
    { schema: { tags, summary: 'Withdraw (owner) or decline (the admin it was offered to) the pending transfer', params: ProjectParams, response: { 200: Done } } },
    async (req) => {
      await cancelTransfer(ctx, actorOf(req), req.params.projectId);
      return ok({ message: 'Ownership transfer cancelled' }, 'Ownership transfer cancelled');
    },
  );

  app.post(
    '/api/projects/:projectId/transfer/accept',
    {
      schema: {
        tags,
        summary: 'Accept the ownership offered to you: you become the owner, the previous owner an admin',
        params: ProjectParams,
        response: { 200: envelopeOf(Type.Object({ _id: Type.String(), role: Type.Literal('owner') })) },
      },
    },
    async (req) => ok(await acceptTransfer(ctx, actorOf(req), req.params.projectId), 'You are now the owner of the project'),
  );
}
