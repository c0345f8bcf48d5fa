/**
 * The operator console, served by the API process at /_/ (built into dist/ui by
 * scripts/build-ui.mjs; hash routes, so no SPA fallback is needed). Hashed assets are cached
 * for a year (`immutable`), index.html is revalidated every time (`no-cache`), and every
 * response carries a strict Content-Security-Policy: scripts and styles only from this origin,
 * no inline script or style, no framing. A browser asking for `/` (Accept: text/html) is sent
 * to the console; API clients keep the JSON answer. `DASHBOARD=off`, or a node serving only
 * the public routes, serves none of it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { Config } from '../config.js';
import { errorBody } from '../lib/envelope.js';
import { ROOT_DIR } from '../paths.js';
import type { App } from '../app.js';

export const DASHBOARD_PREFIX = '/_/';
const UI_DIR = path.join(ROOT_DIR, 'dist', 'ui');

const origin = (url: string | undefined) => {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
};

/**
 * Uploads go straight to the store with a signed URL, so `connect-src` names the storage
 * origins this deployment can hand out (the public URL of the local backend, the S3 endpoint
 * or public URL); file previews may come from any https bucket (`img-src https:`, images
 * cannot run code).
 */
export function contentSecurityPolicy(config: Config): string {
  const s3 = config.storage.s3;
  const storage = [origin(config.publicUrl), origin(s3.endpoint), origin(s3.publicUrl)];
  if (config.storage.driver === 's3' && !s3.endpoint) storage.push('https://*.amazonaws.com');
  const connect = ["'self'", ...new Set(storage.filter((o): o is string => !!o))].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob: https: ${origin(config.publicUrl)}`,
    `connect-src ${connect}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return /\btext\/html\b/i.test(accept) && !/^\s*application\/json/i.test(accept);
}

export async function registerDashboardUi(app: App, config: Config, dir = UI_DIR): Promise<void> {
  if (!config.dashboard || config.routes === 'public') return;
  // Callback style, not async: every request passes this hook, and a promise per request costs.
  app.addHook('onRequest', (req, reply, done) => {
    // On the routed path (the health module's `/`), never on the raw URL. Asked last: reading
    // `req.routeOptions` builds an object, and every API request passes here.
    if (req.method === 'GET' && wantsHtml(req.headers.accept) && req.routeOptions.url === '/') {
      reply.redirect(DASHBOARD_PREFIX, 302);
      return;
    }
    done();
  });
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) {
    app.log.warn({ dir }, 'dashboard: the console is not built (npm run build); /_/ answers 503');
    app.get('/_/*', { schema: { hide: true } }, async (_req, reply) =>
      reply.status(503).send(errorBody('The console is not built: run `npm run build`.', 'service_unavailable')),
    );
    return;
  }
  const csp = contentSecurityPolicy(config);
  await app.register(fastifyStatic, {
    root: dir,
    prefix: DASHBOARD_PREFIX,
    decorateReply: false,
    cacheControl: false,
    etag: true,
    lastModified: true,
    redirect: true,
    index: ['index.html'],
    allowedPath: (pathName) => pathName !== '/meta.json',
    setHeaders(res, filePath) {
      const immutable = filePath.startsWith(path.join(dir, 'assets') + path.sep);
      res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.setHeader('content-security-policy', csp);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('cross-origin-opener-policy', 'same-origin');
    },
  });
}
