/**
 * An invitation link's two steps (docs/teams.md): read what it invites to (public: the token is
 * the credential), and accept it signed in with the invited, verified address.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { envelopeOf } from '../../operators/schemas.js';
import { InvitationPreview, RoleSchema, Token } from '../schemas.js';
import { acceptInvitation, lookupInvitation } from '../service.js';

const tags = ['dashboard: members'];

export async function invitationLookupRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/invitations/lookup',
    {
      schema: {
        tags,
        summary: 'What an invitation link invites to (project, role, address), before signing in',
        body: Type.Object({ token: Token }),
        response: { 200: envelopeOf(InvitationPreview) },
      },
    },
    async (req) => ok(await lookupInvitation(ctx, req.body.token), 'Invitation'),
  );
}

export async function invitationAcceptRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/invitations/accept',
    {
      schema: {
        tags,
        summary: 'Accept an invitation, signed in with the invited (verified) address',
        body: Type.Object({ token: Token }),
        response: { 200: envelopeOf(Type.Object({ _id: Type.String(), name: Type.String(), role: RoleSchema })) },
      },
    },
    async (req) => ok(await acceptInvitation(ctx, operatorOf(req), req.body.token), 'Invitation accepted'),
  );
}
