/**
 * The project's `users` schema and the §2.1 preconditions every /api/userAuth route (except
 * the social callback) checks: auth enabled (403), a `users` collection (403) with a required
 * String `email` and `password` (422). The schema comes from the collection cache, which every
 * node drops at once when the project's collections change (bus event).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { FieldDef } from '../../db/types.js';
import { projectOf } from '../projects/api-key-auth.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';

export interface UsersSchema {
  fields: FieldDef[];
  /** Name of the verification flag in the schema (`emailVerified` unless it declares `isVerified`). */
  verifyKey: string;
  hasUsername: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    usersSchema?: UsersSchema;
  }
}

/** The `users` collection's fields, from the node's collection cache (dropped on any change). */
async function loadFields(ctx: AppContext, projectId: string): Promise<FieldDef[] | null> {
  const users = await ctx.collections.get(projectId, 'users');
  return users ? users.fields : null;
}

const isRequiredString = (f: FieldDef | undefined) => !!f && f.type === 'String' && f.required === true;

function describeSchema(fields: FieldDef[]): UsersSchema {
  const keys = new Set(fields.map((f) => f.key));
  const verifyKey = ['emailVerified', 'isVerified', 'isverified'].find((k) => keys.has(k)) ?? 'emailVerified';
  return { fields, verifyKey, hasUsername: keys.has('username') };
}

/** The §2.1 checks for a project; returns its users schema. */
export async function usersSchemaOf(ctx: AppContext, project: ProjectRecord): Promise<UsersSchema> {
  if (project.settings.isAuthEnabled === false) throw AuthErrors.auth_disabled();
  return usersSchemaFor(ctx, project.id);
}

/**
 * The project's users schema, checked as §2.1 checks it (403 missing, 422 invalid), whether or
 * not Auth is enabled: user administration (user-admin.ts) works on a project whose sign-in is off.
 */
export async function usersSchemaFor(ctx: AppContext, projectId: string): Promise<UsersSchema> {
  const fields = await loadFields(ctx, projectId);
  if (!fields) throw AuthErrors.users_schema_missing();
  const email = fields.find((f) => f.key === 'email');
  const password = fields.find((f) => f.key === 'password');
  if (!isRequiredString(email) || !isRequiredString(password)) throw AuthErrors.users_schema_invalid();
  return describeSchema(fields);
}

/**
 * preHandler of every /api/userAuth route (after the API key group's authentication): Auth
 * enabled, a valid users schema; sets `req.usersSchema`.
 */
export function authPreconditions(ctx: AppContext) {
  return async function checkAuthPreconditions(req: FastifyRequest): Promise<void> {
    req.usersSchema = await usersSchemaOf(ctx, projectOf(req));
  };
}

export function schemaOf(req: FastifyRequest): UsersSchema {
  if (!req.usersSchema) throw new Error('route is missing the auth preconditions preHandler');
  return req.usersSchema;
}
