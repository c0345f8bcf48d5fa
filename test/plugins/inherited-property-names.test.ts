/**
 * Threat: client text used as a key into a plain object reaches an inherited property
 * (`constructor`, `toString`, `__proto__`...) and a handler crashes (500) or misbehaves. Every
 * place a client names something is swept with those names: filters, sort, fields, populate,
 * collection/document/user/file names, body keys (plain and dotted), users fields, template
 * names and variables, webhook event types, provider names, plan names, settings keys, schema
 * field keys and types, header names and values. None may answer 5xx; every error keeps the
 * envelope; a signed webhook event of such a type is ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { makeCollection, makeOperator, makeProject, makeUserToken, USERS_FIELDS, type TestProject } from '../helpers/fixtures.js';
import { PLATFORM_SECRET, signedEvent } from '../modules/mail/helpers.js';

const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

let env: TestEnv;
let p: TestProject;
let admin: { authorization: string };
let user: { authorization: string };

beforeAll(async () => {
  env = await createTestEnv({ RATE_LIMIT_SCALE: '0', MAIL_WEBHOOK_SECRET: PLATFORM_SECRET, ADMIN_EMAIL: 'root@example.com' });
  const pro = await makeOperator(env.ctx, { plan: 'pro' });
  p = await makeProject(env.ctx, pro);
  admin = (await makeOperator(env.ctx, { email: 'root@example.com' })).auth;
  await makeCollection(env.ctx, p.id, 'users', USERS_FIELDS);
  await makeCollection(env.ctx, p.id, 'notes', [
    { key: 'n', type: 'Number' },
    { key: 'owner', type: 'Ref', ref: 'users' },
    { key: 'meta', type: 'Object', fields: [{ key: 'k', type: 'String' }] },
  ]);
  const created = await env.app.inject({ method: 'POST', url: '/api/data/notes', headers: p.sk, payload: { n: 1, meta: { k: 'v' }, free: { a: 1 } } });
  expect(created.statusCode).toBe(201);
  const signup = await env.app.inject({ method: 'POST', url: '/api/userAuth/signup', headers: p.pk, payload: { email: 'u@example.com', password: 'long enough 1' } });
  user = { authorization: `Bearer ${await makeUserToken(env.ctx, p, signup.json().data.user._id)}` };
});
afterAll(() => env.close());

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  url: string;
  headers?: Record<string, string>;
  payload?: unknown;
  /** Raw JSON text, for keys JSON.stringify would keep but object literals cannot spell. */
  raw?: string;
}

