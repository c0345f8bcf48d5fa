/**
 * What the blog needs of its project: end users, posts whose drafts only their author reads
 * (access rules, docs/rules.md), comments only their author edits (row-level security), and
 * subscribers mailed by an after-hook when a post is published (docs/functions.md).
 */
import { END_USERS, type ExampleSpec } from '../lib/provision.js';

const byAuthor = 'author = @auth.id';

export const blog: ExampleSpec = {
  project: 'Blog example',
  collections: [
    END_USERS,
    {
      name: 'posts',
      schema: [
        { key: 'title', type: 'String', required: true, searchable: true },
        // Markdown, tens of KB: searchable (full text), never compared whole.
        { key: 'body', type: 'String', searchable: true },
        { key: 'cover', type: 'String' },
        { key: 'published', type: 'Boolean' },
        { key: 'author', type: 'String' },
        { key: 'authorName', type: 'String' },
        // Made from the title by the `slugify` before-hook below, on every create and update.
        { key: 'slug', type: 'String' },
      ],
      // Everyone reads published posts; a draft only its author. Only the author writes, and
      // nobody writes as someone else (the update rule holds before and after).
      rules: { list: `published = true || ${byAuthor}`, create: byAuthor, update: byAuthor, delete: byAuthor },
    },
    {
      name: 'comments',
      schema: [
        { key: 'post', type: 'Ref', ref: 'posts', required: true },
        { key: 'text', type: 'String', required: true },
        { key: 'author', type: 'String' },
        { key: 'authorName', type: 'String' },
      ],
      // Everyone reads comments; only the author edits or deletes hers (Plinth fills `author`).
      rls: { enabled: true, mode: 'public-read', ownerField: 'author' },
    },
    {
      // Who is mailed when a post is published: a signed-in user subscribes her own address
      // (the account's, so nobody subscribes someone else), sees and removes only her own row.
      name: 'subscribers',
      schema: [
        { key: 'email', type: 'String', required: true },
        { key: 'user', type: 'String', required: true },
      ],
      rules: { list: 'user = @auth.id', create: 'user = @auth.id && email = @auth.email', update: 'false', delete: 'user = @auth.id' },
    },
    {
      // The posts already announced (written by the `notify-subscribers` after-hook only): a
      // post edited after it was published is not announced again. No client reads or writes it.
      name: 'announcements',
      schema: [{ key: 'post', type: 'String', required: true }],
      rules: { list: 'false', create: 'false', update: 'false', delete: 'false' },
    },
  ],
  functions: [
    {
      // A before-hook (docs/functions.md): the server makes each post's slug from its title, so
      // every client gets the same one, whatever it sends.
      name: 'slugify',
      kind: 'before',
      trigger: { collection: 'posts', events: ['create', 'update'] },
      language: 'ts',
      source: `
        type Post = { title?: string; slug?: string };
        export default (event: { data: Post }) => {
          const { title } = event.data;
          if (title === undefined) return; // an update that keeps the title keeps its slug
          const slug = title
            .normalize('NFKD')
            .replace(/[\\u0300-\\u036f]/g, '')
            .toLowerCase()
            .replace(/[^\\p{L}\\p{N}]+/gu, '-')
            .replace(/^-+|-+$/g, '')
            .slice(0, 80);
          return { data: { ...event.data, slug } };
        };`,
    },
    {
      // An after-hook (docs/functions.md): once a post is published (created published, or a
      // draft updated to published), every subscriber but its author gets a mail through
      // plinth.mail (the project's mail: the dev outbox until a provider is set). Run by the job
      // workers at least once: the announcement record and the idempotency key per subscriber
      // keep a retry from mailing anyone twice.
      name: 'notify-subscribers',
      kind: 'after',
      trigger: { collection: 'posts', events: ['create', 'update'] },
      source: `
        export default async (event, plinth) => {
          const posts = plinth.data.service.collection('posts');
          // a post over the change stream's 64 KiB arrives without its document: read it
          const post = event.document ?? (await posts.get(event.documentId));
          if (!post || post.published !== true) return { mailed: 0 };
          const announcements = plinth.data.service.collection('announcements');
          if ((await announcements.list({ post: post._id, limit: 1 })).items.length > 0) return { mailed: 0 };
          const subscribers = plinth.data.service.collection('subscribers');
          const excerpt = String(post.body ?? '').replace(/\\s+/g, ' ').trim().slice(0, 280);
          let mailed = 0;
          let cursor = '';
          do {
            const page = await subscribers.list({ sort: 'createdAt', limit: 100, cursor });
            for (const s of page.items) {
              if (s.user === post.author) continue;
              await plinth.mail.send({
                to: s.email,
                subject: 'New post: ' + post.title,
                text: (post.authorName || 'Someone') + ' published “' + post.title + '”.\\n\\n' + excerpt,
              }, { idempotencyKey: 'post-' + post._id + '-' + s._id });
              mailed++;
            }
            cursor = page.nextCursor ?? '';
          } while (cursor);
          await announcements.create({ post: post._id });
          console.log('mailed', mailed, 'subscribers about', post._id);
          return { mailed };
        };`,
    },
  ],
};
