/**
 * The audit log's one masking function (src/modules/audit/mask.ts): secret-named members and
 * secret-shaped strings never pass; flags and ordinary settings do; the output is JSON that
 * jsonb stores unchanged, bounded in size.
 */
import { describe, expect, it } from 'vitest';
import { MASKED, maskSecrets, MAX_VALUE_BYTES } from '../../../src/modules/audit/mask.js';

describe('maskSecrets', () => {
  it('masks members named like secrets at any depth, keeps their boolean flags', () => {
    const out = maskSecrets({
      name: 'p',
      secretKey: 'anything',
      aiKey: 'gsk_x',
      password: 'hunter22',
      nested: { clientSecret: 'abc', hasClientSecret: true, secretAccessKey: 'AKIA…', list: [{ token: 't' }] },
      password_hash: 'x',
      value: 'fn secret',
      fields: [{ key: 'email', type: 'String' }],
    });
    expect(out).toEqual({
      name: 'p',
      secretKey: MASKED,
      aiKey: MASKED,
      password: MASKED,
      nested: { clientSecret: MASKED, hasClientSecret: true, secretAccessKey: MASKED, list: [{ token: MASKED }] },
      password_hash: MASKED,
      value: MASKED,
      fields: [{ key: 'email', type: 'String' }],
    });
  });

  it('masks secret-shaped strings wherever they appear', () => {
    const values = [
      'sk_live_AbCdEfGh12345678_-x',
      'pk_live_AbCdEfGh12345678',
      're_AbCdEfGh12345678',
      'gsk_AbCdEfGh12345678',
      'whsec_AbCdEfGh12345678==',
      '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2g',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ];
    for (const v of values) {
      const text = JSON.stringify(maskSecrets({ note: `before ${v} after`, list: [v] }));
      expect(text, v).not.toContain(v.slice(0, 20));
      expect(text).toContain(MASKED);
    }
  });

  it('gives JSON only (no undefined, NaN, NUL), and a large value as its size and hash', () => {
    expect(maskSecrets({ a: undefined, b: Number.NaN, c: 'x\u0000y', d: new Date(0) })).toEqual({ b: null, c: 'xy', d: '1970-01-01T00:00:00.000Z' });
    expect(maskSecrets(undefined)).toBeNull();
    const big = maskSecrets({ text: 'a'.repeat(MAX_VALUE_BYTES + 10) }) as { truncated: boolean; bytes: number; sha256: string };
    expect(big).toMatchObject({ truncated: true });
    expect(big.bytes).toBeGreaterThan(MAX_VALUE_BYTES);
    expect(big.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
