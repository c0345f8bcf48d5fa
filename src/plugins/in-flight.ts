/**
 * `app.close()` waits for the route handlers still running. Fastify's close ends once every
 * connection has closed, but a request whose client went away has no connection left while its
 * handler may still be working (a login waiting for its argon2 verify, say). Shutdown then ended
 * the database pools under it, and its next query failed: "Cannot use a pool after calling end on
 * the pool", logged as an unhandled error, a 500 to nobody. Every handler is counted while it runs;
 * the onClose hook (Fastify runs it after the listener has closed) waits until none is, at most
 * `limitMs`, so nothing after `app.close()` (the pools, the worker) is pulled from under one.
 */
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';

export function registerInFlight(app: FastifyInstance, limitMs: number): void {
  let running = 0;
  let onIdle: (() => void) | undefined;
  const left = () => {
    running--;
    if (running === 0) onIdle?.();
  };
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function counted(this: FastifyInstance, req, reply) {
      running++;
      let result: unknown;
      try {
        result = handler.call(this, req, reply);
      } catch (err) {
        left();
        throw err;
      }
      // A promise passes through with the same value; a synchronous handler is done already.
      if (result instanceof Promise) return result.finally(left);
      left();
      return result;
    } as RouteHandlerMethod;
  });
  app.addHook('onClose', async () => {
    if (running === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      onIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  });
}
