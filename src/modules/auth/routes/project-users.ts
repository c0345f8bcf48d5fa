/**
 * Dashboard: a project's end users and their sessions (docs/wire-compatibility.md §10.10), and
 * user administration (list, get, create, update: user-admin.ts, shared with the secret key's
 * /api/userAuth/admin/users). The operator must own the project (404 otherwise); rows are read
 * in the project's tenant scope.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { Tx } from '../../../db/pool.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { Errors } from '../../../lib/errors.js';
import { isObjectId } from '../../../lib/ids.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { AuthErrors } from '../errors.js';
import { enqueueAuthHooks } from '../../functions/auth-events.js';
import { deleteUser, findUserById, markEmailVerified, setUserDisabled } from '../queries.js';
import { findSession, listLiveSessions, revokeFamily, revokeUserSessions } from '../session-queries.js';
import { ProjectErrors } from '../../projects/errors.js';
import { createProjectUser, getProjectUser, listProjectUsers, updateProjectUser, type UserAdmin } from '../user-admin.js';
import { CreateUserBody, UpdateUserBody, UserEnvelope, UserListEnvelope, UserListQuery } from './admin-user-schemas.js';

const ProjectParams = Type.Object({ projectId: Type.String() });
const UserParams = Type.Object({ projectId: Type.String(), userId: Type.String() });
const SessionParams = Type.Object({ projectId: Type.String(), userId: Type.String(), sessionId: Type.String() });

type Ids = { projectId: string; userId?: string };

export default async function authAdminRoutes(app: App, ctx: AppContext): Promise<void> {
  /** The options every route shares: tag and the path params. */
  const route = <P extends TSchema, E extends object = object>(summary: string, params: P, extra?: E) => ({
    schema: { tags: ['project users'], summary, params, ...(extra as E) },
  });

  /**
   * Runs `fn` in the owned project's tenant scope, after checking the user exists there: in
   * one transaction for writes, as autocommit statements (no BEGIN/COMMIT) for reads.
   */
  async function inProject<T>(req: FastifyRequest, ids: Ids, fn: (tx: Tx) => Promise<T>, readOnly = false) {
    const project = await loadMemberProject(ctx, operatorOf(req), ids.projectId);
    const { userId } = ids;
    if (userId !== undefined && !isObjectId(userId)) throw Errors.invalid_id('Invalid user id.');
    const scope = { projectId: project.id, keyKind: 'operator' as const };
    const run = async (tx: Tx) => {
      if (userId !== undefined && !(await findUserById(tx, userId))) throw AuthErrors.app_user_not_found();
      return fn(tx);
    };
    return readOnly ? ctx.db.read(scope, run) : ctx.db.tenant(scope, run);
  }

  /** The owned project as the services take it (404 for a project that is not the operator's). */
  async function ownedRecord(req: FastifyRequest, projectId: string) {
    const project = await loadMemberProject(ctx, operatorOf(req), projectId);
    const record = await ctx.projects.byId(project.id);
    if (!record) throw ProjectErrors.project_not_found();
    return record;
  }
  const byOperator = (req: FastifyRequest): UserAdmin => ({ kind: 'operator', operatorId: operatorOf(req).id });

  app.get('/api/projects/:projectId/users', {
    ...route("List the project's end users (newest first, no passwords; q searches, email matches a prefix)", ProjectParams, { querystring: UserListQuery, response: { 200: UserListEnvelope } }),
    handler: async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await listProjectUsers(ctx, project.id, byOperator(req), req.query), 'Users fetched successfully');
    },
  });

  app.get('/api/projects/:projectId/users/:userId', {
    ...route('One end user, hidden fields included (never the password)', UserParams, { response: { 200: UserEnvelope } }),
    handler: async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await getProjectUser(ctx, project.id, byOperator(req), req.params.userId), 'User fetched successfully');
    },
  });

  app.post('/api/projects/:projectId/users', {
    ...route('Create an end user, with or without a password; invite: true mails a sign-in link', ProjectParams, { body: CreateUserBody, response: { 201: UserEnvelope } }),
    handler: async (req, reply) => {
      const user = await createProjectUser(ctx, await ownedRecord(req, req.params.projectId), byOperator(req), req.body);
      return reply.code(201).send(ok(user, 'User created successfully'));
    },
  });

  app.patch('/api/projects/:projectId/users/:userId', {
    ...route("Update an end user's email, password, verification or fields (readOnly and hidden included)", UserParams, { body: UpdateUserBody, response: { 200: UserEnvelope } }),
    handler: async (req) => {
      const user = await updateProjectUser(ctx, await ownedRecord(req, req.params.projectId), byOperator(req), req.params.userId, req.body);
      return ok(user, 'User updated successfully');
    },
  });

  app.delete('/api/projects/:projectId/users/:userId', {
    ...route('Delete an end user (and their sessions and codes)', UserParams),
    handler: async (req) => {
      await inProject(req, req.params, async (tx) => {
        const user = await findUserById(tx, req.params.userId);
        // the user as it was, for the project's after-hooks on deletion, in the same transaction
        if (user && (await deleteUser(tx, user.id))) await enqueueAuthHooks(ctx, tx, req.params.projectId, 'delete', user, 'admin');
      });
      return done('User deleted successfully');
    },
  });

  app.get('/api/projects/:projectId/users/:userId/sessions', {
    ...route("A user's live refresh sessions, most recently used first", UserParams),
    handler: async (req) => {
      const rows = await inProject(req, req.params, (tx) => listLiveSessions(tx, req.params.userId, ctx.clock.now()), true);
      const sessions = rows.map((s) => ({
        id: s.id, tokenId: s.id, familyId: s.family_id, ip: s.ip, userAgent: s.user_agent,
        createdAt: s.created_at.toISOString(), lastUsedAt: s.last_used_at.toISOString(), expiresAt: s.expires_at.toISOString(),
      }));
      return ok({ sessions }, 'Sessions fetched successfully');
    },
  });

  app.delete('/api/projects/:projectId/users/:userId/sessions', {
    ...route('Revoke every session of a user', UserParams),
    handler: async (req) => {
      const revoked = await inProject(req, req.params, (tx) => revokeUserSessions(tx, req.params.userId, ctx.clock.now()));
      const message = 'Sessions revoked successfully';
      return ok({ message, revoked }, message);
    },
  });

  app.delete('/api/projects/:projectId/users/:userId/sessions/:sessionId', {
    ...route('Revoke one session (its whole rotation chain)', SessionParams),
    handler: async (req) => {
      const { userId, sessionId } = req.params;
      await inProject(req, req.params, async (tx) => {
        const session = await findSession(tx, sessionId);
        if (session?.user_id !== userId) throw AuthErrors.session_not_found();
        await revokeFamily(tx, session.family_id, ctx.clock.now());
      });
      return done('Session revoked successfully');
    },
  });

  app.post('/api/projects/:projectId/users/:userId/verify', {
    ...route("Mark a user's email as verified", UserParams),
    handler: async (req) => {
      await inProject(req, req.params, (tx) => markEmailVerified(tx, req.params.userId, ctx.clock.now()));
      return ok({ userId: req.params.userId, emailVerified: true }, 'User verified');
    },
  });

  // Disabling revokes every session in the same transaction; login, social sign-in and refresh
  // then answer 403 user_disabled (checked in the statements that start or rotate a session).
  // Access tokens already issued stay valid until they expire (USER_ACCESS_TOKEN_TTL).
  for (const disabled of [true, false]) {
    app.post(`/api/projects/:projectId/users/:userId/${disabled ? 'disable' : 'enable'}`, {
      ...route(disabled ? 'Disable a user: no login or refresh, sessions revoked' : 'Enable a disabled user again', UserParams),
      handler: async (req) => {
        await inProject(req, req.params, async (tx) => {
          const now = ctx.clock.now();
          await setUserDisabled(tx, req.params.userId, disabled ? now : null, now);
          if (disabled) await revokeUserSessions(tx, req.params.userId, now);
        });
        return ok({ userId: req.params.userId, disabled }, disabled ? 'User disabled' : 'User enabled');
      },
    });
  }
}
