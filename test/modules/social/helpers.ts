/** Social sign-in test set-up: fake providers, a project with both providers enabled, a flow runner. */
import { expect } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import type { App } from '../../../src/server.js';
import { startFakeGithub, type FakeGithub } from '../../fakes/github.js';
import { startFakeGoogle, type FakeGoogle } from '../../fakes/google.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, captureMail } from '../auth/helpers.js';

export interface SocialEnv {
  env: TestEnv;
  /** System mails (verification and reset codes) sent so far. */
  mail: SystemMail[];
  github: FakeGithub;
  google: FakeGoogle;
  providerEnv: Record<string, string>;
  close(): Promise<void>;
}

export async function createSocialEnv(): Promise<SocialEnv> {
  const github = await startFakeGithub();
  const google = await startFakeGoogle();
  const providerEnv = { GITHUB_BASE_URL: github.url, GITHUB_API_BASE_URL: github.url, ...google.env, RATE_LIMIT_SCALE: '100' };
  const env = await createTestEnv(providerEnv);
  const mail = captureMail(env);
  return {
    env, mail, github, google, providerEnv,
    async close() {
      await env.close();
      await github.close();
      await google.close();
    },
  };
}

/** A project with a users collection and both providers enabled through the dashboard route. */
export async function socialProject(s: SocialEnv): Promise<TestProject> {
  const p = await authProject(s.env);
  const res = await s.env.app.inject({
    method: 'PATCH',
    url: `/api/projects/${p.id}/auth/providers`,
    headers: p.owner.auth,
    payload: {
      github: { enabled: true, clientId: s.github.clientId, clientSecret: s.github.clientSecret },
      google: { enabled: true, clientId: s.google.clientId, clientSecret: s.google.clientSecret },
    },
  });
  expect(res.statusCode).toBe(200);
  return p;
}

export interface FlowResult {
  callbackPath: string;
  status: number;
  redirect: URL | null;
  body: unknown;
  cookies: Array<{ name: string; value: string }>;
}

/** The cookies a response set, as a browser would send them back (name → value). */
export const jarOf = (res: { cookies: Array<{ name: string; value: string }> }) =>
  Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));

/**
 * Browser steps: start (app A) → provider consents → callback (app B, default A), the browser
 * carrying the cookies /start set (`cookies` replaces them: another browser's jar).
 */
export async function runFlow(
  startApp: App, provider: 'github' | 'google', p: TestProject, callbackApp: App = startApp, keyParam = 'key', cookies?: Record<string, string>,
): Promise<FlowResult> {
  const start = await startApp.inject({ method: 'GET', url: `/api/userAuth/social/${provider}/start?${keyParam}=${p.publishableKey}` });
  expect(start.statusCode).toBe(302);
  const consent = await fetch(start.headers.location as string, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  const callbackPath = back.pathname + back.search;
  const res = await callbackApp.inject({ method: 'GET', url: callbackPath, cookies: cookies ?? jarOf(start) });
  return {
    callbackPath,
    status: res.statusCode,
    redirect: res.headers.location ? new URL(res.headers.location as string) : null,
    body: res.headers['content-type']?.toString().includes('json') ? res.json() : res.body,
    cookies: res.cookies,
  };
}

export function fragmentToken(url: URL): string {
  return new URLSearchParams(url.hash.slice(1)).get('token')!;
}
