/**
 * Aggregates over a collection (GET …/aggregate). Runs in the same role, scope and policies as
 * a list (private collections with the publishable key: the caller's documents only), so there
 * is no aggregate-specific permission code to get wrong. Knows no HTTP.
 */
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import type { CollectionDef } from '../collections/cache.js';
import { docScope, type Access } from './access.js';
import type { AggregateQuery } from './aggregate-query.js';
import { groupView, planAggregate, type AggregateGroup } from './aggregate-plan.js';
import { guardDb } from './pg-errors.js';
import { aggregateRows, setStatementTimeout } from './queries.js';
import { REGEX_TIMEOUT_MS, regexExhausted } from './read-service.js';
import { and, filterConditions, hasRegex, searchPlan } from './where.js';

/** A grouping scans every matching document: bounded like a regex list (publishable) or a deep page. */
const SECRET_TIMEOUT_MS = 10_000;
const PUBLISHABLE_TIMEOUT_MS = 2_000;

function timeoutFor(ctx: AppContext, access: Access, q: AggregateQuery): number {
  const ms = hasRegex(q.filters) ? REGEX_TIMEOUT_MS : SECRET_TIMEOUT_MS;
  if (access.scope.keyKind !== 'publishable') return ms;
  return Math.min(ms, PUBLISHABLE_TIMEOUT_MS, ctx.config.tenantDb.publishableStatementTimeoutMs);
}

export interface AggregateResult {
  groups: AggregateGroup[];
  /** More groups than `limit` matched; the answer has the first `limit` in the requested order. */
  truncated: boolean;
}

export async function aggregateDocuments(ctx: AppContext, col: CollectionDef, access: Access, q: AggregateQuery): Promise<AggregateResult> {
  const plan = planAggregate(col, q);
  const search = searchPlan(col, q.search);
  const where = and([...filterConditions(col, q.filters), ...(search ? [search.condition] : [])]);
  const select = [...plan.groups, ...plan.metrics].map((c) => sql`${c.expr} AS ${sql.ref(c.alias)}`);
  const rows = await guardDb(() =>
    ctx.db.tenant(access.scope, async (tx) => {
      await setStatementTimeout(tx, timeoutFor(ctx, access, q));
      const scope = docScope(col, access, q.includeDeleted);
      return aggregateRows(tx, scope, where, { inputs: plan.inputs, select, groupCount: plan.groups.length, order: plan.order, limit: q.limit });
    }).catch((err) => {
      throw regexExhausted(q.filters, err);
    }),
  );
  return { groups: rows.slice(0, q.limit).map((r) => groupView(plan, r)), truncated: rows.length > q.limit };
}
