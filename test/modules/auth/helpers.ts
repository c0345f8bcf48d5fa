/** Shared set-up of the end-user auth tests: a project with a `users` collection, captured mail. */
import type { SystemMail } from '../../../src/context.js';
import type { FieldDef } from '../../../src/db/types.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeCollection, makeProject, USERS_FIELDS, type TestProject } from '../../helpers/fixtures.js';

export const PASSWORD = 'correct horse 1';

export function captureMail(env: TestEnv): SystemMail[] {
  const sent: SystemMail[] = [];
  env.ctx.mailer = { sendSystemMail: async (m) => void sent.push(m) };
  return sent;
}

/** The last 6-digit code mailed to `to` with `tag`. */
export function lastCode(sent: SystemMail[], to: string, tag: string): string {
  const mail = [...sent].reverse().find((m) => m.to === to && m.tag === tag);
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  if (!code) throw new Error(`no ${tag} code mailed to ${to}`);
  return code;
}

export async function authProject(env: TestEnv, fields: FieldDef[] = USERS_FIELDS): Promise<TestProject> {
  const p = await makeProject(env.ctx);
  await makeCollection(env.ctx, p.id, 'users', fields);
  return p;
}

/** The usual environment of an auth test file: generous rate limits, captured mail, one project. */
export async function authTestEnv(fields?: FieldDef[]): Promise<{ env: TestEnv; mail: SystemMail[]; p: TestProject }> {
  const env = await createTestEnv({ RATE_LIMIT_SCALE: '100' });
  const mail = captureMail(env);
  return { env, mail, p: await authProject(env, fields) };
}

let seq = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}${Date.now().toString(36)}${seq++}@example.com`;

export async function signup(env: TestEnv, p: TestProject, body: Record<string, unknown> = {}, headerMode = true) {
  const res = await env.app.inject({
    method: 'POST',
    url: '/api/userAuth/signup',
    headers: { ...p.pk, ...(headerMode ? { 'x-refresh-token-mode': 'header' } : {}) },
    payload: { email: uniqueEmail(), password: PASSWORD, ...body },
  });
  return { res, body: res.json() };
}

export async function refresh(env: TestEnv, p: TestProject, token: string) {
  return env.app.inject({
    method: 'POST',
    url: '/api/userAuth/refresh-token',
    headers: { ...p.pk, 'x-refresh-token': token, 'x-refresh-token-mode': 'header' },
  });
}

export function cookieOf(res: { cookies: Array<{ name: string; value: string }> }, name = 'refreshToken') {
  return res.cookies.find((c) => c.name === name);
}
