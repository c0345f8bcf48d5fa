/**
 * Deploying a project's functions (docs/functions.md): create, new versions, rollback, delete,
 * list; and the project's secrets. Knows no HTTP. Every change is announced on the bus so each
 * node drops its copy (registry.ts) before the change is confirmed to the operator.
 */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { objectId } from '../../lib/ids.js';
import { announceChange } from '../collections/cache.js';
import { syncChangeTriggers } from '../collections/change-trigger-queries.js';
import { CollectionErrors } from '../collections/errors.js';
import { compileFunction, MAX_SOURCE_BYTES } from './compile.js';
import { FunctionErrors } from './errors.js';
import { forgetSchedule } from './job-queries.js';
import * as q from './queries.js';
import type { FunctionKind } from './tables.js';
import { normaliseTrigger } from './triggers.js';
import { functionView, invocationView, versionView } from './view.js';

export const MAX_FUNCTIONS = 100;
export const MAX_SECRETS = 100;
export const MAX_SECRET_BYTES = 48 * 1024;

export interface DeployInput {
  name: string;
  kind: FunctionKind;
  trigger?: unknown;
  source: string;
  language?: 'js' | 'ts';
  enabled?: boolean;
}

export interface ChangeInput {
  source?: string;
  language?: 'js' | 'ts';
  trigger?: unknown;
  enabled?: boolean;
}

function checkSource(source: string): void {
  if (Buffer.byteLength(source) > MAX_SOURCE_BYTES) throw FunctionErrors.function_compile_failed(`The source is larger than ${MAX_SOURCE_BYTES} bytes.`);
}

/** Collections a hook names must exist (a typo would otherwise never run). */
async function checkTarget(ctx: AppContext, projectId: string, trigger: Record<string, unknown>): Promise<void> {
  if (typeof trigger.collection !== 'string') return;
  if (trigger.collection === 'users') throw FunctionErrors.function_trigger_invalid('Hooks on users are auth functions (kind "auth" or "after" with trigger.auth).');
  if (!(await ctx.collections.get(projectId, trigger.collection))) throw CollectionErrors.collection_not_found(`No collection '${trigger.collection}' in this project.`);
}

/** Auth hooks are one per event: two before-sign-up hooks would leave their order to chance. */
async function checkAuthHookFree(ctx: AppContext, projectId: string, kind: FunctionKind, trigger: Record<string, unknown>, except?: string): Promise<void> {
  if (kind !== 'auth') return;
  const { all } = await ctx.functions.registry.get(projectId);
  const other = all.find((f) => f.kind === 'auth' && f.trigger.event === trigger.event && f.name !== except);
  if (other) throw FunctionErrors.function_trigger_invalid(`The function '${other.name}' already handles ${String(trigger.event)}.`);
}

async function viewOf(ctx: AppContext, projectId: string, name: string) {
  const row = (await q.listFunctions(ctx.db.admin, projectId)).find((f) => f.name === name);
  if (!row) throw FunctionErrors.function_not_found();
  return functionView(row);
}

export async function deployFunction(ctx: AppContext, projectId: string, input: DeployInput) {
  checkSource(input.source);
  const trigger = normaliseTrigger(input.kind, input.trigger);
  await checkTarget(ctx, projectId, trigger);
  await checkAuthHookFree(ctx, projectId, input.kind, trigger);
  const language = input.language ?? 'js';
  const compiled = await compileFunction(input.source, language);
  await ctx.db.admin.transaction().execute(async (tx) => {
    if ((await q.countFunctions(tx, projectId)) >= MAX_FUNCTIONS) throw FunctionErrors.functions_limit(`At most ${MAX_FUNCTIONS} functions per project.`);
    if (await q.findFunction(tx, projectId, input.name)) throw FunctionErrors.function_name_taken();
    const row = await q.insertFunction(tx, { id: objectId(), projectId, name: input.name, kind: input.kind, trigger, enabled: input.enabled ?? true });
    await q.insertVersion(tx, { functionId: row.id, projectId, version: 1, language, source: input.source, compiled: compiled.code, hash: compiled.hash });
    // an after-hook's collection streams its changes (docs/functions.md "After-hooks")
    if (input.kind === 'after') await syncChangeTriggers(tx, projectId);
  }).catch(uniqueNameTaken);
  await announceChange(ctx, projectId);
  return viewOf(ctx, projectId, input.name);
}

/** A second deploy of the same name at the same moment: the unique index decides, the loser gets 409. */
function uniqueNameTaken(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw FunctionErrors.function_name_taken();
  throw err;
}

/** A new version when the source changes; the trigger and `enabled` change in place. */
export async function changeFunction(ctx: AppContext, projectId: string, name: string, input: ChangeInput) {
  const existing = await q.findFunction(ctx.db.admin, projectId, name);
  if (!existing) throw FunctionErrors.function_not_found();
  const trigger = input.trigger !== undefined ? normaliseTrigger(existing.kind, input.trigger) : undefined;
  if (trigger) {
    await checkTarget(ctx, projectId, trigger);
    await checkAuthHookFree(ctx, projectId, existing.kind, trigger, name);
  }
  let compiled: Awaited<ReturnType<typeof compileFunction>> | undefined;
  let language: 'js' | 'ts' | undefined;
  if (input.source !== undefined) {
    checkSource(input.source);
    language = input.language ?? (await q.findVersion(ctx.db.admin, existing.id, existing.active_version))?.language ?? 'js';
    compiled = await compileFunction(input.source, language);
  }
  await ctx.db.admin.transaction().execute(async (tx) => {
    const row = await q.lockFunction(tx, projectId, name);
    if (!row) throw FunctionErrors.function_not_found();
    let activeVersion: number | undefined;
    if (compiled && language && input.source !== undefined) {
      activeVersion = (await q.latestVersion(tx, row.id)) + 1;
      await q.insertVersion(tx, { functionId: row.id, projectId, version: activeVersion, language, source: input.source, compiled: compiled.code, hash: compiled.hash });
    }
    await q.updateFunction(tx, row.id, { trigger, enabled: input.enabled, activeVersion });
    if (row.kind === 'after') await syncChangeTriggers(tx, projectId);
  });
  await announceChange(ctx, projectId);
  return viewOf(ctx, projectId, name);
}

