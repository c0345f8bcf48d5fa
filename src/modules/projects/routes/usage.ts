/** GET /api/projects/:projectId/usage: this month's usage against the plan (console charts). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { envelopeOf } from '../../operators/schemas.js';
import { ProjectIdParams } from '../schemas.js';
import { projectUsage } from '../usage.js';

const Meter = Type.Object({ used: Type.Number(), limit: Type.Number({ description: '-1: unlimited' }) });
const Usage = Type.Object({
  period: Type.String({ description: 'UTC month, YYYY-MM' }),
  plan: Type.String(),
  database: Meter,
  storage: Type.Composite([Meter, Type.Object({ files: Type.Integer() })]),
  collections: Meter,
  mail: Type.Composite([Meter, Type.Object({ provider: Type.String({ description: 'byok, default or outbox: which limit applies' }) })]),
  aiSessions: Type.Composite([Meter], { description: "Platform-key AI sessions of the owner's account (all projects)" }),
});

export default async function usageRoute(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/usage',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Usage this month against the plan: database, storage, collections, mail, AI sessions',
        params: ProjectIdParams,
        response: { 200: envelopeOf(Usage) },
      },
    },
    async (req) => ok(await projectUsage(ctx, operatorOf(req), req.params.projectId)),
  );
}
