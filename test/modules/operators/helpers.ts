/** Helpers for the dashboard tests: a capturing mailer, cookie jars, distinct client IPs. */
import type { SystemMail } from '../../../src/context.js';
import type { TestEnv } from '../../helpers/context.js';

let ipSeq = 1;
/** A fresh client address, so the per-IP login/register limit never couples two tests. */
export const freshIp = () => `10.${(ipSeq >> 16) & 255}.${(ipSeq >> 8) & 255}.${ipSeq++ & 255}`;

export function captureMail(env: TestEnv): SystemMail[] {
  const sent: SystemMail[] = [];
  env.ctx.mailer = { sendSystemMail: async (m) => void sent.push(m) };
  return sent;
}

export function codeIn(mail: SystemMail | undefined): string {
  const m = /\b(\d{6})\b/.exec(mail?.text ?? '');
  if (!m) throw new Error('no code in mail');
  return m[1]!;
}

interface InjectCookie {
  name: string;
  value: string;
}

/** name → value of the cookies a response set. */
export function cookiesOf(res: { cookies: InjectCookie[] }): Record<string, string> {
  return Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));
}

export async function register(env: TestEnv, email: string, password = 'long enough pw') {
  return env.app.inject({ method: 'POST', url: '/api/auth/register', remoteAddress: freshIp(), payload: { email, password, name: 'Ada' } });
}

export async function login(env: TestEnv, email: string, password = 'long enough pw', headers: Record<string, string> = {}) {
  return env.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: freshIp(), headers, payload: { email, password } });
}
