/**
 * End-user access tokens (src/lib/identity/jwt.ts), signed with the project's own secret and
 * audience `plinth:project:<id>`; claims `userId` and `projectId` as the SDK reads them, plus
 * the session's assurance (`aal`, `amr`) and its family id (`sid`): src/lib/identity/assurance.ts,
 * and `isAnonymous` (a guest user, docs/auth.md "Anonymous users").
 */
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';
import { assuranceOf, type Assurance } from '../../lib/identity/assurance.js';
import type { ProjectRecord } from '../projects/cache.js';
import { MAX_SCOPE_CLAIMS_CHARS } from '../../db/pool.js';

const audience = (projectId: string) => `plinth:project:${projectId}`;

/** The session a token speaks for: its family id and assurance, and whether its user is anonymous (a guest). */
export interface TokenSession extends Assurance {
  sid: string;
  anonymous?: boolean;
}

/**
 * `custom`: what the project's token-claims function added (src/modules/functions/auth-hooks.ts),
 * under the one claim `claims`, so it can never replace sub, exp, aal, projectId or any other.
 */
export function signAccessToken(project: ProjectRecord, userId: string, ttlSeconds: number, now: Date, session?: TokenSession, custom?: Record<string, unknown> | null): Promise<string> {
  const extra = session
    ? { aal: session.aal, amr: session.amr, sid: session.sid, isAnonymous: session.anonymous === true }
    : { aal: 'aal1', isAnonymous: false };
  return signAccessJwt({
    secret: project.jwtSecret,
    audience: audience(project.id),
    subject: userId,
    ttlSeconds,
    now,
    claims: custom ? { userId, projectId: project.id, ...extra, claims: custom } : { userId, projectId: project.id, ...extra },
  });
}

export interface UserTokenClaims extends Assurance {
  userId: string;
  exp: number;
  sid: string | null;
  /** A guest's token (the claim `isAnonymous`); false for tokens issued before the claim existed. */
  isAnonymous: boolean;
  /**
   * The custom claims the project's token-claims function put in the token (`claims`), as JSON
   * text, or null: what access rules read as `@auth.claims.*` (TenantScope.claims).
   */
  custom: string | null;
}

/**
 * The token's `claims` as the JSON text a scope carries, or null. Only a plain object is a
 * claims object; one PostgreSQL's jsonb cannot hold (a \u0000) counts as none (fail closed).
 */
function customClaims(v: unknown): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const text = JSON.stringify(v);
  if (text === '{}' || text.length > MAX_SCOPE_CLAIMS_CHARS || text.includes('\\u0000')) return null;
  return text;
}

/** The user id of a valid, unexpired token of this project; null otherwise. */
export async function verifyAccessToken(project: ProjectRecord, token: string, now: Date): Promise<string | null> {
  return (await verifyAccessTokenClaims(project, token, now))?.userId ?? null;
}

/** The user id, expiry (epoch seconds), assurance and session of a valid, unexpired token of this project; null otherwise. */
export async function verifyAccessTokenClaims(project: ProjectRecord, token: string, now: Date): Promise<UserTokenClaims | null> {
  const payload = await verifyAccessJwt(token, project.jwtSecret, audience(project.id), now);
  if (!payload) return null;
  const userId = payload.userId;
  const valid = typeof userId === 'string' && userId === payload.sub && payload.projectId === project.id && typeof payload.exp === 'number';
  if (!valid) return null;
  const sid = typeof payload.sid === 'string' ? payload.sid : null;
  return { userId, exp: payload.exp!, sid, isAnonymous: payload.isAnonymous === true, ...assuranceOf(payload), custom: customClaims(payload.claims) };
}
