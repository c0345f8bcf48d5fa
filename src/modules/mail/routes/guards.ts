/** Shared route pieces: the public secret-key guard, the dashboard guard, common schemas. */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { apiKeyAuth, requireSecretKey } from '../../../plugins/api-key.js';
import { operatorAuth, operatorOf } from '../../../plugins/operator-auth.js';
import { loadOwnedProject } from '../../projects/access.js';
import type { MailProject } from '../providers/select.js';

/** x-api-key with the secret key, checked before the body is validated (403 beats 400). */
export function secretKey(ctx: AppContext) {
  return [apiKeyAuth(ctx), requireSecretKey];
}

export function operator(ctx: AppContext) {
  return [operatorAuth(ctx)];
}

/** Ownership first (400 bad id, 404 not yours), before anything else touches the project. */
export async function ownedMailProject(ctx: AppContext, req: FastifyRequest, projectId: string): Promise<MailProject> {
  const row = await loadOwnedProject(ctx, operatorOf(req), projectId);
  return { id: row.id, settings: row.settings, secrets: row.secrets };
}

export const ProjectParams = Type.Object({ projectId: Type.String() });
