/** What the chat app needs of its project: rooms, messages, read markers; a webhook per message. */
import { END_USERS, type ExampleSpec } from '../lib/provision.js';

export const chat: ExampleSpec = {
  project: 'Chat example',
  collections: [
    END_USERS,
    {
      name: 'rooms',
      schema: [{ key: 'name', type: 'String', required: true }, { key: 'createdBy', type: 'String' }],
      rls: { enabled: true, mode: 'public-read', ownerField: 'createdBy' },
      realtime: true,
    },
    {
      name: 'messages',
      schema: [
        { key: 'room', type: 'Ref', ref: 'rooms', required: true },
        { key: 'text', type: 'String' },
        { key: 'image', type: 'String' },
        { key: 'author', type: 'String' },
        { key: 'authorName', type: 'String' },
      ],
      rls: { enabled: true, mode: 'public-read', ownerField: 'author' },
      realtime: true,
    },
    {
      // One per user and room: when the user last read it. Private: only its user sees it.
      name: 'reads',
      schema: [{ key: 'room', type: 'String', required: true }, { key: 'user', type: 'String' }, { key: 'lastReadAt', type: 'Date' }],
      rls: { enabled: true, mode: 'private', ownerField: 'user' },
    },
  ],
  webhooks: [{ events: ['create'], collections: ['messages'] }],
  functions: [
    {
      // A schedule (docs/functions.md): every night at 03:17 UTC, messages older than 30 days go,
      // a hundred at a time, oldest first (a run makes at most 1 000 calls; the next night goes on).
      name: 'clear-old-messages',
      kind: 'schedule',
      trigger: { cron: '17 3 * * *' },
      source: `
        export default async (event, plinth) => {
          const messages = plinth.data.service.collection('messages');
          const cutoff = new Date(Date.parse(event.scheduledAt) - 30 * 24 * 3600 * 1000).toISOString();
          let removed = 0;
          for (let round = 0; round < 9; round++) {
            const page = await messages.list({ createdAt_lt: cutoff, sort: 'createdAt', limit: 100 });
            for (const m of page.items) {
              await messages.delete(m._id, { hard: true });
              removed++;
            }
            if (page.items.length < 100) break;
          }
          console.log('removed', removed, 'messages older than', cutoff);
          return { removed };
        };`,
    },
  ],
};
