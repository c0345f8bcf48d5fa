/** Dashboard template CRUD, global system templates, and sending with a project template. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { render } from '../../../src/modules/mail/render.js';
import { send, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;
let other: TestProject;
const base = () => `/api/projects/${p.id}/mail/templates`;

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
  p = await makeProject(env.ctx);
  other = await makeProject(env.ctx);
});
afterAll(() => stopMailTest(env, fake));

describe('rendering', () => {
  it('escapes {{ }} in html, keeps {{{ }}} raw, plain in text, dot paths, missing → empty', () => {
    const vars = { user: { name: '<i>Ann</i>' }, raw: '<b>x</b>', link: 'https://ok.example/a?b=1' };
    expect(render('{{ user.name }}|{{{raw}}}|{{missing}}|{{link}}', vars, true)).toBe('&lt;i&gt;Ann&lt;/i&gt;|<b>x</b>||https://ok.example/a?b=1');
    expect(render('{{user.name}}', vars, false)).toBe('<i>Ann</i>');
    expect(render('{{{ evilUrl }}}', { evilUrl: 'javascript:alert(1)' }, true)).toBe('');
    expect(render('{{__proto__.x}}', {}, true)).toBe('');
  });
});

describe('template CRUD (dashboard)', () => {
  let id: string;

  it('lists the global system templates', async () => {
    const res = await env.app.inject({ method: 'GET', url: `${base()}/global`, headers: p.owner.auth });
    expect(res.statusCode).toBe(200);
    const keys = res.json().data.templates.map((t: { key: string }) => t.key).sort();
    expect(keys).toEqual(['invite', 'otp', 'password-reset', 'welcome']);
    expect(res.json().data.templates[0]).toMatchObject({ scope: 'global', isSystem: true });
  });

  it('creates (201), lists, reads, rejects duplicates (409) and empty content (400)', async () => {
    const res = await env.app.inject({
      method: 'POST', url: base(), headers: p.owner.auth,
      payload: { name: 'Order Shipped', subject: 'Order {{orderId}} shipped', html: '<p>Hi {{name}}, order {{orderId}} is on its way.</p>' },
    });
    expect(res.statusCode).toBe(201);
    id = res.json().data.template.id;
    expect(res.json().data.template).toMatchObject({ key: 'order-shipped', scope: 'project', isSystem: false });
    const dup = await env.app.inject({ method: 'POST', url: base(), headers: p.owner.auth, payload: { name: 'order shipped', subject: 's', text: 't' } });
    expect(dup.statusCode).toBe(409);
    const empty = await env.app.inject({ method: 'POST', url: base(), headers: p.owner.auth, payload: { name: 'Empty', subject: 's' } });
    expect(empty.statusCode).toBe(400);
    const list = await env.app.inject({ method: 'GET', url: base(), headers: p.owner.auth });
    expect(list.json().data.templates).toHaveLength(1);
    const one = await env.app.inject({ method: 'GET', url: `${base()}/${id}`, headers: p.owner.auth });
    expect(one.json().data.template.html).toContain('{{orderId}}');
  });

  it('sends with a project template by name and by id', async () => {
    fake.reset();
    const byName = await send(env, p, { to: 'a@example.com', templateName: 'Order Shipped', variables: { name: 'Ann', orderId: 'A-1' } });
    expect(byName.statusCode).toBe(200);
    expect(byName.json().data.templateUsed).toMatchObject({ id, scope: 'project', key: 'order-shipped' });
    const byId = await send(env, p, { to: 'a@example.com', templateId: id, variables: { name: 'Bo', orderId: 'B-2' }, subject: 'Custom subject' });
    expect(byId.statusCode).toBe(200);
    await drainJobs(env);
    const subjects = [...fake.emails.values()].map((e) => e.subject).sort();
    expect(subjects).toEqual(['Custom subject', 'Order A-1 shipped']);
    // Another project cannot use it.
    expect((await send(env, other, { to: 'a@example.com', templateId: id })).statusCode).toBe(400);
  });

  it('updates (400 on empty patch), and protects system templates and other projects', async () => {
    const patch = await env.app.inject({ method: 'PATCH', url: `${base()}/${id}`, headers: p.owner.auth, payload: { subject: 'Shipped!' } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data.template.subject).toBe('Shipped!');
    expect((await env.app.inject({ method: 'PATCH', url: `${base()}/${id}`, headers: p.owner.auth, payload: {} })).statusCode).toBe(400);
    const noKey = await env.app.inject({ method: 'PATCH', url: `${base()}/${id}`, headers: p.owner.auth, payload: { key: '!!!' } });
    expect(noKey.statusCode).toBe(400); // slugs to '': refused like on create, not a constraint error
    expect(noKey.json().message).toBe('The template key must contain letters or digits.');
    const globalId = (await env.app.inject({ method: 'GET', url: `${base()}/global`, headers: p.owner.auth })).json().data.templates[0].id;
    expect((await env.app.inject({ method: 'PATCH', url: `${base()}/${globalId}`, headers: p.owner.auth, payload: { subject: 'x' } })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'DELETE', url: `${base()}/${globalId}`, headers: p.owner.auth })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'GET', url: `${base()}/${id}`, headers: other.owner.auth })).statusCode).toBe(404);
    expect((await env.app.inject({ method: 'GET', url: `${base()}/not-an-id`, headers: p.owner.auth })).statusCode).toBe(400);
  });

  it('deletes', async () => {
    const del = await env.app.inject({ method: 'DELETE', url: `${base()}/${id}`, headers: p.owner.auth });
    expect(del.statusCode).toBe(200);
    expect(del.json().message).toBe('Mail template deleted.');
    expect((await env.app.inject({ method: 'GET', url: `${base()}/${id}`, headers: p.owner.auth })).statusCode).toBe(404);
  });
});
