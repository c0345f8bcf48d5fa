/**
 * The dashboard's way into a project's documents: the signed-in operator must own the project
 * (404 otherwise, as every dashboard route), then the collection is loaded as for the public
 * API and the request runs with the secret key's access: the `operator` scope runs as
 * `plinth_api_full`, under the same PostgreSQL policies (sql/20_documents_policies.sql).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { operatorOf } from '../../operators/auth.js';
import type { CollectionDef } from '../../collections/cache.js';
import { planOf } from '../../plans/plans.js';
import { loadMemberProject } from '../../projects/access.js';
import { assertNotUsers, type Access } from '../access.js';
import { CollectionErrors } from '../../collections/errors.js';

export const TAGS = ['dashboard: data'];

export const CollectionParams = Type.Object({ projectId: Type.String(), collectionName: Type.String({ maxLength: 200 }) });
export const DocumentParams = Type.Object({
  projectId: Type.String(),
  collectionName: Type.String({ maxLength: 200 }),
  id: Type.String({ maxLength: 200 }),
});

export interface OperatorTarget {
  col: CollectionDef;
  access: Access;
  /** The owner's plan limit of database bytes (the project's plan). */
  databaseBytes: number;
}

export async function operatorTarget(ctx: AppContext, req: FastifyRequest, projectId: string, name: string): Promise<OperatorTarget> {
  const operator = operatorOf(req);
  const project = await loadMemberProject(ctx, operator, projectId);
  assertNotUsers(name);
  const col = await ctx.collections.get(project.id, name);
  if (!col) throw CollectionErrors.collection_not_found();
  const access: Access = { scope: { projectId: project.id, keyKind: 'operator' }, secret: true, userId: null, ownerFilter: null };
  return { col, access, databaseBytes: planOf(operator.plan).databaseBytes };
}
