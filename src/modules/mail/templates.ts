/**
 * Mail templates of a project (dashboard CRUD) and the global system templates (`welcome`,
 * `otp`, `password-reset`, `invite`: read-only, seeded by the migration). Custom templates
 * need a plan with customMailTemplates.
 */
import type { AppContext } from '../../context.js';
import { isObjectId } from '../../lib/ids.js';
import type { Plan } from '../plans/plans.js';
import { MailErrors } from './errors.js';
import { isUniqueViolation } from '../../db/errors.js';
import { listTemplates, templateById, type TemplateRow } from './queries.js';
import { deleteTemplateRow, findProjectTemplate, insertTemplate, updateTemplateRow } from './queries.js';

export interface TemplateInput {
  key?: string;
  name?: string;
  subject?: string;
  html?: string;
  text?: string;
}

export function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, 100);
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function summaryDto(t: TemplateRow) {
  return { id: t.id, key: t.key, name: t.name, subject: t.subject, updatedAt: iso(t.updated_at) };
}

export function templateDto(t: TemplateRow) {
  const scope = t.project_id ? ('project' as const) : ('global' as const);
  return { ...summaryDto(t), html: t.html, text: t.text, scope, isSystem: t.is_system };
}

/** The operator's tenant scope: one-statement calls autocommit through `read`. */
const operatorScope = (projectId: string) => ({ projectId, keyKind: 'operator' as const });

export async function listProjectTemplates(ctx: AppContext, projectId: string) {
  const rows = await ctx.db.read(operatorScope(projectId), (db) => listTemplates(db, projectId));
  return rows.map(summaryDto);
}

export async function listGlobalTemplates(ctx: AppContext, projectId: string) {
  const rows = await ctx.db.read(operatorScope(projectId), (db) => listTemplates(db, null));
  return rows.map(templateDto);
}

export async function getTemplate(ctx: AppContext, projectId: string, id: string) {
  if (!isObjectId(id)) throw MailErrors.mail_template_invalid_id();
  const row = await ctx.db.read(operatorScope(projectId), (db) => templateById(db, projectId, id));
  if (!row) throw MailErrors.mail_template_missing();
  return templateDto(row);
}

/** A key is slugged; one with no letters or digits left is refused (the column needs 1+). */
function templateKey(raw: string): string {
  const key = slug(raw);
  if (!key) throw MailErrors.mail_invalid_payload('The template key must contain letters or digits.');
  return key;
}

function requireCustomTemplates(plan: Plan): void {
  if (!plan.customMailTemplates) {
    throw MailErrors.mail_custom_templates_pro('Custom Mail Templates are a Pro feature. Please upgrade to customize your emails.');
  }
}

export async function createTemplate(ctx: AppContext, projectId: string, plan: Plan, input: TemplateInput) {
  requireCustomTemplates(plan);
  if (!input.html?.trim() && !input.text?.trim()) throw MailErrors.mail_template_content();
  const key = templateKey(input.key?.trim() || input.name!);
  try {
    const row = await ctx.db.read(operatorScope(projectId), (db) =>
      insertTemplate(db, { project_id: projectId, key, name: input.name!.trim(), subject: input.subject!, html: input.html ?? '', text: input.text ?? '' }),
    );
    return templateDto(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw MailErrors.mail_template_conflict();
    throw err;
  }
}

export async function updateTemplate(ctx: AppContext, projectId: string, plan: Plan, id: string, input: TemplateInput) {
  requireCustomTemplates(plan);
  if (!isObjectId(id)) throw MailErrors.mail_template_invalid_id();
  const fields = Object.entries(input).filter(([, v]) => v !== undefined);
  if (fields.length === 0) throw MailErrors.mail_template_empty_patch();
  const key = input.key !== undefined ? templateKey(input.key) : undefined;
  try {
    return await ctx.db.tenant(operatorScope(projectId), async (tx) => {
      const cur = await findProjectTemplate(tx, projectId, id);
      if (!cur) throw MailErrors.mail_template_missing();
      const next = { ...cur, ...Object.fromEntries(fields), key: key ?? cur.key };
      if (!next.html.trim() && !next.text.trim()) throw MailErrors.mail_template_content('Template must contain at least one of html or text.');
      const row = await updateTemplateRow(tx, id, { key: next.key, name: next.name, subject: next.subject, html: next.html, text: next.text, updated_at: ctx.clock.now() });
      return templateDto(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw MailErrors.mail_template_conflict();
    throw err;
  }
}

export async function deleteTemplate(ctx: AppContext, projectId: string, id: string): Promise<void> {
  if (!isObjectId(id)) throw MailErrors.mail_template_invalid_id();
  const res = await ctx.db.read(operatorScope(projectId), (db) =>
    deleteTemplateRow(db, projectId, id),
  );
  if (Number(res.numDeletedRows) === 0) throw MailErrors.mail_template_missing();
}
