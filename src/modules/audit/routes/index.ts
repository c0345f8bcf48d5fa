/** A project's audit log on the dashboard (docs/audit.md): list, NDJSON export, chain verification. Read-only: no route changes an entry. */
import { Type, type TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { defineRoutes } from '../../../route-groups.js';
import { operatorOf } from '../../operators/auth.js';
import { exportAudit, listAudit, verifyAudit } from '../service.js';

const Params = Type.Object({ projectId: Type.String() });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });

const Filters = {
  action: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]*(\\.[a-z0-9_-]+)*(\\.\\*)?$', maxLength: 100, description: 'an action (`keys.rotate`), or every action of an area (`functions.*`)' })),
  operator: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: "the operator's id or email" })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'the exact target (a collection name, `collection/documentId`, a function name)' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or before this time' })),
};

const ListQuery = Type.Object({
  ...Filters,
  cursor: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: "the previous page's `nextCursor`" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});

const EntryView = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ description: "the entry's place in the project's chain (1, 2, 3…)" }),
  at: Type.String({ format: 'date-time' }),
  operator: Type.Object({ id: Nullable(Type.String()), email: Nullable(Type.String({ description: 'the email at the time of the change' })) }),
  ip: Nullable(Type.String({ description: 'the client address (TRUST_PROXY decides whether X-Forwarded-For counts)' })),
  action: Type.String({ description: 'a stable name, `<area>.<verb>` (docs/audit.md lists them)' }),
  target: Nullable(Type.String()),
  before: Type.Unknown({ description: 'the changed members before (secrets masked), or null' }),
  after: Type.Unknown({ description: 'the changed members after (secrets masked), or null' }),
  prevHash: Type.String(),
  hash: Type.String({ description: 'SHA-256 of the canonical content, which includes prevHash' }),
});

const HashAt = Type.Object({ seq: Type.Integer(), hash: Type.String() });
const VerifyView = Type.Object({
  ok: Type.Boolean(),
  checked: Type.Integer({ description: 'entries checked' }),
  head: Type.Composite([HashAt], { description: "the newest entry's seq and hash: note it outside Plinth to detect a rewrite of the whole chain" }),
  anchor: Type.Composite([HashAt], { description: 'where verification starts: the last entry the retention trim removed (seq 0 when none)' }),
  broken: Nullable(
    Type.Object({
      reason: Type.Union([Type.Literal('hash_mismatch'), Type.Literal('prev_hash_mismatch'), Type.Literal('seq_gap'), Type.Literal('head_mismatch')]),
      id: Nullable(Type.String()),
      seq: Nullable(Type.Integer()),
      at: Nullable(Type.String({ format: 'date-time' })),
      message: Type.String(),
    }),
  ),
});

async function auditRoutes(app: App, ctx: AppContext): Promise<void> {
  const tags = ['dashboard: audit'];

  app.get(
    '/api/projects/:projectId/audit',
    {
      schema: {
        tags,
        summary: "The project's audit log: operator changes through the dashboard API, newest first",
        description: 'Who, when, from which address, the action, its target and the before/after of the changed setting with secrets masked. Kept AUDIT_RETENTION_DAYS.',
        params: Params,
        querystring: ListQuery,
        response: { 200: envelope(Type.Object({ items: Type.Array(EntryView), nextCursor: Nullable(Type.String()) })) },
      },
    },
    async (req) => {
      const { limit = 50, ...q } = req.query;
      return ok(await listAudit(ctx, operatorOf(req), req.params.projectId, { ...q, limit }), 'Audit log');
    },
  );

  app.get(
    '/api/projects/:projectId/audit/export',
    {
      schema: {
        tags,
        summary: 'The audit entries matching the filters as NDJSON (one entry per line, newest first), streamed',
        params: Params,
        querystring: Type.Object(Filters),
        produces: ['application/x-ndjson'],
      },
    },
    async (req, reply) => {
      const stream = await exportAudit(ctx, operatorOf(req), req.params.projectId, req.query);
      stream.on('error', (err) => req.log.error({ err }, 'audit export failed mid-stream'));
      const day = ctx.clock.now().toISOString().slice(0, 10);
      return reply
        .type('application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-${req.params.projectId}-${day}.ndjson"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  app.get(
    '/api/projects/:projectId/audit/verify',
    {
      schema: {
        tags,
        summary: "Walk the project's hash chain: ok, or the first entry that does not follow from the one before it",
        description: 'Detects an entry changed, removed or inserted directly in the database (docs/audit.md "The chain").',
        params: Params,
        response: { 200: envelope(VerifyView) },
      },
    },
    async (req) => {
      const result = await verifyAudit(ctx, operatorOf(req), req.params.projectId);
      return ok(result, result.ok ? 'The audit chain is intact.' : 'The audit chain is broken.');
    },
  );
}

export default [defineRoutes('operator', auditRoutes)];
