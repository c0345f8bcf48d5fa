/**
 * Every route the app registers, as the router knows it (URL pattern and methods, with the
 * route's options, so its config can be read later). Registered first, at the root, so it
 * sees the routes of every scope. CORS reads it to route preflights; the no-5xx test sweeps it.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

/** Per routed path (URL pattern, parameter names erased): the route of each method. */
export type RouteTable = Map<string, { url: string; methods: Map<string, RouteOptions> }>;

const tables = new WeakMap<FastifyInstance, RouteTable>();

/** A route's URL with its parameter names erased: `/a/:x` and `/a/:y` are one path to the router. */
export const shapeOf = (url: string) => url.replace(/:[^/]+/g, ':');

export function registerRouteTable(app: FastifyInstance): RouteTable {
  const table: RouteTable = new Map();
  tables.set(app, table);
  app.addHook('onRoute', (route) => {
    const shape = shapeOf(route.url);
    const entry = table.get(shape) ?? { url: route.url, methods: new Map<string, RouteOptions>() };
    table.set(shape, entry);
    for (const m of [route.method].flat()) if (!entry.methods.has(m.toUpperCase())) entry.methods.set(m.toUpperCase(), route);
  });
  return table;
}

export function routeTableOf(app: FastifyInstance): RouteTable {
  const table = tables.get(app);
  if (!table) throw new Error('registerRouteTable must run first');
  return table;
}

/** Every (method, URL pattern) the app serves. */
export function routesOf(app: FastifyInstance): Array<{ method: string; url: string }> {
  return [...routeTableOf(app).values()].flatMap((e) => [...e.methods.keys()].map((method) => ({ method, url: e.url })));
}
