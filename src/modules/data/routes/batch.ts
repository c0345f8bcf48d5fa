/** POST /api/data/batch: 1-100 operations across the project's collections, all or nothing. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { writeAccess } from '../access.js';
import { batchOnce } from '../keyed-service.js';
import { BATCH_MAX, named, runBatch, type BatchOperation, type BatchTarget } from '../batch-service.js';
import { DataErrors } from '../errors.js';
import { loadTarget, TAGS } from '../target.js';

export const Operation = Type.Object(
  {
    op: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete'), Type.Literal('restore')]),
    collection: Type.String({ minLength: 1, maxLength: 200 }),
    id: Type.Optional(Type.String({ maxLength: 200, description: 'update, delete, restore' })),
    data: Type.Optional(Type.Unknown({ description: 'create: the document; update: the merge patch (dotted keys allowed)' })),
    hard: Type.Optional(Type.Boolean({ description: 'delete: purge (secret key only)' })),
    ifMatch: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'update, delete, restore: as the `If-Match` header of the single call (docs/data.md "Conditional writes"): ' +
          'only over the version this ETag names, else 412 `precondition_failed` and nothing of the batch is written',
      }),
    ),
  },
  { additionalProperties: false },
);
const Body = Type.Object({ operations: Type.Array(Operation, { minItems: 1, maxItems: BATCH_MAX }) }, { additionalProperties: false });

export default async function batchRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/data/batch',
    {
      schema: {
        tags: TAGS,
        summary: 'Run 1-100 create/update/delete/restore operations in one transaction (all or nothing)',
        description:
          'Each operation has the checks of its single call (schema, unique values, RLS owner rules, quota). ' +
          'The answer lists each result in order: `{results: [{op, collection, id, data?}]}`. ' +
          'A failure answers that operation\'s error, its message starting `Operation <i> (<op> <collection>[/<id>])`, ' +
          'with `operation: <i>` in the body, and nothing of the batch is written.',
        headers: IdempotencyHeaders,
        body: Body,
      },
    },
    async (req, reply) => {
      const ops = req.body.operations as BatchOperation[];
      const targets = new Map<string, BatchTarget>();
      for (const [i, o] of ops.entries()) {
        if (targets.has(o.collection)) continue;
        try {
          const col = await loadTarget(ctx, req, o.collection);
          targets.set(o.collection, { col, access: await writeAccess(ctx, req, col) });
        } catch (err) {
          throw named(err, i, o);
        }
      }
      // One transaction runs in one scope; every collection's write access gives the request's.
      const scopes = new Set([...targets.values()].map((t) => JSON.stringify(t.access.scope)));
      if (scopes.size !== 1) throw DataErrors.invalid_body('All operations of a batch must run with the same access.');
      const limit = projectOf(req).plan.databaseBytes;
      const keyed = keyedRequest(req, [...targets.values()][0]?.access.userId);
      const respond = (results: unknown) => ({ status: 200, body: ok({ results }, 'Batch committed.') });
      if (keyed) return sendAnswer(reply, await batchOnce(ctx, ops, targets, limit, { keyed, respond }));
      return respond(await runBatch(ctx, ops, targets, limit)).body;
    },
  );
}
