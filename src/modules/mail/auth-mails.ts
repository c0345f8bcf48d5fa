/**
 * Localized auth mails: verification, reset, magic link and email code. The locale is the
 * user's stored one (`locale` in the user's data), else the request's Accept-Language (in
 * order of preference), else the project's default (`settings.mailDefaultLocale`), else
 * English; for each candidate (`pt-BR`, then `pt`) the project's own template of that locale
 * wins over the built-in text (auth-mail-texts.ts: en, de, fr, es). Sent through the system
 * mailer (the project's mail path and queue). Knows no HTTP.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import type { ProjectRecord } from '../projects/cache.js';
import { listAuthTemplates, type AuthTemplateRow } from './auth-mail-queries.js';
import { builtinText, isBuiltinLocale, type AuthMailKind, type AuthMailText } from './auth-mail-texts.js';
import { render } from './render.js';

export type { AuthMailKind } from './auth-mail-texts.js';

const LOCALE = /^[a-z]{2,3}(-[A-Z][A-Za-z0-9]{1,7})?$/;

/** `de_de`, `DE-de` → `de-DE`; null when it is not a language tag we keep. */
export function normalizeLocale(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > 20) return null;
  const [lang, region, ...rest] = raw.trim().replace(/_/g, '-').split('-');
  if (!lang || rest.length) return null;
  const tag = region ? `${lang.toLowerCase()}-${region.length === 2 ? region.toUpperCase() : region[0]!.toUpperCase() + region.slice(1)}` : lang.toLowerCase();
  return LOCALE.test(tag) ? tag : null;
}

/** The languages of an Accept-Language header, most preferred first (q=0 and `*` dropped). */
export function acceptedLocales(header: string | null | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 512)
    .split(',')
    .slice(0, 20)
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: normalizeLocale(tag), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((x): x is { tag: string; q: number; i: number } => x.tag !== null && Number.isFinite(x.q) && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag);
}

/** What is known about the reader's language. */
export interface LocaleHints {
  /** The user's data (its `locale` field, when the app stores one). */
  userData?: Record<string, unknown> | null;
  /** The Accept-Language header of the request that caused the mail. */
  acceptLanguage?: string | null;
}

export function projectDefaultLocale(project: { settings: Record<string, unknown> }): string {
  return normalizeLocale(project.settings.mailDefaultLocale) ?? 'en';
}

/** The candidate locales in order, each followed by its language alone (`pt-BR`, `pt`). */
export function localeCandidates(project: { settings: Record<string, unknown> }, hints: LocaleHints): string[] {
  const userLocale = hints.userData && Object.hasOwn(hints.userData, 'locale') ? normalizeLocale(hints.userData.locale) : null;
  const ordered = [userLocale, ...acceptedLocales(hints.acceptLanguage), projectDefaultLocale(project), 'en'].filter((l): l is string => !!l);
  return [...new Set(ordered.flatMap((l) => [l, l.split('-')[0]!]))];
}

export interface ChosenText extends AuthMailText {
  locale: string;
  source: 'project' | 'builtin';
}

/** The first candidate with a project template or a built-in text. */
export function chooseText(kind: AuthMailKind, candidates: string[], templates: AuthTemplateRow[]): ChosenText {
  const own = new Map(templates.filter((t) => t.kind === kind).map((t) => [t.locale, t]));
  for (const locale of candidates) {
    const t = own.get(locale);
    if (t) return { subject: t.subject, html: t.html, text: t.text, locale, source: 'project' };
    if (isBuiltinLocale(locale)) return { ...builtinText(locale, kind), locale, source: 'builtin' };
  }
  return { ...builtinText('en', kind), locale: 'en', source: 'builtin' };
}

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
  locale: string;
  source: 'project' | 'builtin';
}

export function renderText(t: ChosenText, vars: Record<string, string>): RenderedMail {
  return {
    subject: render(t.subject, vars, false).replace(/[\r\n]+/g, ' ').trim(),
    html: t.html ? render(t.html, vars, true) : '',
    text: t.text ? render(t.text, vars, false) : '',
    locale: t.locale,
    source: t.source,
  };
}

const TAGS = new Map<AuthMailKind, string>([
  ['verification', 'auth.verify-email'],
  ['reset', 'auth.password-reset'],
  ['magic_link', 'auth.magic-link'],
  ['email_code', 'auth.email-code'],
]);

export interface AuthMail {
  kind: AuthMailKind;
  to: string;
  /** The kind's variables (AUTH_MAIL_VARIABLES) except projectName and email, which are filled in. */
  vars: Record<string, string>;
  hints: LocaleHints;
  /** The mail's tag in delivery logs when not the kind's own (the passwordless flow: one tag for both kinds). */
  tag?: string;
}

/**
 * Renders the mail in the reader's locale and queues it (in `tx` when given: a tenant
 * transaction of the project, so the mail commits with the caller's writes or not at all).
 */
export async function sendAuthMail(ctx: AppContext, project: ProjectRecord, mail: AuthMail, tx?: Tx): Promise<RenderedMail> {
  const load = (db: Tx) => listAuthTemplates(db, mail.kind);
  const templates = tx ? await load(tx) : await ctx.db.read({ projectId: project.id, keyKind: 'publishable' }, load);
  const chosen = chooseText(mail.kind, localeCandidates(project, mail.hints), templates);
  const rendered = renderText(chosen, { projectName: project.name, email: mail.to, ...mail.vars });
  await ctx.mailer.sendSystemMail({
    projectId: project.id,
    to: mail.to,
    subject: rendered.subject,
    ...(rendered.html ? { html: rendered.html } : {}),
    ...(rendered.text ? { text: rendered.text } : {}),
    tag: mail.tag ?? TAGS.get(mail.kind)!,
  }, tx);
  return rendered;
}
