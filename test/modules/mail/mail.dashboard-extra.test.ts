/**
 * The console's mail routes: template preview (the real renderer: escaping, raw tags, unsafe
 * URLs emptied), and audiences, contacts and broadcasts for the project owner with the same
 * gates as the secret-key routes. Another operator's session reaches none of them (404) and
 * no provider call is made for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeOperator, makeProject, type TestOperator, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { setProjectMailKey, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let shared: TestProject;
let ownFree: TestProject;
let ownPro: TestProject;
let stranger: TestOperator;

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  shared = await makeProject(env.ctx);
  ownFree = await makeProject(env.ctx);
  ownPro = await makeProject(env.ctx, await makeOperator(env.ctx, { plan: 'pro' }));
  stranger = await makeOperator(env.ctx);
  await setProjectMailKey(env, ownFree.id, 're_own_free');
  await setProjectMailKey(env, ownPro.id, 're_own_pro', 'Pro Sender <news@pro.example>');
});
afterAll(() => stopMailTest(env, fake));

const op = (p: TestProject, method: 'GET' | 'POST' | 'DELETE', path: string, payload?: object, auth = p.owner.auth) =>
  env.app.inject({ method, url: `/api/projects/${p.id}/mail${path}`, headers: auth, payload });

describe('template preview', () => {
  it('renders subject, html and text with the variables, escaping html and dropping unsafe URLs', async () => {
    const res = await op(shared, 'POST', '/templates/preview', {
      subject: 'Hi {{ name }}',
      html: '<p>{{ name }}</p>{{{ raw }}}<a href="{{ linkUrl }}">x</a>',
      text: 'Hello {{ name }}',
      variables: { name: '<Ann>', raw: '<b>bold</b>', linkUrl: 'javascript:alert(1)' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      subject: 'Hi <Ann>',
      html: '<p>&lt;Ann&gt;</p><b>bold</b><a href="">x</a>',
      text: 'Hello <Ann>',
    });
  });
});

describe('audiences, contacts, broadcasts for the owner', () => {
  it('needs the own key (403 on the shared key) and works with it', async () => {
    expect((await op(shared, 'GET', '/audiences')).statusCode).toBe(403);
    const created = await op(ownFree, 'POST', '/audiences', { name: 'Newsletter' });
    expect(created.statusCode).toBe(200);
    expect(fake.requests.at(-1)!.key).toBe('re_own_free');
    const audienceId = created.json().data.id;
    const contact = await op(ownFree, 'POST', `/audiences/${audienceId}/contacts`, { email: 'x@example.com' });
    expect(contact.statusCode).toBe(200);
    expect((await op(ownFree, 'GET', `/audiences/${audienceId}/contacts`)).json().data.data).toHaveLength(1);
    expect((await op(ownFree, 'DELETE', `/audiences/${audienceId}/contacts/${contact.json().data.id}`)).statusCode).toBe(200);
    expect((await op(ownFree, 'DELETE', `/audiences/${audienceId}`)).statusCode).toBe(200);
  });

  it('broadcasts need Pro as well', async () => {
    expect((await op(ownFree, 'GET', '/broadcasts')).statusCode).toBe(403);
    const audienceId = (await op(ownPro, 'POST', '/audiences', { name: 'All' })).json().data.id;
    const b = await op(ownPro, 'POST', '/broadcasts', { audienceId, subject: 'News', html: '<p>n</p>' });
    expect(b.statusCode).toBe(200);
    expect(fake.requests.at(-1)!.key).toBe('re_own_pro');
    expect((await op(ownPro, 'GET', '/broadcasts')).statusCode).toBe(200);
    expect((await op(ownPro, 'POST', `/broadcasts/${b.json().data.id}/send`, {})).statusCode).toBe(200);
    expect((await op(ownPro, 'DELETE', `/broadcasts/${b.json().data.id}`)).statusCode).toBe(200);
  });

  it('another operator gets 404 everywhere and no provider call is made', async () => {
    const before = fake.requests.length;
    const U = '11111111-2222-4333-8444-555555555555';
    const calls: Array<['GET' | 'POST' | 'DELETE', string, object?]> = [
      ['POST', '/templates/preview', { html: 'x' }],
      ['GET', '/audiences'], ['POST', '/audiences', { name: 'x' }], ['DELETE', `/audiences/${U}`],
      ['GET', `/audiences/${U}/contacts`], ['POST', `/audiences/${U}/contacts`, { email: 'a@b.c' }], ['DELETE', `/audiences/${U}/contacts/${U}`],
      ['GET', '/broadcasts'], ['POST', '/broadcasts', { audienceId: U, subject: 's', html: 'h' }], ['POST', `/broadcasts/${U}/send`, {}], ['DELETE', `/broadcasts/${U}`],
    ];
    for (const [method, path, payload] of calls) {
      const res = await op(ownPro, method, path, payload, stranger.auth);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
    }
    expect(fake.requests.length).toBe(before);
  });
});
