/**
 * The version handshake (issue 48): @plinth/client names itself in `Plinth-Client`; a client
 * newer than the server supports gets 400 `client_version_unsupported` naming both versions
 * (with CORS headers, so a browser can read it), before authentication; the current and older
 * clients and requests without the header (the @urbackend/sdk) are served as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_VERSION, createClient } from '../../packages/client/src/index.js';
import { clientVersionProblem } from '../../src/plugins/client-version.js';
import { runPlinth, type Running } from './helpers.js';

let r: Running;
beforeAll(async () => {
  r = await runPlinth();
  await r.collection({ name: 'notes', schema: [{ key: 'text', type: 'String' }] });
});
afterAll(() => r.env.close());

const list = (headers: Record<string, string>) => r.env.app.inject({ method: 'GET', url: '/api/data/notes', headers: { ...r.p.pk, ...headers } });

describe('Plinth-Client', () => {
  it('the current client, an older one and no header at all are served', async () => {
    expect(clientVersionProblem(CLIENT_VERSION)).toBeNull();
    for (const h of [{ 'plinth-client': CLIENT_VERSION }, { 'plinth-client': '0.0.9' }, {}] as Array<Record<string, string>>) expect((await list(h)).statusCode).toBe(200);
    await expect(createClient({ url: r.url, apiKey: r.p.publishableKey }).collection('notes').list()).resolves.toMatchObject({ items: [] });
  });

  it('a newer client gets a clear 400 with a stable code, readable cross-origin, before authentication', async () => {
    for (const v of ['0.2.0', '1.0.0', '0.10.3-beta.1']) {
      const res = await list({ 'plinth-client': v, origin: 'http://app.example' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ success: false, code: 'client_version_unsupported', clientVersion: v, serverVersion: '0.1.0', newestClient: '0.1.x' });
      expect(res.json().message).toContain(`@plinth/client ${v} is newer than this Plinth server (0.1.0)`);
      expect(res.headers['access-control-allow-origin']).toBe('http://app.example');
    }
    const noKey = await r.env.app.inject({ method: 'GET', url: '/api/data/notes', headers: { 'plinth-client': '9.0.0' } });
    expect(noKey.json().code).toBe('client_version_unsupported');
    const junk = await list({ 'plinth-client': 'latest' });
    expect(junk.json()).toMatchObject({ code: 'client_version_unsupported' });
  });

  it('the client surfaces it as a PlinthError', async () => {
    const c = createClient({ url: r.url, apiKey: r.p.publishableKey, headers: { 'plinth-client': '0.7.0' } });
    await expect(c.collection('notes').list()).rejects.toMatchObject({ name: 'PlinthError', status: 400, code: 'client_version_unsupported' });
  });
});
