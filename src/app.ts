/**
 * The type of the Fastify app (TypeBox type provider) that route files register on. In a file
 * of its own, importing no route: server.ts builds the app from the routes, so a route taking
 * the type from server.ts closed an import cycle through every route file
 * (test/architecture/import-cycles.test.ts).
 */
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
