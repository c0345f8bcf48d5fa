/** Shared route pieces of the dashboard mail routes: the owned project, common schemas. */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import type { MailProject } from '../providers/select.js';

/** Ownership first (400 bad id, 404 not yours), before anything else touches the project. */
export async function ownedMailProject(ctx: AppContext, req: FastifyRequest, projectId: string): Promise<MailProject> {
  const row = await loadMemberProject(ctx, operatorOf(req), projectId);
  return { id: row.id, settings: row.settings, secrets: row.secrets };
}

export const ProjectParams = Type.Object({ projectId: Type.String() });
