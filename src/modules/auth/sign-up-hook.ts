/**
 * The project's before-sign-up function (src/modules/functions/auth-hooks.ts) in the auth flows
 * that create an end user: run before the user is written and outside any transaction (the
 * function may call plinth.data, which opens its own), its answer merged and validated here.
 */
import type { AppContext } from '../../context.js';
import { beforeSignUp, type SignUpEvent } from '../functions/auth-hooks.js';
import type { ProjectRecord } from '../projects/cache.js';
import type { UsersSchema } from './schema.js';
import { hookUserData } from './users.js';

export interface NewUserFields {
  data: Record<string, unknown>;
  derived: string[];
  /**
   * The function set a `readOnly` field: the user is written as the service (role
   * plinth_api_full), since the auth flows' own role may not set one (sql/21_field_protection.sql).
   */
  elevated: boolean;
}

/** The new user's fields after the hook (unchanged without one); throws its refusal or its failure. */
export async function signUpFields(
  ctx: AppContext, project: ProjectRecord, schema: UsersSchema, event: Omit<SignUpEvent, 'data'>, signup: { data: Record<string, unknown>; derived: string[] },
): Promise<NewUserFields> {
  const hook = await beforeSignUp(ctx, project.id, { ...event, data: signup.data });
  if (!hook) return { data: signup.data, derived: signup.derived, elevated: false };
  const out = hookUserData(schema, event.email, signup, hook);
  return { data: out.data, derived: out.derived, elevated: out.readOnly };
}

/** The scope a sign-up writes its user in: the auth flow's, or the service's when a hook set a readOnly field. */
export function signUpScope(project: ProjectRecord, elevated: boolean, userId?: string) {
  return elevated
    ? { projectId: project.id, userId: userId ?? null, keyKind: 'secret' as const }
    : { projectId: project.id, userId: userId ?? null, keyKind: 'publishable' as const, account: true };
}
