/**
 * One implementation of each identity primitive serves operators and end users; these tests
 * pin the shared behaviour (the API tests of each caller cover the wiring):
 * - a stolen copy of the OTP table cannot be brute-forced offline (HMAC under the platform
 *   key, bound to audience, account and purpose), and a code of one audience never checks
 *   for the other;
 * - an access token of one audience (a project, the dashboard) is refused by the other, and
 *   the algorithm is never taken from the token;
 * - only the real secret of a known session counts as a replay.
 */
import { createHash } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { checkOtp, newOtp, OTP_MAX_ATTEMPTS, otpHash } from '../../src/lib/identity/otp.js';
import { signAccessJwt, verifyAccessJwt } from '../../src/lib/identity/jwt.js';
import { newRefreshSecret, parseIdSecretToken, refreshTokenHash, rejectionOf } from '../../src/lib/identity/refresh-token.js';

const key = Buffer.alloc(32, 7);
const now = new Date('2026-01-01T00:00:00Z');

describe('one-time codes', () => {
  it('are stored as an HMAC that a plain hash of the code (or of id:purpose:code) does not reproduce', () => {
    const otp = newOtp(key, 'operator', 'op1', 'verify_email', now);
    expect(otp.code).toMatch(/^\d{6}$/);
    for (const guess of [otp.code, `op1:verify_email:${otp.code}`]) {
      expect(otp.codeHash).not.toBe(createHash('sha256').update(guess).digest('hex'));
    }
    expect(otp.expiresAt.getTime() - now.getTime()).toBe(600_000);
  });

  it('check valid / wrong / locked / expired, and never across audiences, accounts or purposes', () => {
    const otp = newOtp(key, 'app-user', 'u1', 'reset_password', now);
    const row = { code_hash: otp.codeHash, attempts: 0, expires_at: otp.expiresAt };
    expect(checkOtp(key, 'app-user', 'u1', 'reset_password', otp.code, row, now)).toBe('valid');
    expect(checkOtp(key, 'operator', 'u1', 'reset_password', otp.code, row, now)).toBe('wrong');
    expect(checkOtp(key, 'app-user', 'u2', 'reset_password', otp.code, row, now)).toBe('wrong');
    expect(checkOtp(key, 'app-user', 'u1', 'verify_email', otp.code, row, now)).toBe('wrong');
    expect(checkOtp(key, 'app-user', 'u1', 'reset_password', otp.code, { ...row, attempts: OTP_MAX_ATTEMPTS }, now)).toBe('locked');
    expect(checkOtp(key, 'app-user', 'u1', 'reset_password', otp.code, row, otp.expiresAt)).toBe('missing');
    expect(checkOtp(key, 'app-user', 'u1', 'reset_password', otp.code, undefined, now)).toBe('missing');
    expect(otpHash(Buffer.alloc(32, 8), 'app-user', 'u1', 'reset_password', otp.code)).not.toBe(otp.codeHash);
  });
});

describe('access tokens', () => {
  const secret = Buffer.alloc(32, 9);
  const token = () => signAccessJwt({ secret, audience: 'plinth:project:p1', subject: 'u1', ttlSeconds: 60, now, claims: { userId: 'u1' } });

  it('verify for their own audience until they expire', async () => {
    expect(await verifyAccessJwt(await token(), secret, 'plinth:project:p1', now)).toMatchObject({ sub: 'u1', userId: 'u1' });
    expect(await verifyAccessJwt(await token(), secret, 'plinth:project:p2', now)).toBeNull();
    expect(await verifyAccessJwt(await token(), secret, 'plinth-dashboard', now)).toBeNull();
    expect(await verifyAccessJwt(await token(), secret, 'plinth:project:p1', new Date(now.getTime() + 61_000))).toBeNull();
    expect(await verifyAccessJwt(await token(), Buffer.alloc(32, 1), 'plinth:project:p1', now)).toBeNull();
  });

  it('a rotated secret refuses tokens of the old one, though the old one\'s key was imported first', async () => {
    const old = Buffer.alloc(32, 3);
    const issued = await signAccessJwt({ secret: old, audience: 'plinth:project:p1', subject: 'u1', ttlSeconds: 60, now });
    expect(await verifyAccessJwt(issued, old, 'plinth:project:p1', now)).not.toBeNull();
    const rotated = Buffer.alloc(32, 4);
    expect(await verifyAccessJwt(issued, rotated, 'plinth:project:p1', now)).toBeNull();
    expect(await verifyAccessJwt(issued, Buffer.from(old), 'plinth:project:p1', now)).not.toBeNull();
  });

  it('refuse unsigned and other-algorithm tokens', async () => {
    const claims = { sub: 'u1', iss: 'plinth', aud: 'plinth:project:p1', iat: Math.floor(now.getTime() / 1000), exp: Math.floor(now.getTime() / 1000) + 60 };
    expect(await verifyAccessJwt(new UnsecuredJWT(claims).encode(), secret, 'plinth:project:p1', now)).toBeNull();
    const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(Buffer.alloc(64, 9));
    expect(await verifyAccessJwt(hs512, secret, 'plinth:project:p1', now)).toBeNull();
  });
});

describe('refresh tokens', () => {
  it('are 256-bit secrets stored as SHA-256; only the real secret of a known session is a replay', () => {
    const s = newRefreshSecret();
    expect(s.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.tokenHash).toBe(refreshTokenHash(s.secret));
    expect(rejectionOf({ token_hash: s.tokenHash }, s.tokenHash)).toBe('replayed');
    expect(rejectionOf({ token_hash: s.tokenHash }, refreshTokenHash('x'.repeat(43)))).toBe('unknown');
    expect(rejectionOf(undefined, s.tokenHash)).toBe('unknown');
  });

  it('parse the end users\' <id>.<secret> form only', () => {
    const s = newRefreshSecret();
    expect(parseIdSecretToken(`${'a'.repeat(32)}.${s.secret}`)).toEqual({ id: 'a'.repeat(32), secret: s.secret });
    expect(parseIdSecretToken(s.secret)).toBeNull();
    expect(parseIdSecretToken(`${'g'.repeat(32)}.${s.secret}`)).toBeNull();
  });
});
