/**
 * The synchronous host functions behind the guest's Web standards (guest-stdlib.ts): URL parsing
 * with Node's own WHATWG `URL`, and randomness, digests and HMAC with node:crypto. They run in the
 * sandbox process, which holds no secret, inside the guest's CPU slice (their time is CPU time).
 *
 * Everything arriving here is untrusted: a name, a JSON text of arguments and an optional string
 * of bytes (one character per byte, U+0000–U+00FF, passed through `escape()` because the engine
 * reads guest strings as C strings, which end at a NUL), each already bounded in length by the engine
 * before it was copied out of the guest (`SYNC_LIMITS`). Every argument is checked for its type
 * and size again here. The answer is one JSON text, `{"v": value}` or `{"e": {"name", "message"}}`;
 * binary answers are strings of one character per byte.
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

export const SYNC_LIMITS = {
  /** Characters of a call's name. */
  name: 64,
  /** Characters of a call's JSON arguments (a whole href and a value, escaped, fit). */
  args: 4 * 1024 * 1024,
  /** Bytes handed to a digest, an HMAC or btoa. */
  bytes: 4 * 1024 * 1024,
  /** Characters of the escaped bytes string of one call (an HMAC's key, data and signature, 3 per byte at most). */
  bytesIn: 3 * (4 * 1024 * 1024 + 64 * 1024 + 1024),
  /** Characters of a URL or a base URL given to the parser, or of a value given to a setter. */
  url: 64 * 1024,
  /** Characters of a whole URL (percent-encoding makes it longer than what was given). */
  href: 1024 * 1024,
  /** Bytes of one crypto.getRandomValues, as in browsers. */
  random: 65536,
  /** Bytes of an HMAC key. */
  hmacKey: 64 * 1024,
};

