/**
 * @plinth/client/functions against a running Plinth: a deployed HTTP function called with the
 * signed-in user's identity (the function sees who calls), JSON and text answers, a path and a
 * query, and the function's own error as a PlinthError with its code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { functions } from '../../packages/client/src/functions.js';
import { PlinthError } from '../../packages/client/src/errors.js';
import { PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';
import { runPlinth, type Running } from './helpers.js';

let r: Running;

async function deploy(name: string, source: string) {
  const res = await r.env.app.inject({ method: 'POST', url: `/api/projects/${r.p.id}/functions`, headers: r.p.owner.auth, payload: { name, kind: 'http', source } });
  if (res.statusCode !== 201) throw new Error(`deploy: ${res.statusCode} ${res.body}`);
}

beforeAll(async () => {
  r = await runPlinth();
  await deploy('whoami', `export default (req, plinth) => ({ user: plinth.caller.userId, method: req.method, path: req.path, q: req.query.q ?? null, body: req.body })`);
  await deploy('text', `export default (req, plinth) => plinth.response('plain ✓', { headers: { 'content-type': 'text/plain; charset=utf-8' } })`);
  await deploy('refuse', `export default () => { throw new PlinthError('Not today', { status: 409, code: 'not_today' }); }`);
});
afterAll(() => r.env.close());

describe('functions(client)', () => {
  it('calls an HTTP function as the signed-in user, with a body, a path and a query', async () => {
    const client = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    const email = uniqueEmail();
    await client.auth.signUp({ email, password: PASSWORD });
    const me = await client.auth.me();
    const out = await functions(client).invoke<{ user: string; method: string; path: string; q: string; body: unknown }>('whoami', { ünï: '日本' }, { path: '/a/b', query: { q: 'x y' } });
    expect(out).toEqual({ user: (me as { _id?: string; id?: string })._id ?? (me as { id?: string }).id, method: 'POST', path: '/a/b', q: 'x y', body: { ünï: '日本' } });
    const anonymous = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    expect(await functions(anonymous).invoke('whoami')).toMatchObject({ user: null, method: 'GET', body: null });
  });

  it('answers text as text', async () => {
    const client = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    expect(await functions(client).invoke('text')).toBe('plain ✓');
  });

  it("throws the function's own error as a PlinthError with its code, and an unknown function as function_not_found", async () => {
    const client = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    const err = await functions(client).invoke('refuse', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlinthError);
    expect(err).toMatchObject({ status: 409, code: 'not_today', message: 'Not today' });
    await expect(functions(client).invoke('missing')).rejects.toMatchObject({ status: 404, code: 'function_not_found' });
  });
});
