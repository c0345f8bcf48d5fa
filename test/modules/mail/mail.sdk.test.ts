/**
 * The published @urbackend/sdk (0.4.8) `mail.send` works unchanged against a listening app.
 * (Its type entry re-exports './dist/index' without an extension, which NodeNext cannot
 * follow for named exports, so the error classes are checked by their runtime `name`.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import urBackend from '@urbackend/sdk';
import type { TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import type { FakeResend } from '../../fakes/resend.js';
import { startMailTest, stopMailTest } from './helpers.js';

let fake: FakeResend;
let env: TestEnv;
let p: TestProject;
let baseUrl: string;

beforeAll(async () => {
  ({ fake, env } = await startMailTest({ MAIL_MONTHLY_LIMIT: '2' }));
  p = await makeProject(env.ctx);
  baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => stopMailTest(env, fake));

describe('@urbackend/sdk mail.send', () => {
  it('returns {id, provider, monthlyUsage, monthlyLimit} and the mail goes out', async () => {
    const client = urBackend({ apiKey: p.secretKey, baseUrl });
    const res = await client.mail.send({ to: 'sdk@example.com', subject: 'From the SDK', html: '<p>ok</p>' });
    expect(res).toMatchObject({ provider: 'default', monthlyUsage: 1, monthlyLimit: 2 });
    expect(typeof res.id).toBe('string');
    await drainJobs(env);
    expect([...fake.emails.values()].map((e) => e.subject)).toEqual(['From the SDK']);
  });

  it('maps our errors onto its classes: 400 ValidationError, 403 AuthError, 429 RateLimitError with retryAfter', async () => {
    type SdkError = { name: string; message: string; retryAfter?: number };
    const client = urBackend({ apiKey: p.secretKey, baseUrl });
    await expect(client.mail.send({ to: 'bad', subject: 's', html: 'h' })).rejects.toMatchObject({ name: 'ValidationError' });
    const pk = urBackend({ apiKey: p.publishableKey, baseUrl });
    await expect(pk.mail.send({ to: 'a@example.com', subject: 's', html: 'h' })).rejects.toMatchObject({ name: 'AuthError' });
    await client.mail.send({ to: ['a@example.com', 'b@example.com'], subject: 's', text: 't' });
    const err = (await client.mail.send({ to: 'a@example.com', subject: 's', html: 'h' }).catch((e: unknown) => e)) as SdkError;
    expect(err).toMatchObject({ name: 'RateLimitError', message: 'Monthly mail limit exceeded.' });
    expect(err.retryAfter).toBeGreaterThan(0);
  });
});
