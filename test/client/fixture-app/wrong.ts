// Each line below is a mistake `plinth types` must turn into a compile error.
import { createClient } from '@plinth/client';
import type { Schema } from './plinth-schema';

const plinth = createClient<Schema>({ url: 'http://127.0.0.1:3000', apiKey: 'pk_live_x' });
const posts = plinth.collection('posts');

export async function wrong(): Promise<void> {
  await posts.where('titel', 'eq', 'x').list(); // E1: no field "titel"
  await posts.insert({ title: 'x', colour: 'red' }); // E2: no field "colour"
  await posts.insert({ views: 1 }); // E3: "title" is required
  await posts.insert({ title: 'x', status: 'archived' }); // E4: not an allowed value
  await posts.sort('-nope').list(); // E5: no field "nope"
  plinth.collection('postz'); // E6: no collection "postz"
}
