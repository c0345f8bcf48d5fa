/**
 * The project's `users` schema and the §2.1 preconditions every /api/userAuth route (except
 * the social callback) checks: auth enabled (403), a `users` collection (403) with a required
 * String `email` and `password` (422). The schema is cached per node for a few seconds and
 * dropped at once when the project changes (bus event).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { FieldDef } from '../../db/types.js';
import { apiKeyAuth, projectOf } from '../../plugins/api-key.js';
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

const TTL_MS = 5_000;
const caches = new WeakMap<AppContext, Map<string, { schema: FieldDef[] | null; expiresAt: number }>>();

function cacheOf(ctx: AppContext) {
  let cache = caches.get(ctx);
  if (!cache) {
    const created = new Map<string, { schema: FieldDef[] | null; expiresAt: number }>();
    ctx.bus.subscribe((e) => {
      if (e.type === 'project_changed') created.delete(e.id);
    });
    caches.set(ctx, created);
    cache = created;
  }
  return cache;
}

async function loadFields(ctx: AppContext, projectId: string): Promise<FieldDef[] | null> {
  const cache = cacheOf(ctx);
  const hit = cache.get(projectId);
  if (hit && hit.expiresAt > Date.now()) return hit.schema;
  const row = await ctx.db.read({ projectId, keyKind: 'system' }, (db) =>
    db.selectFrom('collections').select('fields').where('name', '=', 'users').executeTakeFirst(),
  );
  const schema = row ? row.fields : null;
  cache.set(projectId, { schema, expiresAt: Date.now() + TTL_MS });
  return schema;
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
  const fields = await loadFields(ctx, project.id);
  if (!fields) throw AuthErrors.users_schema_missing();
  const email = fields.find((f) => f.key === 'email');
  const password = fields.find((f) => f.key === 'password');
  if (!isRequiredString(email) || !isRequiredString(password)) throw AuthErrors.users_schema_invalid();
  return describeSchema(fields);
}

/** preHandler (after the API key): runs the preconditions and sets `req.usersSchema`. */
function authPreconditions(ctx: AppContext) {
  return async function checkAuthPreconditions(req: FastifyRequest): Promise<void> {
    req.usersSchema = await usersSchemaOf(ctx, projectOf(req));
  };
}

/** The preHandlers of the public /api/userAuth routes: the API key, then the preconditions. */
export function authPreHandlers(ctx: AppContext) {
  return [apiKeyAuth(ctx), authPreconditions(ctx)];
}

export function schemaOf(req: FastifyRequest): UsersSchema {
  if (!req.usersSchema) throw new Error('route is missing the auth preconditions preHandler');
  return req.usersSchema;
}
