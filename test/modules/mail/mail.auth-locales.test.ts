/**
 * Localized auth mails: the locale comes from the user's stored locale, else the request's
 * Accept-Language, else the project's default; a project's own template of a locale replaces
 * the built-in text (English, German, French, Spanish). Dashboard routes set, delete and
 * preview templates. Threats: a header break in a template's subject, another operator reading
 * or changing the project's templates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemMail } from '../../../src/context.js';
import type { TestEnv } from '../../helpers/context.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { authProject, authTestEnv, lastCode, uniqueEmail } from '../auth/helpers.js';
import { acceptedLocales, normalizeLocale } from '../../../src/modules/mail/auth-mails.js';

let env: TestEnv;
let mail: SystemMail[];
let p: TestProject;

beforeAll(async () => {
  ({ env, mail, p } = await authTestEnv());
});
afterAll(() => env.close());

const lastTo = (to: string, tag: string) => [...mail].reverse().find((m) => m.to === to && m.tag === tag)!;

async function signupIn(project: TestProject, acceptLanguage?: string) {
  const email = uniqueEmail('loc');
  const res = await env.app.inject({
    method: 'POST',
    url: '/api/userAuth/signup',
    headers: { ...project.pk, 'x-refresh-token-mode': 'header', ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}) },
    payload: { email, password: 'correct horse 1' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return email;
}

const api = (project: TestProject, method: 'GET' | 'PUT' | 'DELETE' | 'POST', path: string, payload?: unknown) =>
  env.app.inject({ method, url: `/api/projects/${project.id}/mail/auth-templates${path}`, headers: project.owner.auth, ...(payload ? { payload } : {}) });

describe('locale choice', () => {
  it("the verification mail follows the request's Accept-Language (German)", async () => {
    const email = await signupIn(p, 'de-DE,de;q=0.9,en;q=0.5');
    const m = lastTo(email, 'auth.verify-email');
    expect(m.subject).toMatch(/^Bestätige deine E-Mail-Adresse für /);
    expect(m.text).toMatch(/Dein Code zur Bestätigung deiner E-Mail-Adresse lautet \d{6}/);
    expect(m.html).toContain('<strong');
    expect(lastCode(mail, email, 'auth.verify-email')).toMatch(/^\d{6}$/);
  });

  it('without Accept-Language the project default applies, else English', async () => {
    const en = await signupIn(p);
    expect(lastTo(en, 'auth.verify-email').subject).toMatch(/^Verify your email for /);
    const q = await authProject(env);
    expect((await api(q, 'PUT', '/default-locale', { locale: 'es' })).statusCode).toBe(200);
    const es = await signupIn(q, 'it-IT,it;q=0.9');
    expect(lastTo(es, 'auth.verify-email').subject).toMatch(/^Verifica tu correo para /);
  });

  it("the user's stored locale wins over the request's Accept-Language (reset in French)", async () => {
    const email = await signupIn(p, 'de');
    await env.ctx.db.admin.updateTable('app_users').set({ data: { locale: 'fr-CA' } as never }).where('email', '=', email).execute();
    const res = await env.app.inject({ method: 'POST', url: '/api/userAuth/request-password-reset', headers: { ...p.pk, 'accept-language': 'de' }, payload: { email } });
    expect(res.statusCode, res.body).toBe(200);
    const m = lastTo(email, 'auth.password-reset');
    expect(m.subject).toMatch(/^Réinitialisez votre mot de passe /);
    expect(m.text).toMatch(/\d{6}/);
  });

  it('Accept-Language is read by preference (q values), and a region falls back to its language', () => {
    expect(acceptedLocales('en;q=0.2, fr-ca;q=0.8, de;q=0, es')).toEqual(['es', 'fr-CA', 'en']);
    expect(acceptedLocales('*;q=0.5, <script>, pt_br')).toEqual(['pt-BR']);
    expect(normalizeLocale('x'.repeat(40))).toBeNull();
  });
});

describe("the project's own templates", () => {
  it('a template for a locale replaces the built-in text; a regional reader gets the language template', async () => {
    const q = await authProject(env);
    const put = await api(q, 'PUT', '/verification/pt', { subject: 'Confirme seu e-mail em {{ projectName }}', text: 'Código: {{ code }} ({{ expiresInMinutes }} min)', html: '<p>Código: <b>{{ code }}</b> para {{ email }}</p>' });
    expect(put.statusCode, put.body).toBe(200);
    const email = await signupIn(q, 'pt-BR,pt;q=0.9');
    const m = lastTo(email, 'auth.verify-email');
    expect(m.subject).toMatch(/^Confirme seu e-mail em /);
    expect(m.text).toMatch(/^Código: \d{6} \(10 min\)$/);
    expect(m.html).toContain(`para ${email}`);
    // Other kinds without a pt template: the next candidate (the project default, English).
    const list = await api(q, 'GET', '');
    expect(list.json().data.templates).toMatchObject([{ kind: 'verification', locale: 'pt' }]);
    expect(list.json().data.kinds.find((k: { kind: string }) => k.kind === 'magic_link').variables).toEqual(['projectName', 'email', 'linkUrl', 'code', 'expiresInMinutes']);
    expect((await api(q, 'DELETE', '/verification/pt')).statusCode).toBe(200);
    expect((await api(q, 'DELETE', '/verification/pt')).statusCode).toBe(404);
    const after = await signupIn(q, 'pt-BR');
    expect(lastTo(after, 'auth.verify-email').subject).toMatch(/^Verify your email for /);
  });

  it('a header break in a template subject never reaches the mail (header injection)', async () => {
    const q = await authProject(env);
    await api(q, 'PUT', '/verification/en', { subject: 'Hi {{ email }}\r\nBcc: evil@example.com', html: '<p>{{ email }} / {{ code }}</p>' });
    const res = await env.app.inject({ method: 'POST', url: `/api/projects/${q.id}/mail/auth-templates/preview`, headers: q.owner.auth, payload: { kind: 'verification', locale: 'en', subject: '{{ email }}\nX', html: '<a href="{{ linkUrl }}">{{ email }}</a>' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.subject).not.toMatch(/[\r\n]/);
    const email = await signupIn(q);
    const m = lastTo(email, 'auth.verify-email');
    expect(m.subject).not.toMatch(/[\r\n]/);
    const draft = await api(q, 'POST', '/preview', { kind: 'magic_link', locale: 'en', html: '<a href="{{ linkUrl }}">go</a>' });
    expect(draft.json().data.html).toBe('<a href="https://app.example.com/auth/magic?token=sample">go</a>');
  });

  it('refuses a malformed locale and empty content; another operator cannot read or write', async () => {
    expect((await api(p, 'PUT', '/verification/not_a_locale!', { subject: 'x', text: 'y' })).statusCode).toBe(400);
    expect((await api(p, 'PUT', '/verification/de', { subject: 'x' })).json().code).toBe('auth_mail_template_content');
    expect((await api(p, 'PUT', '/nope/de', { subject: 'x', text: 'y' })).statusCode).toBe(400);
    const other = await authProject(env);
    const foreign = await env.app.inject({ method: 'PUT', url: `/api/projects/${p.id}/mail/auth-templates/verification/de`, headers: other.owner.auth, payload: { subject: 'x', text: 'y' } });
    expect(foreign.statusCode).toBe(404);
    const read = await env.app.inject({ method: 'GET', url: `/api/projects/${p.id}/mail/auth-templates`, headers: other.owner.auth });
    expect(read.statusCode).toBe(404);
  });
});

describe('previews', () => {
  it('each built-in locale renders each kind with sample values', async () => {
    for (const locale of ['en', 'de', 'fr', 'es']) {
      for (const kind of ['verification', 'reset', 'magic_link', 'email_code']) {
        const res = await api(p, 'POST', '/preview', { kind, locale });
        expect(res.statusCode).toBe(200);
        const d = res.json().data;
        expect(d).toMatchObject({ locale, source: 'builtin' });
        expect(d.subject).not.toContain('{{');
        expect(d.text).not.toContain('{{');
        expect(kind === 'magic_link' ? d.html : d.text).toContain(kind === 'magic_link' ? 'https://app.example.com/auth/magic?token=sample' : '123456');
      }
    }
    const fallback = await api(p, 'POST', '/preview', { kind: 'reset', locale: 'ja' });
    expect(fallback.json().data.locale).toBe('en');
  });
});
