/**
 * End-user access tokens: HS256 JWTs signed with the project's own secret (so a token of one
 * project is worthless in another), claims `userId`, `projectId`, `iss`, `aud`.
 */
import { SignJWT, jwtVerify } from 'jose';
import type { ProjectRecord } from '../projects/cache.js';

const ISSUER = 'plinth';
const audience = (projectId: string) => `plinth:project:${projectId}`;

export async function signAccessToken(project: ProjectRecord, userId: string, ttlSeconds: number, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ userId, projectId: project.id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setAudience(audience(project.id))
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(project.jwtSecret);
}

/** The user id of a valid, unexpired token of this project; null otherwise. */
export async function verifyAccessToken(project: ProjectRecord, token: string, now: Date): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, project.jwtSecret, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: audience(project.id),
      currentDate: now,
    });
    const userId = payload.userId;
    return typeof userId === 'string' && payload.projectId === project.id ? userId : null;
  } catch {
    return null;
  }
}
