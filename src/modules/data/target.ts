/** Shared by the data routes: the users block, then the collection (404 when unknown). */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { projectOf } from '../projects/api-key-auth.js';
import type { CollectionDef } from '../collections/cache.js';
import { assertNotUsers } from './access.js';
import { CollectionErrors } from '../collections/errors.js';

export const CollectionParam = Type.Object({ collectionName: Type.String({ maxLength: 200 }) });
export const DocumentParams = Type.Object({ collectionName: Type.String({ maxLength: 200 }), id: Type.String({ maxLength: 200 }) });
export const AnyBody = Type.Unknown({ description: 'A JSON document (free-form; validated against the collection schema)' });
export const TAGS = ['data'];

export async function loadTarget(ctx: AppContext, req: FastifyRequest, name: string): Promise<CollectionDef> {
  assertNotUsers(name);
  const col = await ctx.collections.get(projectOf(req).id, name);
  if (!col) throw CollectionErrors.collection_not_found();
  return col;
}

export const rawQuery = (req: FastifyRequest) => (req.query ?? {}) as Record<string, unknown>;
