/**
 * A software WebAuthn authenticator for tests without a browser: ES256 (P-256) keys, packed
 * "none" attestation, a signature counter the test can set (to replay or run it backwards).
 * The browser tests use Chromium's own virtual authenticator instead.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

type Cbor = number | string | Buffer | Map<number | string, Cbor>;

/** The little CBOR WebAuthn needs: integers, byte and text strings, maps. */
function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (Buffer.isBuffer(v)) return Buffer.concat([head(2, v.length), v]);
  const parts = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cbor(k), cbor(val));
  return Buffer.concat(parts);
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest();

export interface SoftCredential {
  id: Buffer;
  key: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

export class SoftAuthenticator {
  credentials: SoftCredential[] = [];
  constructor(readonly origin: string, readonly opts: { backup?: boolean } = {}) {}

  private flags(uv: boolean, at: boolean): number {
    return 0x01 | (uv ? 0x04 : 0) | (this.opts.backup ? 0x18 : 0) | (at ? 0x40 : 0);
  }

  /** navigator.credentials.create() for these options; `over.id`: a chosen credential id (e.g. another user's). */
  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, over: { rpId?: string; origin?: string; id?: Buffer } = {}) {
    const rpId = over.rpId ?? options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    const id = over.id ?? randomBytes(16);
    const counter = new Uint8Array(4);
    const idLen = Buffer.from([id.length >> 8, id.length & 255]);
    const authData = Buffer.concat([sha(rpId), Buffer.from([this.flags(true, true)]), counter, Buffer.alloc(16), idLen, id, cose]);
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: over.origin ?? this.origin, crossOrigin: false });
    const attestationObject = cbor(new Map<string, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    this.credentials.push({ id, key: privateKey, rpId, userHandle: options.user.id, counter: 0 });
    return {
      id: b64(id), rawId: b64(id), type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ['internal'] },
    };
  }

  /** navigator.credentials.get(): signs with `cred` (the last registered by default), counter + 1 unless given. */
  assert(options: { challenge: string }, over: { cred?: SoftCredential; counter?: number; uv?: boolean; origin?: string } = {}) {
    const cred = over.cred ?? this.credentials[this.credentials.length - 1]!;
    cred.counter = over.counter ?? cred.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.counter);
    const authData = Buffer.concat([sha(cred.rpId), Buffer.from([this.flags(over.uv ?? true, false)]), counter]);
    const clientData = JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: over.origin ?? this.origin, crossOrigin: false });
    const signature = sign('sha256', Buffer.concat([authData, sha(clientData)]), cred.key);
    return {
      id: b64(cred.id), rawId: b64(cred.id), type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), userHandle: cred.userHandle },
    };
  }
}
