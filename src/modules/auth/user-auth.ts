/**
 * The end user behind a public-API request: `Authorization: Bearer <access token>` (scheme
 * matched case-insensitively), verified against the request's project. Use after
 * `requireApiKey`.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { verifyAccessToken } from './tokens.js';
import { bearerToken } from '../operators/auth.js';
import { projectOf } from '../projects/api-key-auth.js';
import { RequestAuthErrors } from '../../lib/identity/request-errors.js';

/** The user id when a valid Bearer token is present, else null (invalid tokens count as absent). */
export async function optionalUserId(ctx: AppContext, req: FastifyRequest): Promise<string | null> {
  const token = bearerToken(req);
  if (!token) return null;
  return verifyAccessToken(projectOf(req), token, ctx.clock.now());
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The end user of an `endUser` route (src/route-groups.ts). */
    userId?: string;
  }
}

/** The `endUser` group's hook: a valid access token of the request's project, else 401. */
export function requireUser(ctx: AppContext) {
  return async function requireEndUser(req: FastifyRequest): Promise<void> {
    req.userId = await requireUserId(ctx, req);
  };
}

/** The end user of an `endUser` route. */
export function userIdOf(req: FastifyRequest): string {
  if (!req.userId) throw new Error('route is not in the endUser group');
  return req.userId;
}

/** The user id, or 401 (so SDK clients refresh and retry) when missing, invalid or expired. */
export async function requireUserId(ctx: AppContext, req: FastifyRequest): Promise<string> {
  const token = bearerToken(req);
  if (!token) throw RequestAuthErrors.no_token();
  const userId = await verifyAccessToken(projectOf(req), token, ctx.clock.now());
  if (!userId) throw RequestAuthErrors.invalid_token('Invalid or Expired Token');
  return userId;
}
