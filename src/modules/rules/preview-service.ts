/**
 * "Test this rule as user X" (docs/rules.md, "Preview"): a candidate rule (or the saved one) is
 * compiled like a saved rule, put on the partition in a transaction that is rolled back, and the
 * action runs there as that end user (or an anonymous caller) with the publishable key, under
 * the real policies. No second interpreter: PostgreSQL answers. Knows no HTTP.
 */
import type { AppContext } from '../../context.js';
import type { RulesConfig } from '../../db/types.js';
import { sqlState } from '../../db/errors.js';
import { objectId } from '../../lib/ids.js';
import { AuthErrors } from '../auth/errors.js';
import { CollectionErrors } from '../collections/errors.js';
import { findCollection } from '../collections/queries.js';
import { DataErrors } from '../data/errors.js';
import { guardDb } from '../data/pg-errors.js';
import type { RuleAction } from './compile.js';
import { RuleErrors } from './errors.js';
import * as q from './queries.js';
import { isUsersCollection } from '../collections/index-queries.js';
import { ACTIONS, compileRules } from './service.js';

export const PREVIEW_IDS_MAX = 50;

export interface PreviewInput {
  action: RuleAction;
  /** The candidate rule for `action`; absent: the saved one; null or "": none (the mode's behaviour). */
  rule?: string | null;
  userId?: string | null;
  documentId?: string;
  data?: Record<string, unknown>;
}

export interface PreviewResult {
  action: RuleAction;
  userId: string | null;
  rule: string | null;
  /** The compiled expression of the rule for `action` (null: the mode's behaviour). */
  sql: string | null;
  allowed: boolean;
  /** Why not: the document is hidden by the read rule, or the rule refuses the write. */
  reason: 'hidden' | 'denied' | null;
  /** list: how many live documents the user sees, and the newest of them (at most PREVIEW_IDS_MAX). */
  count?: number;
  ids?: string[];
}

const isDenied = (err: unknown) => sqlState(err) === '42501' && /row-level security/.test(String((err as Error).message));

export async function previewRule(ctx: AppContext, projectId: string, name: string, input: PreviewInput): Promise<PreviewResult> {
  const col = await findCollection(ctx.db.admin, projectId, name);
  if (!col) throw CollectionErrors.collection_not_found();
  // Its policies are on app_users, shared by every project: a candidate rule there would hold
  // that table's lock for the whole preview, stalling every project's sign-ins.
  if (isUsersCollection(col.name)) throw RuleErrors.rule_preview_invalid('The preview is not available for the users collection: save the rule, then try it as the user.');
  const userId = input.userId ?? null;
  if (userId && !(await q.projectUserExists(ctx.db.admin, projectId, userId))) throw AuthErrors.app_user_not_found();
  const { action } = input;
  const needsDoc = action === 'view' || action === 'update' || action === 'delete';
  if (needsDoc && !input.documentId) throw RuleErrors.rule_preview_invalid(`A ${action} preview needs documentId.`);
  if ((action === 'create' || action === 'update') && !input.data) throw RuleErrors.rule_preview_invalid(`A ${action} preview needs data.`);
  if (needsDoc && !(await q.documentExists(ctx.db.admin, col.id, input.documentId!))) throw DataErrors.document_not_found();

  const rules: RulesConfig = { list: null, view: null, create: null, update: null, delete: null, ...col.rules };
  if (input.rule !== undefined) rules[action] = input.rule === null || input.rule.trim() === '' ? null : input.rule;
  const any = ACTIONS.some((a) => rules[a] !== null);
  const compiled = any ? await compileRules(ctx.db.admin, projectId, col, rules) : null;
  const base = { action, userId, rule: rules[action], sql: compiled?.[action] ?? null };

  const extra = compiled?.list && compiled.view && compiled.list !== compiled.view ? compiled.list : null;
  const scope = { projectId, userId };
  // What PostgreSQL refuses of the data tried (a duplicate unique value, a value it cannot
  // read) is answered as the write path answers it (4xx), not as an internal error.
  return guardDb(() => q.underCandidateRules(ctx.db.admin, col.id, { rules: any ? rules : null, compiled }, scope, async (tx) => {
    if (action === 'list') {
      const seen = await q.previewList(tx, projectId, col.id, extra, PREVIEW_IDS_MAX);
      return { ...base, allowed: seen.count > 0, reason: seen.count > 0 ? null : 'hidden', ...seen };
    }
    if (needsDoc && !(await q.previewVisible(tx, col.id, input.documentId!))) return { ...base, allowed: false, reason: 'hidden' };
    if (action === 'view') return { ...base, allowed: true, reason: null };
    const data = JSON.stringify(input.data ?? {});
    const id = objectId();
    try {
      const n =
        action === 'create'
          ? await q.previewWrite(tx, { op: 'create', projectId, collectionId: col.id, id, ownerId: ownerOf(col.rls.ownerField, id, input.data!), data })
          : await q.previewWrite(tx, { op: action, projectId, collectionId: col.id, id: input.documentId!, data });
      return { ...base, allowed: n > 0, reason: n > 0 ? null : 'denied' };
    } catch (err) {
      if (isDenied(err)) return { ...base, allowed: false, reason: 'denied' };
      throw err;
    }
  }));
}

/** documents.owner_id of a new document, as the write path stores it (data/access.ts ownerOf). */
function ownerOf(field: string, id: string, data: Record<string, unknown>): string | null {
  if (field === '_id') return id;
  const v = Object.hasOwn(data, field) ? data[field] : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}
