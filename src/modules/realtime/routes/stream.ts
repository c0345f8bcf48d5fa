/**
 * GET /api/realtime?ticket=…: the realtime stream, Server-Sent Events for the browser's
 * `EventSource`. Resumes after `Last-Event-ID` (the header EventSource sends when it
 * reconnects, or `lastEventId=` in the URL for a new EventSource). Errors come as the usual
 * JSON envelope before the stream starts; once it has started, the reply is the stream.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { parsePosition } from '../position.js';
import { prepareStream, serveStream } from '../service.js';

const Query = Type.Object({
  ticket: Type.String({ minLength: 1, maxLength: 16_384 }),
  lastEventId: Type.Optional(Type.String({ maxLength: 64 })),
});

export default async function streamRoute(app: App, ctx: AppContext): Promise<void> {
  // Open streams end when the server closes (they would hold it open).
  app.addHook('preClose', async () => ctx.realtime.feed.stop());
  app.get(
    '/api/realtime',
    {
      schema: {
        tags: ['realtime'],
        summary: 'Open a realtime stream (text/event-stream)',
        description: 'Events create/update/delete/restore with `id: <position>`, plus ready, reset and expired. See docs/realtime.md.',
        querystring: Query,
        response: {
          200: {
            description: 'Server-Sent Events: `id: <position>`, `event: create|update|delete|restore|ready|reset|expired`, `data: <JSON>`',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (req, reply) => {
      const prepared = await prepareStream(ctx, req.query.ticket);
      const header = req.headers['last-event-id'];
      const from = parsePosition(typeof header === 'string' ? header : req.query.lastEventId);
      reply.hijack();
      reply.raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      await serveStream(ctx, reply.raw, prepared, from);
    },
  );
}
