/** SQL of the localized auth mails: a project's own templates and its default locale. */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';

export interface AuthTemplateRow {
  kind: string;
  locale: string;
  subject: string;
  html: string;
  text: string;
  updated_at: Date;
}

const COLUMNS = ['kind', 'locale', 'subject', 'html', 'text', 'updated_at'] as const;

/** The project's templates (tenant scope), of one kind or all. */
export async function listAuthTemplates(db: Tx, kind?: string): Promise<AuthTemplateRow[]> {
  const rows = await db
    .selectFrom('auth_mail_templates')
    .select(COLUMNS)
    .$if(kind !== undefined, (qb) => qb.where('kind', '=', kind!))
    .orderBy('kind')
    .orderBy('locale')
    .execute();
  return rows as AuthTemplateRow[];
}

export async function upsertAuthTemplate(db: Tx, projectId: string, t: Omit<AuthTemplateRow, 'updated_at'>, now: Date): Promise<AuthTemplateRow> {
  const row = await db
    .insertInto('auth_mail_templates')
    .values({ project_id: projectId, ...t, updated_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'kind', 'locale']).doUpdateSet({ subject: t.subject, html: t.html, text: t.text, updated_at: now }))
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return row as AuthTemplateRow;
}

export async function deleteAuthTemplate(db: Tx, kind: string, locale: string): Promise<boolean> {
  const res = await db.deleteFrom('auth_mail_templates').where('kind', '=', kind).where('locale', '=', locale).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** `settings.mailDefaultLocale` (owner connection). */
export async function saveDefaultLocale(admin: Kysely<Database>, projectId: string, locale: string, now: Date): Promise<void> {
  await admin
    .updateTable('projects')
    .set({ settings: sql`jsonb_set(settings, '{mailDefaultLocale}', to_jsonb(${locale}::text))` as never, updated_at: now })
    .where('id', '=', projectId)
    .execute();
}