const DIGESTS: Record<string, string> = { 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
const URL_PARTS = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const;
const URL_SETTERS = new Set(['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']);

class GuestError extends Error {
  constructor(
    readonly guestName: string,
    message: string,
  ) {
    super(message);
  }
}

type Handler = (args: unknown[], bytes: Buffer | null) => unknown;

function str(value: unknown, what: string, max: number): string {
  if (typeof value !== 'string') throw new GuestError('TypeError', `${what} must be a string`);
  if (value.length > max) throw new GuestError('RangeError', `${what} is longer than ${max} characters`);
  return value;
}

function parseUrl(input: string, base?: string): URL {
  try {
    return base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    throw new GuestError('TypeError', 'Invalid URL');
  }
}

function parts(url: URL): Record<string, string> {
  if (url.href.length > SYNC_LIMITS.href) throw new GuestError('RangeError', `the URL is longer than ${SYNC_LIMITS.href} characters`);
  const out: Record<string, string> = {};
  for (const key of URL_PARTS) out[key] = url[key];
  return out;
}

function bytesOf(bytes: Buffer | null, max: number, what: string): Buffer {
  if (!bytes) throw new GuestError('TypeError', `${what} is missing`);
  if (bytes.length > max) throw new GuestError('RangeError', `${what} is larger than ${max} bytes`);
  return bytes;
}

function digestName(value: unknown): string {
  const name = typeof value === 'string' ? DIGESTS[value.toUpperCase()] : undefined;
  if (!name) throw new GuestError('NotSupportedError', 'Unrecognized algorithm name');
  return name;
}

/** [hash, keyLength] then the key and the data in `bytes`: the key first, `keyLength` bytes of it. */
function hmac(args: unknown[], bytes: Buffer | null): { mac: Buffer; rest: Buffer } {
  const hash = digestName(args[0]);
  const keyLength = args[1];
  const input = bytesOf(bytes, SYNC_LIMITS.bytes + SYNC_LIMITS.hmacKey + 1024, 'the key and data');
  if (typeof keyLength !== 'number' || !Number.isInteger(keyLength) || keyLength < 0 || keyLength > SYNC_LIMITS.hmacKey || keyLength > input.length) {
    throw new GuestError('TypeError', 'bad HMAC key length');
  }
  const dataLength = typeof args[2] === 'number' ? args[2] : -1;
  if (!Number.isInteger(dataLength) || dataLength < 0 || keyLength + dataLength > input.length) throw new GuestError('TypeError', 'bad HMAC data length');
  const key = input.subarray(0, keyLength);
  const data = input.subarray(keyLength, keyLength + dataLength);
  if (data.length > SYNC_LIMITS.bytes) throw new GuestError('RangeError', `the data is larger than ${SYNC_LIMITS.bytes} bytes`);
  return { mac: createHmac(hash, key).update(data).digest(), rest: input.subarray(keyLength + dataLength) };
}

/** ASCII whitespace, removed by forgiving-base64 decode. */
const B64_SPACE = /[\t\n\f\r ]/g;
const B64_VALID = /^[A-Za-z0-9+/]*$/;

const HANDLERS: Record<string, Handler> = {
  /** The bytes (as `bytes`) → their base64 (btoa). */
  'base64.encode'(_args, bytes) {
    return bytesOf(bytes, SYNC_LIMITS.bytes, 'the data').toString('base64');
  },
  /** [text] → the bytes (atob), by the WHATWG forgiving-base64 decode; null when it is not base64. */
  'base64.decode'(args) {
    let text = str(args[0], 'the data', SYNC_LIMITS.bytesIn).replace(B64_SPACE, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1 || !B64_VALID.test(text)) return null;
    return Buffer.from(text, 'base64').toString('latin1');
  },
  /** [input, base?] → the URL's parts. */
  'url.parse'(args) {
    const input = str(args[0], 'the URL', SYNC_LIMITS.url);
    const base = args[1] === undefined || args[1] === null ? undefined : str(args[1], 'the base URL', SYNC_LIMITS.url);
    return parts(parseUrl(input, base));
  },
  /** [href, part, value] → the URL's parts after the setter (which may ignore the value, as in browsers). */
  'url.set'(args) {
    const href = str(args[0], 'the URL', SYNC_LIMITS.href);
    const part = str(args[1], 'the part', 16);
    const value = str(args[2], 'the value', SYNC_LIMITS.url);
    if (!URL_SETTERS.has(part)) throw new GuestError('TypeError', 'no such URL part');
    if (part === 'href') return parts(parseUrl(value));
    const url = parseUrl(href);
    (url as unknown as Record<string, string>)[part] = value;
    return parts(url);
  },
  'crypto.randomUUID'() {
    return randomUUID();
  },
  /** [n] → n random bytes. */
  'crypto.random'(args) {
    const n = args[0];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new GuestError('TypeError', 'bad length');
    if (n > SYNC_LIMITS.random) throw new GuestError('QuotaExceededError', `more than ${SYNC_LIMITS.random} random bytes at once`);
    return randomBytes(n).toString('latin1');
  },
  /** [algorithm] and the data in `bytes` → the digest. */
  'crypto.digest'(args, bytes) {
    const hash = digestName(args[0]);
    return createHash(hash).update(bytesOf(bytes, SYNC_LIMITS.bytes, 'the data')).digest().toString('latin1');
  },
  /** [hash, keyLength, dataLength] and the key then the data in `bytes` → the MAC. */
  'crypto.hmacSign'(args, bytes) {
    return hmac(args, bytes).mac.toString('latin1');
  },
  /** As hmacSign, with the signature after the data in `bytes` → whether it matches (in constant time). */
  'crypto.hmacVerify'(args, bytes) {
    const { mac, rest } = hmac(args, bytes);
    return rest.length === mac.length && timingSafeEqual(rest, mac);
  },
};

/** One synchronous call from the guest: always answers a JSON text, never throws. */
export function hostSync(name: string, argsJson: string, bytes: string | null): string {
  try {
    const handler = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
    if (!handler) throw new GuestError('TypeError', `no host function ${name.slice(0, 64)}`);
    let args: unknown;
    try {
      args = JSON.parse(argsJson);
    } catch {
      throw new GuestError('TypeError', 'the arguments are not JSON');
    }
    if (!Array.isArray(args)) throw new GuestError('TypeError', 'the arguments are not a list');
    let buffer: Buffer | null = null;
    if (bytes !== null) {
      const raw = unescape(bytes);
      // One character per byte: anything above U+00FF is not a byte (Buffer would truncate it).
      if (/[\u0100-\uffff]/.test(raw)) throw new GuestError('TypeError', 'the bytes are not bytes');
      buffer = Buffer.from(raw, 'latin1');
    }
    return JSON.stringify({ v: handler(args, buffer) });
  } catch (err) {
    if (err instanceof GuestError) return JSON.stringify({ e: { name: err.guestName, message: err.message } });
    return JSON.stringify({ e: { name: 'Error', message: 'the host function failed' } });
  }
}
