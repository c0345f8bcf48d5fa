/**
 * The JSON body parser of every route: Fastify's own (prototype-poisoning keys refused), after
 * the one nesting guard (src/lib/json-depth.ts). Users fields, profiles, template variables,
 * AI prompts, settings and documents all arrive through here; the size bound is BODY_LIMIT.
 */
import type { FastifyInstance } from 'fastify';
import { Errors } from '../lib/errors.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../lib/json-depth.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    // A client that sets `Content-Type: application/json` on every request (a common fetch
    // wrapper) sends it on a DELETE without a body too: no body, as Express's parser takes it.
    // On the methods that carry one, an empty body stays a 400 invalid_json.
    if (body === '' && !METHODS_WITH_BODY.has(req.method)) return done(null, undefined);
    if (jsonTooDeep(body as string)) {
      return done(Errors.json_too_deep(`JSON may nest at most ${MAX_JSON_DEPTH} levels of objects and arrays.`), undefined);
    }
    return parse(req, body as string, done);
  });
}