function calls(name: string): Call[] {
  const q = encodeURIComponent(name);
  const pid = p.id;
  const withUser = { ...p.pk, ...user };
  const listQueries = [
    `sort=${q}`, `sort=-${q}`, `sort=${q}:desc`, `sort=meta.${q}`, `${q}=1`, `${q}_gt=1`, `${q}_lte=x`, `${q}_in=a,b`, `${q}_ne=1`,
    `${q}_exists=true`, `${q}_regex=a`, `meta.${q}=1`, `${q}.a=1`, `fields=${q}`, `fields=meta.${q}`, `fields=${q}.a`,
    `populate=${q}`, `expand=${q}`, `cursor=${q}&sort=${q}`, `limit=${q}`, `page=${q}`, `count=${q}`, `include_deleted=${q}`, `meta=${q}`,
  ];
  const rawKey = (k: string, v = '"x"') => `{${JSON.stringify(k)}:${v}}`;
  return [
    ...listQueries.flatMap((qs): Call[] => [
      { method: 'GET', url: `/api/data/notes?${qs}`, headers: p.sk },
      { method: 'GET', url: `/api/data/notes?${qs}`, headers: p.pk },
    ]),
    { method: 'GET', url: `/api/data/${q}`, headers: p.sk },
    { method: 'POST', url: `/api/data/${q}`, headers: p.sk, payload: { a: 1 } },
    { method: 'GET', url: `/api/data/notes/${q}`, headers: p.sk },
    { method: 'GET', url: `/api/schemas/${q}`, headers: p.sk },
    { method: 'POST', url: '/api/data/notes', headers: p.sk, raw: rawKey(name) },
    { method: 'POST', url: '/api/data/notes', headers: p.sk, raw: rawKey('meta', rawKey(name)) },
    { method: 'POST', url: '/api/data/notes/bulk', headers: p.sk, raw: `[${rawKey(name)}]` },
    { method: 'PUT', url: `/api/data/notes/${'f'.repeat(24)}`, headers: p.sk, raw: rawKey(name) },
    { method: 'PATCH', url: `/api/data/notes/${'f'.repeat(24)}`, headers: p.sk, raw: rawKey(`meta.${name}`) },
    { method: 'POST', url: '/api/schemas', headers: p.sk, payload: { name: 'x1', fields: [{ name, type: 'String' }] } },
    { method: 'POST', url: '/api/schemas', headers: p.sk, payload: { name: 'x2', fields: [{ name: 'a', type: name }] } },
    // end-user accounts: custom fields, profile, public profile, header values
    { method: 'POST', url: '/api/userAuth/signup', headers: p.pk, raw: `{"email":"${name.replace(/_/g, '')}1@example.com","password":"long enough 1",${rawKey(name).slice(1, -1)}}` },
    { method: 'PUT', url: '/api/userAuth/update-profile', headers: withUser, raw: rawKey(name) },
    { method: 'GET', url: `/api/userAuth/public/${q}`, headers: p.pk },
    { method: 'POST', url: '/api/userAuth/login', headers: { ...p.pk, 'x-refresh-token-mode': name }, payload: { email: 'u@example.com', password: 'long enough 1' } },
    { method: 'POST', url: '/api/userAuth/refresh-token', headers: { ...p.pk, 'x-refresh-token': name, 'x-refresh-token-mode': name } },
    // social sign-in: provider names
    { method: 'GET', url: `/api/userAuth/social/${q}/start?key=${p.publishableKey}` },
    { method: 'GET', url: `/api/userAuth/social/${q}/callback?state=${q}&code=${q}` },
    { method: 'POST', url: '/api/userAuth/social/exchange', headers: p.pk, payload: { rtCode: name, token: name } },
    { method: 'PATCH', url: `/api/projects/${pid}/auth/providers`, headers: p.owner.auth, raw: rawKey(name, '{"enabled":true,"clientId":"x"}') },
    // mail: template names and variables, log ids, audiences
    { method: 'POST', url: '/api/mail/send', headers: p.sk, payload: { to: 'a@example.com', templateName: name } },
    { method: 'POST', url: '/api/mail/send', headers: p.sk, raw: `{"to":"a@example.com","templateName":"welcome","variables":${rawKey(name)}}` },
    { method: 'POST', url: '/api/mail/send-batch', headers: p.sk, payload: [{ to: 'a@example.com', templateName: name }] },
    { method: 'GET', url: `/api/mail/logs/${q}`, headers: p.sk },
    { method: 'POST', url: `/api/projects/${pid}/mail/templates`, headers: p.owner.auth, payload: { name, key: name, subject: `{{${name}}}`, html: `{{{${name}}}} {{a.${name}}}` } },
    { method: 'GET', url: `/api/projects/${pid}/mail/templates/${q}`, headers: p.owner.auth },
    // dashboard: schema field keys and types, RLS owner field, indexes, settings keys, plans
    { method: 'POST', url: `/api/projects/${pid}/collections`, headers: p.owner.auth, payload: { name: `c${NAMES.indexOf(name)}a`, schema: [{ key: name, type: 'String' }] } },
    { method: 'POST', url: `/api/projects/${pid}/collections`, headers: p.owner.auth, payload: { name: `c${NAMES.indexOf(name)}b`, schema: [{ key: 'a', type: name }] } },
    { method: 'POST', url: `/api/projects/${pid}/collections`, headers: p.owner.auth, payload: { name: `c${NAMES.indexOf(name)}c`, schema: [{ key: 'a', type: 'String', default: name }], indexes: [{ fields: [name, 'a'] }] } },
    { method: 'PATCH', url: `/api/projects/${pid}/collections/notes/rls`, headers: p.owner.auth, payload: { enabled: true, mode: name, ownerField: name } },
    { method: 'PATCH', url: `/api/projects/${pid}/collections/notes`, headers: p.owner.auth, payload: { schema: [{ key: name, type: 'String' }] } },
    { method: 'GET', url: `/api/projects/${pid}/collections/${q}`, headers: p.owner.auth },
    { method: 'PATCH', url: `/api/projects/${pid}`, headers: p.owner.auth, raw: rawKey(name) },
    { method: 'PATCH', url: `/api/projects/${pid}`, headers: p.owner.auth, payload: { allowedDomains: [name] } },
    { method: 'POST', url: `/api/projects/${pid}/api-key`, headers: p.owner.auth, payload: { keyType: name } },
    { method: 'PATCH', url: `/api/admin/operators/${p.owner.id}/plan`, headers: admin, payload: { plan: name } },
    { method: 'POST', url: `/api/projects/${pid}/ai/query-builder`, headers: p.owner.auth, payload: { collection: name, prompt: name } },
    { method: 'DELETE', url: `/api/projects/${pid}/users/${q}`, headers: p.owner.auth },
    // storage: file names and paths
    { method: 'POST', url: '/api/storage/upload-request', headers: p.sk, payload: { filename: name, contentType: name, size: 1 } },
    { method: 'DELETE', url: '/api/storage/file', headers: p.sk, payload: { path: `${pid}/${name}` } },
    { method: 'GET', url: `/api/storage/public/${pid}/${q}` },
    // header names
    { method: 'GET', url: '/api/data/notes', headers: { ...p.sk, [name.toLowerCase()]: name } },
    { method: 'OPTIONS', url: '/api/data/notes', headers: { origin: 'https://a.example', 'access-control-request-method': name, 'access-control-request-headers': name } },
  ];
}

describe('inherited property names as client text', () => {
  it.each(NAMES)('%s: no 5xx anywhere, errors keep the envelope', async (name) => {
    const failures: string[] = [];
    for (const c of calls(name)) {
      const body = c.raw ?? (c.payload === undefined ? undefined : JSON.stringify(c.payload));
      const res = await env.app.inject({
        method: c.method,
        url: c.url,
        headers: { ...c.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: body }),
      });
      const label = `${c.method} ${c.url} ${body ?? ''}`.slice(0, 200);
      if (res.statusCode >= 500) failures.push(`${label} → ${res.statusCode} ${res.body.slice(0, 160)}`);
      else if (res.statusCode >= 400 && c.method !== 'OPTIONS') {
        const b = res.json() as { success?: unknown; code?: unknown };
        if (b.success !== false || typeof b.code !== 'string') failures.push(`${label} → ${res.statusCode} without envelope`);
      }
    }
    expect(failures).toEqual([]);
  });

  it.each(NAMES)('a signed mail webhook event of type %s is ignored', async (name) => {
    const event = signedEvent({ type: name, emailId: 'em_1' });
    const res = await env.app.inject({ method: 'POST', url: '/api/mail/webhook', headers: event.headers, payload: event.body });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toBe('Event ignored.');
  });
});
