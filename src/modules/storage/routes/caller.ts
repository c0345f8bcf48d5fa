/**
 * Who may call the storage API (docs/security.md, "Storage"): the secret key, or the publishable key
 * together with a valid end-user Bearer token (the files then belong to that user).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { requireUserId } from '../../auth/user-auth.js';
import type { Caller } from '../service.js';

export async function storageCaller(ctx: AppContext, req: FastifyRequest): Promise<Caller> {
  const project = projectOf(req);
  if (req.keyKind === 'secret') return { project, keyKind: 'secret', userId: null };
  return { project, keyKind: 'publishable', userId: await requireUserId(ctx, req) };
}

/** Encoded separators, dots or control characters in the raw URL path: never a valid file path. */
export function hasEncodedTricks(rawUrl: string): boolean {
  const pathPart = rawUrl.split('?')[0] ?? '';
  return /%(2f|5c|2e|0[0-9a-f]|1[0-9a-f]|7f|25)/i.test(pathPart) || pathPart.includes('\\');
}

