/**
 * What a send request means: its recipients and its final subject/html/text, in direct mode
 * or rendered from a template (docs/wire-compatibility.md §7.2 mode rules and messages).
 */
import { isEmail } from '../../lib/email.js';
import type { AppContext } from '../../context.js';
import { isObjectId } from '../../lib/ids.js';
import type { Plan } from '../plans/plans.js';
import { MailErrors } from './errors.js';
import { templateById, templateByName, type TemplateRow } from './queries.js';
import { render, type Variables } from './render.js';

export const MAX_RECIPIENTS = 50;

export interface SendInput {
  to: string | string[];
  subject?: string;
  html?: string;
  text?: string;
  templateId?: string;
  templateName?: string;
  variables?: Variables;
}

export interface TemplateUsed {
  id: string;
  scope: 'project' | 'global';
  key: string;
  name: string;
}

export interface MailContent {
  to: string[];
  subject: string;
  html?: string;
  text?: string;
  templateUsed?: TemplateUsed;
}

/** One address or up to 50; each must look like an email address. */
export function recipients(to: string | string[]): string[] {
  const list = (Array.isArray(to) ? to : [to]).map((s) => (typeof s === 'string' ? s.trim() : ''));
  if (list.length === 0) throw MailErrors.mail_invalid_recipient('At least one recipient is required.');
  if (list.length > MAX_RECIPIENTS) throw MailErrors.mail_invalid_recipient(`At most ${MAX_RECIPIENTS} recipients per message.`);
  if (!list.every((s) => s.length <= 254 && isEmail(s))) throw MailErrors.mail_invalid_recipient();
  return list;
}

const blank = (s: string | undefined) => (s === undefined || s.trim() === '' ? undefined : s);

/** Final checks shared by both modes (and by batch items). */
export function checkContent(subject: string | undefined, html: string | undefined, text: string | undefined): void {
  if (!blank(subject)) throw MailErrors.mail_subject_required();
  if (subject!.length > 200) throw MailErrors.mail_subject_required('Subject is too long');
  if (!blank(html) && !blank(text)) throw MailErrors.mail_content_required();
}

async function findTemplate(ctx: AppContext, projectId: string, input: SendInput): Promise<TemplateRow> {
  if (input.templateId !== undefined && !isObjectId(input.templateId)) throw MailErrors.mail_template_invalid_id();
  const tpl = await ctx.db.read({ projectId, keyKind: 'secret' }, (db) =>
    input.templateId ? templateById(db, projectId, input.templateId) : templateByName(db, projectId, input.templateName!),
  );
  if (!tpl) throw MailErrors.mail_template_not_found();
  return tpl;
}

async function fromTemplate(ctx: AppContext, project: { id: string; plan: Plan }, input: SendInput, to: string[]): Promise<MailContent> {
  const tpl = await findTemplate(ctx, project.id, input);
  if (tpl.project_id && !project.plan.customMailTemplates) throw MailErrors.mail_custom_templates_pro();
  const vars = input.variables ?? {};
  const html = blank(input.html) ?? blank(tpl.html);
  const text = blank(input.text) ?? blank(tpl.text);
  const content: MailContent = {
    to,
    subject: render(blank(input.subject) ?? tpl.subject, vars, false),
    html: html === undefined ? undefined : render(html, vars, true),
    text: text === undefined ? undefined : render(text, vars, false),
    templateUsed: { id: tpl.id, scope: tpl.project_id ? 'project' : 'global', key: tpl.key, name: tpl.name },
  };
  checkContent(content.subject, content.html, content.text);
  return content;
}

export async function resolveContent(ctx: AppContext, project: { id: string; plan: Plan }, input: SendInput): Promise<MailContent> {
  const to = recipients(input.to);
  const byId = blank(input.templateId);
  const byName = blank(input.templateName);
  if (byId && byName) throw MailErrors.mail_template_both();
  if (byId || byName) return fromTemplate(ctx, project, { ...input, templateId: byId, templateName: byName }, to);
  if (!blank(input.subject) && !blank(input.html) && !blank(input.text)) throw MailErrors.mail_mode_ambiguous();
  checkContent(input.subject, input.html, input.text);
  return { to, subject: input.subject!, html: blank(input.html), text: blank(input.text) };
}
