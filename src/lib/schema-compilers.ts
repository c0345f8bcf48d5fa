/**
 * The compilers of the routes' schemas, one set per process instead of one per app.
 *
 * Fastify gives each app a fresh Ajv and a fresh fast-json-stringify and compiles every route's
 * schemas again. A process that builds many apps from the same route modules (the test suite
 * builds one per test file, in workers shared across files) spent about half of each build
 * there. Here the process keeps one pool: validators come from @fastify/ajv-compiler's pool,
 * which keeps one Ajv per set of external schemas and options, and Ajv caches what it compiled
 * by schema object; serializers are kept per schema object and options the same way. The route
 * modules' schemas are module constants, so the next app's routes find them compiled. A process
 * with one app (`npm start`) compiles each schema once, as before.
 *
 * Fastify treats a validator given this way as custom and no longer lower-cases the keys of
 * header schemas (lib/validation.js) before compiling them; Node gives header names in lower
 * case, so a key written otherwise would never match. Such a schema stops the app's build here.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import fastJsonStringify, { type Schema } from 'fast-json-stringify';

type Serialize = (doc: unknown) => string;
type Route = { schema: unknown; httpPart?: string; method?: string; url?: string };
type Factory<F> = (externalSchemas: unknown, options: unknown) => (route: Route) => F;

/**
 * What `build` made for a schema, found again by the schema object or, for a schema built anew
 * by each app (`envelopeOf(...)` inside a route plugin), by its JSON: the same text is the same
 * schema to both compilers. The map is bounded by the distinct schemas of the code, and keeps
 * Ajv from caching one more copy per app.
 */
function memoBySchema<F>(build: (route: Route) => F): (route: Route) => F {
  const byObject = new WeakMap<object, F>();
  const byText = new Map<string, F>();
  return (route) => {
    const schema = route.schema as object;
    let made = byObject.get(schema);
    if (made !== undefined) return made;
    const text = JSON.stringify(schema);
    made = byText.get(text);
    if (made === undefined) byText.set(text, (made = build(route)));
    byObject.set(schema, made);
    return made;
  };
}

/** For the serializers, which have no pool of their own: one memo per set of external schemas and options (JSON of both). */
function pooled<F>(make: (externalSchemas: unknown, options: unknown) => (route: Route) => F): Factory<F> {
  const pools = new Map<string, (route: Route) => F>();
  return (externalSchemas, options) => {
    const key = JSON.stringify([externalSchemas, options]);
    let pool = pools.get(key);
    if (pool === undefined) pools.set(key, (pool = memoBySchema(make(externalSchemas, options))));
    return pool;
  };
}

/** @fastify/ajv-compiler's pool: one Ajv per set of external schemas and options, its compile function kept. */
const ajvPool = AjvCompiler() as unknown as Factory<unknown>;
/** Per pooled compile function (so per Ajv): its memo. */
const validatorMemos = new WeakMap<(route: Route) => unknown, (route: Route) => unknown>();

const buildValidator: Factory<unknown> = (externalSchemas, options) => {
  const compile = ajvPool(externalSchemas, options);
  let memo = validatorMemos.get(compile);
  if (memo === undefined) validatorMemos.set(compile, (memo = memoBySchema(compile)));
  const compileOnce = memo;
  return (route) => {
    if (route.httpPart === 'headers') assertLowerCaseHeaders(route);
    return compileOnce(route);
  };
};

function assertLowerCaseHeaders({ schema, method, url }: Route): void {
  const s = schema as { properties?: object; required?: unknown };
  const names = [...Object.keys(s.properties ?? {}), ...(Array.isArray(s.required) ? (s.required as string[]) : [])];
  const named = names.find((name) => name !== name.toLowerCase());
  if (named !== undefined) throw new Error(`${method} ${url}: header '${named}' must be written in lower case in the schema`);
}

const buildSerializer = pooled((externalSchemas, options) => {
  const shared = (externalSchemas ?? {}) as Record<string, Schema>;
  return ({ schema }: Route): Serialize => {
    // as @fastify/fast-json-stringify-compiler does: a response schema that is also a shared
    // schema is compiled without its shared copy
    const own = (schema as { $id?: string }).$id;
    const others = { ...shared };
    if (own !== undefined) delete others[own];
    return fastJsonStringify(schema as Schema, { ...(options as object), schema: others }) as Serialize;
  };
});

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * For Fastify's `schemaController.compilersFactory`: the same pools for every app of the process.
 * (Cast: @fastify/ajv-compiler's declared types give its compile function Ajv's signature, while
 * Fastify calls it, as above, with the route's definition.)
 */
export const sharedSchemaCompilers = { buildValidator, buildSerializer } as unknown as CompilersFactory;
