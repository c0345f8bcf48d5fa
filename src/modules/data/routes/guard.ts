/**
 * Everything else under /api/data: `/api/data/users` and below is 403 for every key (docs/wire-compatibility.md §3),
 * any other unknown path 404.
 */
import { Errors } from '../../../lib/errors.js';
import type { App } from '../../../app.js';
import { assertNotUsers } from '../access.js';

export default async function guardRoute(app: App): Promise<void> {
  app.all('/api/data/*', { schema: { hide: true } }, async (req) => {
    const rest = (req.params as Record<string, string>)['*'] ?? '';
    assertNotUsers(rest.split('/')[0] ?? '');
    throw Errors.not_found();
  });
}
