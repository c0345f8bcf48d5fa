/** GET and PUT /api/projects/:projectId/usage/alerts (docs/dashboard.md "Usage alerts"). */
import { Type, type TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { envelopeOf } from '../../operators/schemas.js';
import { ProjectIdParams } from '../../projects/schemas.js';
import { getAlertSettings, updateAlertSettings } from '../alerts.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Settings = {
  enabled: Type.Boolean({ description: 'plan-limit, error-rate and latency alerts at all (default true)' }),
  errorRatePercent: Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100, description: '5xx share of the last hour that alerts; null: none' })),
  p99Ms: Nullable(Type.Integer({ minimum: 1, maximum: 600_000, description: "the last hour's p99 latency that alerts, in ms; null: none" })),
  cooldownMinutes: Type.Integer({ minimum: 5, maximum: 10_080, description: 'least time between two error-rate (or two latency) alerts' }),
  webhookUrl: Nullable(Type.String({ minLength: 1, maxLength: 2048, description: 'also POST each alert here, signed (Standard Webhooks)' })),
};

const View = Type.Object({
  ...Settings,
  recipients: Type.Array(Type.String(), { description: 'who is mailed: the project owner' }),
  sent: Type.Array(
    Type.Object({
      alert: Type.String({ description: '`database_bytes:80`, `mail_per_month:100`, `error_rate`, `p99_latency`…' }),
      period: Type.String({ description: 'UTC month of a plan-limit alert; empty for the error rate and latency' }),
      firedAt: Type.String({ format: 'date-time' }),
      detail: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});

const Body = Type.Object(
  {
    enabled: Type.Optional(Settings.enabled),
    errorRatePercent: Type.Optional(Settings.errorRatePercent),
    p99Ms: Type.Optional(Settings.p99Ms),
    cooldownMinutes: Type.Optional(Settings.cooldownMinutes),
    webhookUrl: Type.Optional(Settings.webhookUrl),
    rotateSecret: Type.Optional(Type.Boolean({ description: 'a new webhook secret for the same URL' })),
  },
  { additionalProperties: false },
);

const Updated = Type.Object({
  ...Settings,
  webhookSecret: Nullable(Type.String({ description: 'the new webhook secret (`whsec_…`), shown once: when the URL was set or changed, or rotateSecret' })),
});

export default async function usageAlertRoutes(app: App, ctx: AppContext): Promise<void> {
  const tags = ['dashboard: projects'];
  app.get(
    '/api/projects/:projectId/usage/alerts',
    {
      schema: { tags, summary: "The project's usage alert settings and the alerts it sent", params: ProjectIdParams, response: { 200: envelopeOf(View) } },
    },
    async (req) => ok(await getAlertSettings(ctx, operatorOf(req), req.params.projectId)),
  );
  app.put(
    '/api/projects/:projectId/usage/alerts',
    {
      schema: {
        tags,
        summary: 'Change the usage alert settings: on/off, error-rate and p99 thresholds, cooldown, webhook URL',
        params: ProjectIdParams,
        body: Body,
        response: { 200: envelopeOf(Updated) },
      },
    },
    async (req) => ok(await updateAlertSettings(ctx, operatorOf(req), req.params.projectId, req.body), 'Usage alert settings saved'),
  );
}
