/**
 * One compiled copy of each route schema per process (src/lib/schema-compilers.ts): apps built
 * one after another reuse it and still validate, coerce and serialize as each route says; a
 * header schema Fastify would no longer lower-case stops the build instead of never matching.
 */
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { sharedSchemaCompilers } from '../../src/lib/schema-compilers.js';

const AJV = { customOptions: { coerceTypes: 'array' as const, removeAdditional: false, useDefaults: true, allErrors: false } };
const Query = Type.Object({ n: Type.Integer({ minimum: 1 }), tag: Type.Optional(Type.String({ default: 'none' })) });
const Reply = Type.Object({ n: Type.Integer(), tag: Type.String() });

async function appWith(headers?: object) {
  const app = Fastify({ ajv: AJV, schemaController: { compilersFactory: sharedSchemaCompilers } });
  app.get('/echo', { schema: { querystring: Query, response: { 200: Reply }, ...(headers ? { headers } : {}) } }, async (req) => ({
    ...(req.query as object),
    secret: 'never serialized',
  }));
  await app.ready();
  return app;
}

describe('shared schema compilers', () => {
  it('two apps in one process: each coerces, defaults, refuses and serializes as the route says', async () => {
    for (const app of [await appWith(), await appWith()]) {
      const ok = await app.inject({ url: '/echo?n=3' });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ n: 3, tag: 'none' });
      expect(ok.body).not.toContain('secret');
      expect((await app.inject({ url: '/echo?n=0' })).statusCode).toBe(400);
      expect((await app.inject({ url: '/echo?n=x' })).statusCode).toBe(400);
      await app.close();
    }
  });

  it('a schema compiled once is handed out again (the same object, or one built anew with the same JSON), per set of options', () => {
    const route = (schema: object) => ({ schema, method: 'GET', url: '/echo', httpPart: 'querystring', httpStatus: '200' });
    const anew = () => Type.Object({ n: Type.Integer({ minimum: 1 }), tag: Type.Optional(Type.String({ default: 'none' })) });
    const validators = sharedSchemaCompilers.buildValidator as unknown as (e: object, o: object) => (r: object) => unknown;
    expect(validators({}, AJV)(route(Query))).toBe(validators({}, AJV)(route(Query)));
    expect(validators({}, AJV)(route(anew()))).toBe(validators({}, AJV)(route(Query)));
    expect(validators({}, AJV)(route(Type.Object({ n: Type.Integer({ minimum: 2 }) })))).not.toBe(validators({}, AJV)(route(Query)));
    expect(validators({}, { customOptions: { coerceTypes: false } })(route(Query))).not.toBe(validators({}, AJV)(route(Query)));
    const serializers = sharedSchemaCompilers.buildSerializer as unknown as (e: object, o: object) => (r: object) => unknown;
    expect(serializers({}, {})(route(Reply))).toBe(serializers({}, {})(route(Type.Object({ n: Type.Integer(), tag: Type.String() }))));
    expect(serializers({}, {})(route(Reply))).not.toBe(serializers({}, {})(route(Type.Object({ n: Type.Number(), tag: Type.String() }))));
  });

  it('a header schema with a capital letter stops the build, naming the route and the header', async () => {
    await expect(appWith(Type.Object({ 'X-Api-Key': Type.String() }))).rejects.toThrow(/GET \/echo: header 'X-Api-Key' must be written in lower case/);
    const app = await appWith(Type.Object({ 'x-api-key': Type.String() }));
    expect((await app.inject({ url: '/echo?n=1', headers: { 'X-API-KEY': 'k' } })).statusCode).toBe(200);
    expect((await app.inject({ url: '/echo?n=1' })).statusCode).toBe(400);
    await app.close();
  });
});
