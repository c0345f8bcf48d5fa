/**
 * POST /api/projects/:projectId/data/batch: the public atomic batch (docs/data.md "Atomic
 * batch") as the project's owner, for the console's batch editor: 1-100 operations across the
 * project's collections in one transaction, all or nothing.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { BATCH_MAX, named, runBatch, type BatchOperation, type BatchTarget } from '../batch-service.js';
import { Operation } from '../routes/batch.js';
import { operatorTarget, TAGS } from './target.js';

const Params = Type.Object({ projectId: Type.String() });
const Body = Type.Object({ operations: Type.Array(Operation, { minItems: 1, maxItems: BATCH_MAX }) }, { additionalProperties: false });

export default async function operatorBatchRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/data/batch',
    {
      schema: {
        tags: TAGS,
        summary: 'Run 1-100 create/update/delete/restore operations in one transaction as the project owner (all or nothing)',
        description: 'The public batch with the secret key\'s access. A failure answers that operation\'s error (`operation: <i>` in the body) and nothing is written.',
        params: Params,
        body: Body,
      },
    },
    async (req) => {
      const ops = req.body.operations as BatchOperation[];
      const targets = new Map<string, BatchTarget>();
      let limit = 0;
      for (const [i, o] of ops.entries()) {
        if (targets.has(o.collection)) continue;
        try {
          const t = await operatorTarget(ctx, req, req.params.projectId, o.collection);
          targets.set(o.collection, { col: t.col, access: t.access });
          limit = t.databaseBytes;
        } catch (err) {
          throw named(err, i, o);
        }
      }
      return ok({ results: await runBatch(ctx, ops, targets, limit) }, 'Batch committed.');
    },
  );
}
