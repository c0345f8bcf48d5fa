/** POST /api/realtime/ticket: a short-lived ticket to open a realtime stream with `EventSource`. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { bearerToken } from '../../operators/auth.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { issueTicket } from '../service.js';

const FilterValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean()]))]);

export const Body = Type.Object(
  {
    subscriptions: Type.Array(
      Type.Object(
        {
          collection: Type.String({ minLength: 1, maxLength: 200 }),
          filter: Type.Optional(Type.Record(Type.String(), FilterValue, { description: "the list API's filters: { status: 'open', price_gte: 10 }" })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, description: 'the collections (and filters) the stream carries' },
    ),
  },
  { additionalProperties: false },
);

export const Data = Type.Object({
  ticket: Type.String({ description: 'open GET /api/realtime?ticket=… with it' }),
  expiresIn: Type.Number({ description: 'seconds the ticket can open a stream' }),
  userId: Type.Union([Type.String(), Type.Null()], { description: 'the end user the stream reads as (from the Bearer token), if any' }),
});

export default async function ticketRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/realtime/ticket',
    {
      schema: {
        tags: ['realtime'],
        summary: 'Get a ticket to open a realtime stream (Server-Sent Events)',
        description: 'With the API key, and the end user\'s Bearer token for private collections. See docs/realtime.md.',
        body: Body,
        response: { 200: Type.Object({ success: Type.Boolean(), data: Data, message: Type.String() }) },
      },
    },
    async (req) => {
      const project = projectOf(req);
      const keyKind = req.keyKind === 'secret' ? 'secret' : 'publishable';
      const data = await issueTicket(ctx, { project, keyKind, userToken: bearerToken(req) ?? null }, req.body.subscriptions);
      return ok(data, 'Realtime ticket issued');
    },
  );
}
