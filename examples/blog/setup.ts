/**
 * What the blog needs of its project: end users, posts whose drafts only their author reads
 * (access rules, docs/rules.md), and comments only their author edits (row-level security).
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
  ],
};
