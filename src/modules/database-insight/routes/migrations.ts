/** The migrations the database applied, with their checksums and drift: the platform admin only (docs/dashboard.md "Database"). */
import { Type, type TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { migrations } from '../service.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });
const State = Type.Union([Type.Literal('ok'), Type.Literal('changed'), Type.Literal('missing'), Type.Literal('unknown'), Type.Literal('pending')], {
  description: '`changed`, `missing` and `unknown` are drift (src/db/migration-status.ts)',
});
const Counts = Type.Object({ ok: Type.Integer(), changed: Type.Integer(), missing: Type.Integer(), unknown: Type.Integer(), pending: Type.Integer() });

export default async function migrationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/admin/database/migrations',
    {
      schema: {
        tags: ['dashboard: database'],
        summary: 'The migrations applied, with their recorded checksums against the files of this version, and any drift',
        description: 'The same as `plinth migrate --status`. Read-only.',
        response: {
          200: envelope(
            Type.Object({
              inSync: Type.Boolean({ description: 'no drift and nothing pending' }),
              drift: Type.Boolean(),
              counts: Counts,
              migrations: Type.Array(
                Type.Object({
                  name: Type.String(),
                  state: State,
                  appliedAt: Nullable(Type.String({ format: 'date-time' })),
                  recordedChecksum: Nullable(Type.String({ description: 'SHA-256 of the file when applied' })),
                  fileChecksum: Nullable(Type.String({ description: "SHA-256 of this version's file" })),
                }),
              ),
            }),
          ),
        },
      },
    },
    async () => ok(await migrations(ctx), 'Migrations'),
  );
}
