/** GET /api/projects/:projectId/usage/history (docs/dashboard.md "Usage history"). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { envelopeOf } from '../../operators/schemas.js';
import { ProjectIdParams } from '../../projects/schemas.js';
import { usageHistory } from '../history.js';
import { ALL_METRICS } from '../metrics.js';

const Query = Type.Object({
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 time, rounded down to the hour; default `to` minus 7 days' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 time, rounded up to the hour; default now. At most 90 days after `from`' })),
  metrics: Type.Optional(
    Type.String({
      maxLength: 500,
      description: `Comma-separated metrics or families (\`requests\`, \`mail\`, \`functions\`…); default all. Metrics: ${ALL_METRICS.map((m) => `\`${m}\``).join(', ')}`,
    }),
  ),
});

const History = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time', description: 'exclusive' }),
  step: Type.Literal('hour'),
  hours: Type.Array(Type.String({ format: 'date-time' }), { description: "each hour's start (UTC)" }),
  series: Type.Record(Type.String(), Type.Array(Type.Union([Type.Number(), Type.Null()])), {
    description: 'per metric, one value per hour; null: a sampled gauge (data.bytes, file.bytes) not sampled that hour. With mail.sent, also `mail.sent.month`: the running total of each hour\'s UTC month (what the monthly mail limit applies to)',
  }),
  limits: Type.Object({
    databaseBytes: Type.Number({ description: '-1: unlimited' }),
    storageBytes: Type.Number(),
    mailPerMonth: Type.Number(),
    aiSessionsPerMonth: Type.Number({ description: "the owner's account, all projects" }),
  }),
});

export default async function usageHistoryRoute(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/usage/history',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Usage per hour over a range: requests by route group and status class, bytes, mail, realtime peaks, functions, AI calls',
        description: 'Kept USAGE_RETENTION_DAYS (90). Counts are written by each node every USAGE_FLUSH_MS; see docs/dashboard.md "Usage history".',
        params: ProjectIdParams,
        querystring: Query,
        response: { 200: envelopeOf(History) },
      },
    },
    async (req) => ok(await usageHistory(ctx, operatorOf(req), req.params.projectId, req.query)),
  );
}
