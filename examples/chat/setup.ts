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
};
