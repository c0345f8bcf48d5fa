// A fixture app typed by `plinth types`: everything here must compile.
import { createClient } from '@plinth/client';
import type { Schema } from './plinth-schema';

const plinth = createClient<Schema>({ url: 'http://127.0.0.1:3000', apiKey: 'pk_live_x' });
const posts = plinth.collection('posts');

export async function run(): Promise<string> {
  const page = await posts.where('views', 'gte', 10).eq('status', 'published').sort('-createdAt', 'title').limit(5).list();
  const first = page.items[0];
  const title: string | undefined = first?.title;
  const status: 'draft' | 'published' | undefined = first?.status;
  await posts.insert({ title: 'Hello', status: 'draft', author: 'u1', meta: { pinned: true }, tags: ['a'] });
  await posts.update('id', { views: 3, 'meta.pinned': false });
  await posts.where({ views_gte: 1, status: 'draft' }).count();
  await plinth.batch([{ op: 'create', collection: 'comments', data: { body: 'hi', post: 'p1' } }]);
  return `${title}${status}`;
}