export async function rollbackFunction(ctx: AppContext, projectId: string, name: string, version: number) {
  await ctx.db.admin.transaction().execute(async (tx) => {
    const row = await q.lockFunction(tx, projectId, name);
    if (!row) throw FunctionErrors.function_not_found();
    if (!(await q.findVersion(tx, row.id, version))) throw FunctionErrors.function_version_not_found();
    await q.updateFunction(tx, row.id, { activeVersion: version });
  });
  await announceChange(ctx, projectId);
  return viewOf(ctx, projectId, name);
}

export async function deleteFunction(ctx: AppContext, projectId: string, name: string): Promise<void> {
  await ctx.db.admin.transaction().execute(async (tx) => {
    const row = await q.deleteFunction(tx, projectId, name);
    if (!row) throw FunctionErrors.function_not_found();
    if (row.kind === 'after') await syncChangeTriggers(tx, projectId);
    if (row.kind === 'schedule') await forgetSchedule(tx, row.id);
  });
  await announceChange(ctx, projectId);
}

export async function listFunctions(ctx: AppContext, projectId: string) {
  return (await q.listFunctions(ctx.db.admin, projectId)).map(functionView);
}

/** One function with its versions and the active version's source (what the editor opens). */
export async function getFunction(ctx: AppContext, projectId: string, name: string) {
  const row = await q.findFunction(ctx.db.admin, projectId, name);
  if (!row) throw FunctionErrors.function_not_found();
  const [view, versions, active] = await Promise.all([
    viewOf(ctx, projectId, name),
    q.listVersions(ctx.db.admin, row.id),
    q.findVersion(ctx.db.admin, row.id, row.active_version),
  ]);
  return { ...view, source: active?.source ?? '', history: versions.map((v) => versionView(v, row.active_version)) };
}

export async function getVersion(ctx: AppContext, projectId: string, name: string, version: number) {
  const row = await q.findFunction(ctx.db.admin, projectId, name);
  if (!row) throw FunctionErrors.function_not_found();
  const v = await q.findVersion(ctx.db.admin, row.id, version);
  if (!v) throw FunctionErrors.function_version_not_found();
  return { ...versionView(v, row.active_version), source: v.source };
}

export async function listInvocations(ctx: AppContext, projectId: string, name: string, limit: number, before?: string) {
  const row = await q.findFunction(ctx.db.admin, projectId, name);
  if (!row) throw FunctionErrors.function_not_found();
  const rows = await q.listInvocations(ctx.db.admin, projectId, row.id, limit + 1, before);
  const page = rows.slice(0, limit);
  return { invocations: page.map(invocationView), nextBefore: rows.length > limit ? String(page[page.length - 1]?.id) : null };
}

/** Invocations, errors and latency of each function over the last day (the console's table). */
export async function functionStats(ctx: AppContext, projectId: string) {
  const [functions, stats] = await Promise.all([q.listFunctions(ctx.db.admin, projectId), q.invocationStats(ctx.db.admin, projectId, 24)]);
  const byId = new Map(stats.map((s) => [s.function_id, s]));
  return functions.map((f) => {
    const s = byId.get(f.id);
    return { name: f.name, invocations: Number(s?.invocations ?? 0), errors: Number(s?.errors ?? 0), p50Ms: s ? Number(s.p50) : null, p99Ms: s ? Number(s.p99) : null };
  });
}

export async function listSecrets(ctx: AppContext, projectId: string) {
  return (await q.secretNames(ctx.db.admin, projectId)).map((s) => ({ name: s.name, updatedAt: s.updated_at.toISOString() }));
}

export async function setSecret(ctx: AppContext, projectId: string, name: string, value: string): Promise<void> {
  if (Buffer.byteLength(value) > MAX_SECRET_BYTES) throw FunctionErrors.function_secrets_limit(`A secret is at most ${MAX_SECRET_BYTES} bytes.`);
  await ctx.db.admin.transaction().execute(async (tx) => {
    const names = await q.secretNames(tx, projectId);
    if (!names.some((s) => s.name === name) && names.length >= MAX_SECRETS) throw FunctionErrors.function_secrets_limit(`At most ${MAX_SECRETS} secrets per project.`);
    await q.upsertSecret(tx, projectId, name, encrypt(ctx.config.encryptionKey, value));
  });
  await announceChange(ctx, projectId);
}

export async function deleteSecret(ctx: AppContext, projectId: string, name: string): Promise<void> {
  if (!(await q.deleteSecret(ctx.db.admin, projectId, name))) throw FunctionErrors.function_secret_not_found();
  await announceChange(ctx, projectId);
}
