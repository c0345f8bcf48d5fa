/**
 * The end user behind a public-API request: `Authorization: Bearer <access token>` (scheme
 * matched case-insensitively), verified against the request's project, at the assurance the
 * project requires (src/modules/mfa/policy.ts). Use after `requireApiKey`.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { verifyAccessTokenClaims, type UserTokenClaims } from './tokens.js';
import { bearerToken } from '../operators/auth.js';
import { projectOf } from '../projects/api-key-auth.js';
import { RequestAuthErrors } from '../../lib/identity/request-errors.js';
import { assertAssurance } from '../mfa/policy.js';

/**
 * The user id when a valid Bearer token is present, else null (invalid tokens count as
 * absent). A valid token below the assurance the project requires is refused (403).
 */
export async function optionalUserId(ctx: AppContext, req: FastifyRequest): Promise<string | null> {
  return (await optionalUser(ctx, req))?.id ?? null;
}

/** The signed-in end user of a request: their id and their token's custom claims (JSON text, or null). */
export interface TokenUser {
  id: string;
  claims: string | null;
}

/** optionalUserId with the token's custom claims (`@auth.claims.*` in rules): from the verified token only. */
export async function optionalUser(ctx: AppContext, req: FastifyRequest): Promise<TokenUser | null> {
  const token = bearerToken(req);
  if (!token) return null;
  const project = projectOf(req);
  const claims = await verifyAccessTokenClaims(project, token, ctx.clock.now());
  if (!claims) return null;
  await assertAssurance(ctx, req, project, claims);
  req.userId ??= claims.userId; // who the request log names
  return { id: claims.userId, claims: claims.custom };
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The end user of an `endUser` route (src/route-groups.ts); on other routes, the one whose
     * token optionalUserId verified (the request log names them).
     */
    userId?: string;
    /** Their token's claims: assurance and session. */
    userClaims?: UserTokenClaims;
  }
}

/** The `endUser` group's hook: a valid access token of the request's project, else 401. */
export function requireUser(ctx: AppContext) {
  return async function requireEndUser(req: FastifyRequest): Promise<void> {
    req.userClaims = await requireUserClaims(ctx, req);
    req.userId = req.userClaims.userId;
  };
}

/** The end user of an `endUser` route. */
export function userIdOf(req: FastifyRequest): string {
  if (!req.userId) throw new Error('route is not in the endUser group');
  return req.userId;
}

/** The end user's token claims of an `endUser` route. */
export function userClaimsOf(req: FastifyRequest): UserTokenClaims {
  if (!req.userClaims) throw new Error('route is not in the endUser group');
  return req.userClaims;
}

/** The user id, or 401 (so SDK clients refresh and retry) when missing, invalid or expired. */
export async function requireUserId(ctx: AppContext, req: FastifyRequest): Promise<string> {
  return (await requireUserClaims(ctx, req)).userId;
}

async function requireUserClaims(ctx: AppContext, req: FastifyRequest): Promise<UserTokenClaims> {
  const token = bearerToken(req);
  if (!token) throw RequestAuthErrors.no_token();
  const project = projectOf(req);
  const claims = await verifyAccessTokenClaims(project, token, ctx.clock.now());
  if (!claims) throw RequestAuthErrors.invalid_token('Invalid or Expired Token');
  await assertAssurance(ctx, req, project, claims);
  return claims;
}
