/**
 * The client version handshake (docs/client.md, "Versions"). @plinth/client sends its version
 * as `Plinth-Client: <major>.<minor>.<patch>` on every request. This server speaks every client
 * up to NEWEST_CLIENT (older ones keep working: the wire only grows); a newer client, which may
 * rely on behaviour this server lacks, is answered 400 `client_version_unsupported` naming both
 * versions, before authentication or the body is read, instead of half-working. Requests without
 * the header (@urbackend/sdk, curl, other clients) are untouched.
 *
 * A `preParsing` hook: it runs after the per-route CORS hook (onRequest), so a browser can read
 * the error, and before the auth groups (preValidation). Callback style, one header read.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { defineErrors } from '../lib/errors.js';
import { ROOT_DIR } from '../paths.js';

/** The newest @plinth/client minor version this server supports (`<major>.<minor>`). */
export const NEWEST_CLIENT = { major: 0, minor: 1 };
export const CLIENT_HEADER = 'plinth-client';

export const ClientVersionErrors = defineErrors('client', {
  client_version_unsupported: { status: 400, message: 'This @plinth/client version is newer than this Plinth server supports.' },
});

const SERVER_VERSION: string = JSON.parse(readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')).version;
const VERSION = /^(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+][0-9A-Za-z.+-]{0,64})?$/;

/** null when the server speaks `version`, else why not. */
export function clientVersionProblem(version: string): string | null {
  const m = VERSION.exec(version.trim());
  const newest = `${NEWEST_CLIENT.major}.${NEWEST_CLIENT.minor}.x`;
  if (!m) return `The Plinth-Client header must be a version such as 0.1.0 (got "${version.slice(0, 40)}").`;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major < NEWEST_CLIENT.major || (major === NEWEST_CLIENT.major && minor <= NEWEST_CLIENT.minor)) return null;
  return `@plinth/client ${m[0]} is newer than this Plinth server (${SERVER_VERSION}) supports: it speaks clients up to ${newest}. Upgrade the server, or use @plinth/client ${newest}.`;
}

export function registerClientVersion(app: FastifyInstance): void {
  app.addHook('preParsing', (req, _reply, payload, done) => {
    const v = req.headers[CLIENT_HEADER];
    if (v === undefined) return done(null, payload);
    const problem = clientVersionProblem(Array.isArray(v) ? v.join(',') : v);
    if (!problem) return done(null, payload);
    done(
      ClientVersionErrors.client_version_unsupported(problem, {
        clientVersion: String(v).slice(0, 40),
        serverVersion: SERVER_VERSION,
        newestClient: `${NEWEST_CLIENT.major}.${NEWEST_CLIENT.minor}.x`,
      }),
    );
  });
}
