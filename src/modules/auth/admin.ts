/**
 * Dashboard: a project's end users and their sessions (contract §10.10, DESIGN names). The
 * operator must own the project (404 otherwise); rows are read in the project's tenant scope.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import type { App } from '../../server.js';
import { done, ok } from '../../lib/envelope.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import { operatorAuth, operatorOf } from '../../plugins/operator-auth.js';
import { loadOwnedProject } from '../projects/access.js';
import { AuthErrors } from './errors.js';
import { deleteUser, findUserById, listUsers } from './queries.js';
import { listLiveSessions, revokeFamily, revokeUserSessions } from './session-queries.js';
import { toUser } from './users.js';

const ProjectParams = Type.Object({ projectId: Type.String() });
const UserParams = Type.Object({ projectId: Type.String(), userId: Type.String() });
const SessionParams = Type.Object({ projectId: Type.String(), userId: Type.String(), sessionId: Type.String() });
const security = [{ operatorBearer: [] }];
const tags = ['project users'];

export default async function authAdminRoutes(app: App, ctx: AppContext): Promise<void> {
  const preHandler = operatorAuth(ctx);

  /** Runs `fn` in the owned project's tenant scope, after checking the user exists there. */
  async function inProject<T>(req: FastifyRequest, ids: { projectId: string; userId?: string }, fn: (tx: Tx) => Promise<T>) {
    const project = await loadOwnedProject(ctx, operatorOf(req), ids.projectId);
    const userId = ids.userId;
    if (userId !== undefined && !isObjectId(userId)) throw Errors.invalid_id('Invalid user id.');
    return ctx.db.tenant({ projectId: project.id, keyKind: 'operator' }, async (tx) => {
      if (userId !== undefined && !(await findUserById(tx, userId))) throw AuthErrors.app_user_not_found();
      return fn(tx);
    });
  }

  app.get('/api/projects/:projectId/users', {
    schema: {
      tags, summary: "List the project's end users (newest first, no passwords)", security,
      params: ProjectParams,
      querystring: Type.Object({
        page: Type.Integer({ minimum: 1, default: 1 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      }),
    },
    preHandler,
    handler: async (req) => {
      const { page, limit } = req.query;
      const { rows, total } = await inProject(req, req.params, (tx) => listUsers(tx, limit, (page - 1) * limit));
      return ok({ items: rows.map((r) => toUser(r)), total, page, limit }, 'Users fetched successfully');
    },
  });

  app.delete('/api/projects/:projectId/users/:userId', {
    schema: { tags, summary: 'Delete an end user (and their sessions and codes)', security, params: UserParams },
    preHandler,
    handler: async (req) => {
      await inProject(req, req.params, (tx) => deleteUser(tx, req.params.userId));
      return done('User deleted successfully');
    },
  });

  app.get('/api/projects/:projectId/users/:userId/sessions', {
    schema: { tags, summary: "A user's live refresh sessions, most recently used first", security, params: UserParams },
    preHandler,
    handler: async (req) => {
      const rows = await inProject(req, req.params, (tx) => listLiveSessions(tx, req.params.userId, ctx.clock.now()));
      const sessions = rows.map((s) => ({
        id: s.id, tokenId: s.id, familyId: s.family_id, ip: s.ip, userAgent: s.user_agent,
        createdAt: s.created_at.toISOString(), lastUsedAt: s.last_used_at.toISOString(), expiresAt: s.expires_at.toISOString(),
      }));
      return ok({ sessions }, 'Sessions fetched successfully');
    },
  });

  app.delete('/api/projects/:projectId/users/:userId/sessions', {
    schema: { tags, summary: 'Revoke every session of a user', security, params: UserParams },
    preHandler,
    handler: async (req) => {
      const revoked = await inProject(req, req.params, (tx) => revokeUserSessions(tx, req.params.userId, ctx.clock.now()));
      const message = 'Sessions revoked successfully';
      return { success: true, data: { message, revoked }, message };
    },
  });

  app.delete('/api/projects/:projectId/users/:userId/sessions/:sessionId', {
    schema: { tags, summary: "Revoke one session (its whole rotation chain)", security, params: SessionParams },
    preHandler,
    handler: async (req) => {
      await inProject(req, req.params, async (tx) => {
        const s = await tx.selectFrom('app_user_sessions').select('family_id')
          .where('id', '=', req.params.sessionId).where('user_id', '=', req.params.userId).executeTakeFirst();
        if (!s) throw AuthErrors.session_not_found();
        await revokeFamily(tx, s.family_id, ctx.clock.now());
      });
      return done('Session revoked successfully');
    },
  });
}
