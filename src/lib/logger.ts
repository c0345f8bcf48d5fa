/**
 * Pino logger. Keys, tokens, cookies, passwords and provider keys are redacted wherever they
 * appear; the key query parameters are masked in logged URLs.
 */
import pino, { type DestinationStream, type Logger } from 'pino';

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

const KEY_PARAM = /([?&](?:key|x-api-key|token|code|state|rtCode)=)[^&#]*/gi;

function maskUrl(url: string): string {
  return url.replace(KEY_PARAM, '$1[REDACTED]');
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: maskUrl(req.url) }),
      },
    },
    destination,
  );
}
