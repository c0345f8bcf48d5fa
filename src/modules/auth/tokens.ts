/**
 * End-user access tokens (src/lib/identity/jwt.ts), signed with the project's own secret and
 * audience `plinth:project:<id>`; claims `userId` and `projectId` as the SDK reads them.
 */
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';
import type { ProjectRecord } from '../projects/cache.js';

const audience = (projectId: string) => `plinth:project:${projectId}`;

export function signAccessToken(project: ProjectRecord, userId: string, ttlSeconds: number, now: Date): Promise<string> {
  return signAccessJwt({
    secret: project.jwtSecret,
    audience: audience(project.id),
    subject: userId,
    ttlSeconds,
    now,
    claims: { userId, projectId: project.id },
  });
}

/** The user id of a valid, unexpired token of this project; null otherwise. */
export async function verifyAccessToken(project: ProjectRecord, token: string, now: Date): Promise<string | null> {
  return (await verifyAccessTokenClaims(project, token, now))?.userId ?? null;
}

/** The user id and expiry (epoch seconds) of a valid, unexpired token of this project; null otherwise. */
export async function verifyAccessTokenClaims(project: ProjectRecord, token: string, now: Date): Promise<{ userId: string; exp: number } | null> {
  const payload = await verifyAccessJwt(token, project.jwtSecret, audience(project.id), now);
  if (!payload) return null;
  const userId = payload.userId;
  const valid = typeof userId === 'string' && userId === payload.sub && payload.projectId === project.id && typeof payload.exp === 'number';
  return valid ? { userId, exp: payload.exp! } : null;
}
