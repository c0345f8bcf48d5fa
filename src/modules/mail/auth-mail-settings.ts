/**
 * The dashboard's side of the localized auth mails: the project's templates per kind and
 * locale, its default locale, and previews rendered with sample values. Knows no HTTP.
 */
import type { AppContext } from '../../context.js';
import { listAuthTemplates, deleteAuthTemplate, saveDefaultLocale, upsertAuthTemplate, type AuthTemplateRow } from './auth-mail-queries.js';
import { AUTH_MAIL_KINDS, AUTH_MAIL_VARIABLES, BUILTIN_LOCALES, type AuthMailKind } from './auth-mail-texts.js';
import { chooseText, normalizeLocale, projectDefaultLocale, renderText, type RenderedMail } from './auth-mails.js';
import { MailErrors } from './errors.js';

const operatorScope = (projectId: string) => ({ projectId, keyKind: 'operator' as const });

const view = (t: AuthTemplateRow) => ({ kind: t.kind, locale: t.locale, subject: t.subject, html: t.html, text: t.text, updatedAt: new Date(t.updated_at).toISOString() });

export function checkLocale(raw: string): string {
  const locale = normalizeLocale(raw);
  if (!locale) throw MailErrors.auth_mail_locale_invalid();
  return locale;
}

export async function listAuthMailSettings(ctx: AppContext, project: { id: string; settings: Record<string, unknown> }) {
  const rows = await ctx.db.read(operatorScope(project.id), (db) => listAuthTemplates(db));
  return {
    defaultLocale: projectDefaultLocale(project),
    builtinLocales: [...BUILTIN_LOCALES],
    kinds: AUTH_MAIL_KINDS.map((kind) => ({ kind, variables: ['projectName', 'email', ...Object.keys(AUTH_MAIL_VARIABLES.get(kind)!).filter((v) => v !== 'projectName' && v !== 'email')] })),
    templates: rows.map(view),
  };
}

export interface AuthTemplateInput {
  subject: string;
  html?: string;
  text?: string;
}

export async function setAuthTemplate(ctx: AppContext, projectId: string, kind: AuthMailKind, rawLocale: string, input: AuthTemplateInput) {
  const locale = checkLocale(rawLocale);
  const subject = input.subject.trim();
  if (!subject || (!input.html?.trim() && !input.text?.trim())) throw MailErrors.auth_mail_template_content();
  const row = await ctx.db.read(operatorScope(projectId), (db) =>
    upsertAuthTemplate(db, projectId, { kind, locale, subject, html: input.html ?? '', text: input.text ?? '' }, ctx.clock.now()),
  );
  return view(row);
}

export async function removeAuthTemplate(ctx: AppContext, projectId: string, kind: AuthMailKind, rawLocale: string): Promise<void> {
  const locale = checkLocale(rawLocale);
  const gone = await ctx.db.read(operatorScope(projectId), (db) => deleteAuthTemplate(db, kind, locale));
  if (!gone) throw MailErrors.auth_mail_template_missing();
}

export async function setDefaultLocale(ctx: AppContext, projectId: string, rawLocale: string): Promise<string> {
  const locale = checkLocale(rawLocale);
  await saveDefaultLocale(ctx.db.admin, projectId, locale, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  return locale;
}

export interface PreviewInput {
  kind: AuthMailKind;
  locale: string;
  /** A draft to render instead of the stored text. */
  subject?: string;
  html?: string;
  text?: string;
}

/**
 * The mail a reader of `locale` would get (the project's template of that locale or language,
 * else the built-in text, else the project's default), or the given draft, with sample values.
 */
export async function previewAuthMail(ctx: AppContext, project: { id: string; name: string; settings: Record<string, unknown> }, input: PreviewInput): Promise<RenderedMail> {
  const locale = checkLocale(input.locale);
  const vars = { ...AUTH_MAIL_VARIABLES.get(input.kind)!, projectName: project.name };
  if (input.subject !== undefined || input.html !== undefined || input.text !== undefined) {
    return renderText({ subject: input.subject ?? '', html: input.html ?? '', text: input.text ?? '', locale, source: 'project' }, vars);
  }
  const rows = await ctx.db.read(operatorScope(project.id), (db) => listAuthTemplates(db, input.kind));
  const candidates = [...new Set([locale, locale.split('-')[0]!, projectDefaultLocale(project), 'en'])];
  return renderText(chooseText(input.kind, candidates, rows), vars);
}
