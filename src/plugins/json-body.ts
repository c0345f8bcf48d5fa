/**
 * The JSON body parser of every route: Fastify's own (prototype-poisoning keys refused), after
 * the one nesting guard (src/lib/json-depth.ts). Users fields, profiles, template variables,
 * AI prompts, settings and documents all arrive through here; the size bound is BODY_LIMIT.
 */
import type { FastifyInstance } from 'fastify';
import { Errors } from '../lib/errors.js';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../lib/json-depth.js';

export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonTooDeep(body as string)) {
      return done(Errors.json_too_deep(`JSON may nest at most ${MAX_JSON_DEPTH} levels of objects and arrays.`), undefined);
    }
    return parse(req, body as string, done);
  });
}
