/**
 * User administration with the project's secret key (docs/auth.md "User administration"):
 * list and search, get, create (optionally inviting), update any field, `readOnly` and `hidden`
 * ones included. The secretKey group refuses a publishable key (403) before validation; the
 * project is the key's, so a key reaches only its own project's users.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { createProjectUser, getProjectUser, listProjectUsers, updateProjectUser, type UserAdmin } from '../user-admin.js';
import { CreateUserBody, UpdateUserBody, UserEnvelope, UserListEnvelope, UserListQuery } from './admin-user-schemas.js';

const TAGS = ['userAuth: admin'];
const UserParams = Type.Object({ userId: Type.String({ maxLength: 64 }) });
const SECRET: UserAdmin = { kind: 'secret' };

export default async function adminUsersFlow(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/userAuth/admin/users', {
    schema: { tags: TAGS, summary: "List the project's users, newest first (q searches; email matches a prefix)", querystring: UserListQuery, response: { 200: UserListEnvelope } },
    handler: async (req) => ok(await listProjectUsers(ctx, projectOf(req).id, SECRET, req.query), 'Users fetched successfully'),
  });

  app.get('/api/userAuth/admin/users/:userId', {
    schema: { tags: TAGS, summary: 'One user, hidden fields included (never the password)', params: UserParams, response: { 200: UserEnvelope } },
    handler: async (req) => ok(await getProjectUser(ctx, projectOf(req).id, SECRET, req.params.userId), 'User fetched successfully'),
  });

  app.post('/api/userAuth/admin/users', {
    schema: { tags: TAGS, summary: 'Create a user, with or without a password; invite: true mails a sign-in link', body: CreateUserBody, response: { 201: UserEnvelope } },
    handler: async (req, reply) => {
      const user = await createProjectUser(ctx, projectOf(req), SECRET, req.body);
      return reply.code(201).send(ok(user, 'User created successfully'));
    },
  });

  app.patch('/api/userAuth/admin/users/:userId', {
    schema: { tags: TAGS, summary: "Update a user's email, password, verification or fields (readOnly and hidden included)", params: UserParams, body: UpdateUserBody, response: { 200: UserEnvelope } },
    handler: async (req) => ok(await updateProjectUser(ctx, projectOf(req), SECRET, req.params.userId, req.body), 'User updated successfully'),
  });
}
