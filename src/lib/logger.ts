/**
 * Pino logger. Keys, tokens, cookies, passwords and provider keys are redacted wherever they
 * appear; every credential-like query parameter is masked in logged URLs (`maskUrl`). LOG_FORMAT=json writes JSON
 * lines; `pretty` formats them for a person (pino-pretty, loaded only then, in this thread so
 * lines keep their order with the start-up banner): one line per event, a request as
 * `GET /api/x 200 3.1ms`, errors followed by their stack.
 */
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat } from '../config.js';

const SECRET_FIELDS = [
  'password', 'newPassword', 'currentPassword', 'aiKey', 'providerApiKey', 'resendApiKey', 'apiKey',
  'secretKey', 'publishableKey', 'clientSecret', 'secretAccessKey', 'refreshToken', 'accessToken', 'token',
  'otp', 'webhookSecret', 'jwtSecret',
];

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["x-refresh-token"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'res.headers["x-refresh-token"]',
  // Top level too: `log.info({ token })` and child bindings are objects like any other.
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `*.${f}`),
  ...SECRET_FIELDS.map((f) => `*.*.${f}`),
];

/**
 * A query parameter is credential-like when its name, decoded and in any case, contains one of
 * these stems: one rule rather than a list of names, so a credential under a name no route reads
 * (`?access_token=` sent to /metrics, a signed upload's `sig`, `X-Amz-Signature`) is masked too.
 * A harmless name that happens to match (`author`) is masked as well: a log line loses a value,
 * never leaks one.
 */
const CREDENTIAL_NAME = /key|token|secret|pass|pwd|ticket|code|state|sig|auth|cred|session|otp|jwt|cookie|bearer/i;

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** Masks the value of every credential-like query parameter of a logged URL. */
export function maskUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const hash = url.indexOf('#', start);
  const end = hash < 0 ? url.length : hash;
  const params = url.slice(start + 1, end).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    return eq >= 0 && CREDENTIAL_NAME.test(decodedName(name)) ? `${name}=[REDACTED]` : pair;
  });
  return `${url.slice(0, start + 1)}${params.join('&')}${url.slice(end)}`;
}

interface RequestLine {
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  projectId?: string;
}

/** The human form of a line: a request as `METHOD url status time`, anything else its message. */
export function prettyMessage(log: RequestLine): string {
  const { req, res } = log;
  if (!req?.method || !res?.statusCode) return log.msg ?? '';
  const time = typeof log.responseTime === 'number' ? ` ${log.responseTime.toFixed(1)}ms` : '';
  const project = log.projectId ? `  project ${log.projectId}` : '';
  return `${req.method} ${req.url ?? ''} ${res.statusCode}${time}${project}`;
}

function prettyStream(destination?: DestinationStream): DestinationStream {
  // Required lazily: production (JSON) never loads pino-pretty and its dependencies.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    destination: destination ?? 1,
    sync: true,
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,reqId,req,res,responseTime,projectId',
    messageFormat: (log: Record<string, unknown>) => prettyMessage(log as RequestLine),
    singleLine: true,
  });
}

/** On a terminal the start-up banner says where we listen; Fastify's own line would precede it. */
const prettyHooks = {
  logMethod(this: Logger, args: Parameters<Logger['info']>, method: Logger['info']) {
    if (typeof args[0] === 'string' && args[0].startsWith('Server listening at ')) return;
    method.apply(this, args);
  },
};

export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  return pino(
    {
      level,
      ...(format === 'pretty' ? { hooks: prettyHooks } : {}),
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: maskUrl(req.url) }),
      },
    },
    format === 'pretty' ? prettyStream(destination) : destination,
  );
}
