/** POST /api/mail/send-batch: direct, per-item results, slots reserved then refunded on failure. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { logsOf, mailUsage, startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;

const batch = (items: unknown, headers = p.sk) =>
  env.app.inject({ method: 'POST', url: '/api/mail/send-batch', headers, payload: items as object });
const item = (i: number, to = `u${i}@example.com`) => ({ to, subject: `s${i}`, html: `<p>${i}</p>` });

beforeAll(async () => {
  ({ fake, env } = await startMailTest());
});
afterAll(() => stopMailTest(env, fake));
beforeEach(async () => {
  fake.reset();
  p = await makeProject(env.ctx);
});

describe('send-batch', () => {
  it('sends directly (no queue), one result per item, MailLogs `sent` for accepted items', async () => {
    const res = await batch([item(0), item(1), item(2)]);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toHaveLength(3);
    expect(fake.emails.size).toBe(3);
    const logs = await logsOf(env, p.id);
    expect(logs.map((l) => l.status)).toEqual(['sent', 'sent', 'sent']);
    expect(new Set(logs.map((l) => l.provider_email_id))).toEqual(new Set(data.map((d: { id: string }) => d.id)));
    expect(await mailUsage(env, p.id)).toBe(3);
    expect(fake.requests[0]!.path).toBe('/emails/batch');
  });

  it('items are independent: a refused item gets an error, its slot is refunded, the rest go out', async () => {
    const res = await batch([item(0), item(1, 'invalid@example.com'), item(2)]);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data[0].id).toBeTruthy();
    expect(data[1].error).toMatch(/Invalid `to`/);
    expect(data[2].id).toBeTruthy();
    expect(await logsOf(env, p.id)).toHaveLength(2);
    expect(await mailUsage(env, p.id)).toBe(2);
  });

  it('a failed provider call refunds every slot and passes the provider status and message through', async () => {
    fake.failNext({ status: 503, message: 'Service temporarily unavailable', path: /batch/ });
    const res = await batch([item(0), item(1)]);
    expect(res.statusCode).toBe(503);
    expect(res.json().message).toBe('Service temporarily unavailable');
    expect(await mailUsage(env, p.id)).toBe(0);
    expect(await logsOf(env, p.id)).toHaveLength(0);
  });

  it.each([
    ['not an array', { to: 'a@example.com', subject: 's', text: 't' }],
    ['empty', []],
    ['101 items', Array.from({ length: 101 }, (_, i) => item(i))],
    ['an item without subject', [{ to: 'a@example.com', text: 't' }]],
    ['an item with a bad address', [{ to: 'nope', subject: 's', text: 't' }]],
    ['an item without content', [{ to: 'a@example.com', subject: 's' }]],
  ])('400 invalid batch payload: %s', async (_n, body) => {
    const res = await batch(body);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/Invalid batch payload/);
    expect(await mailUsage(env, p.id)).toBe(0);
  });

  it('100 items is allowed; the publishable key is 403', async () => {
    expect((await batch(Array.from({ length: 100 }, (_, i) => item(i)))).statusCode).toBe(200);
    expect((await batch([item(0)], p.pk)).statusCode).toBe(403);
  });
});
