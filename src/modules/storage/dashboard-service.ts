/**
 * Dashboard side of storage: a project's files (newest first), its usage against the plan,
 * and its own bucket (settings in projects.settings.storage, the secret key AES-GCM encrypted
 * in projects.secrets). Secrets are never returned or logged.
 */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { usage } from '../../lib/quota-queries.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { planOf } from '../plans/plans.js';
import { loadMemberProject } from '../projects/access.js';
import { ProjectErrors } from '../projects/errors.js';
import { BUCKET_SECRET, backendOfFile, bucketSettingsOf, isRefusedEndpoint, type BucketSettings } from './backends.js';
import type { StorageDriver } from './drivers/types.js';
import { StorageErrors } from './errors.js';
import { fileSettingsOf, isPrivate, type FileSettings } from './file-settings.js';
import { countConfirmed, listConfirmed, saveBucket, saveFileSettings } from './queries.js';
import { storageCounter } from './service.js';
import type { FileProvider } from './tables.js';

type ProjectRow = Awaited<ReturnType<typeof loadMemberProject>>;

export async function listFiles(ctx: AppContext, operator: OperatorIdentity, projectId: string, page: number, limit: number) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const [rows, total] = await Promise.all([
    listConfirmed(ctx.db.admin, projectId, limit, (page - 1) * limit),
    countConfirmed(ctx.db.admin, projectId),
  ]);
  // One driver per provider (the external one decrypts the bucket secret), not one per row.
  const drivers = { internal: driverOrNull(ctx, project, 'internal'), external: driverOrNull(ctx, project, 'external') };
  const items = rows.map((r) => ({
    path: r.path,
    url: isPrivate(project, r) ? null : (drivers[r.provider]?.publicUrl(r.path) ?? null),
    private: isPrivate(project, r),
    size: Number(r.size),
    contentType: r.content_type,
    provider: r.provider,
    ownerId: r.owner_id,
    createdAt: new Date(r.created_at).toISOString(),
    confirmedAt: r.confirmed_at ? new Date(r.confirmed_at).toISOString() : null,
  }));
  return { items, total, page, limit };
}

/** The file backend, or null when it is not configured or its credentials cannot be read. */
function driverOrNull(ctx: AppContext, project: ProjectRow, provider: FileProvider): StorageDriver | null {
  try {
    return backendOfFile(ctx, project, provider);
  } catch {
    return null;
  }
}

export async function storageOverview(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  return overviewOf(ctx, operator, await loadMemberProject(ctx, operator, projectId));
}

async function overviewOf(ctx: AppContext, operator: OperatorIdentity, project: Pick<ProjectRow, 'id' | 'settings' | 'secrets'>) {
  const [used, fileCount] = await Promise.all([usage(ctx.db.admin, storageCounter(project.id)), countConfirmed(ctx.db.admin, project.id)]);
  const plan = planOf(operator.plan);
  const bucket = bucketSettingsOf(project);
  return {
    used,
    limit: plan.storageBytes,
    maxFileBytes: plan.maxFileBytes,
    fileCount,
    driver: ctx.config.storage.driver,
    bucket: bucket ? { ...bucket, hasSecretAccessKey: !!project.secrets[BUCKET_SECRET] } : null,
    files: fileSettingsOf(project),
  };
}

const MEDIA_TYPE = /^[a-z]+\/([a-z0-9][a-z0-9.+-]*|\*)$/;

/** Replaces the project's file rules: default privacy, allowed media types, a smaller largest file. */
export async function setFileSettings(ctx: AppContext, operator: OperatorIdentity, projectId: string, input: Partial<FileSettings>) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const types = input.allowedTypes ?? null;
  if (types && types.some((t) => !MEDIA_TYPE.test(t))) throw StorageErrors.file_settings_invalid('allowedTypes are media types such as image/png or image/*.');
  const max = input.maxFileBytes ?? null;
  const planMax = Math.max(ctx.config.storage.resumable.maxFileBytes[operator.plan === 'pro' ? 'pro' : 'free'], planOf(operator.plan).maxFileBytes);
  if (max !== null && max > planMax) throw StorageErrors.file_settings_invalid(`maxFileBytes must be at most the plan's ${planMax}.`);
  const current = fileSettingsOf(project);
  const settings: FileSettings = {
    private: input.private ?? current.private,
    allowedTypes: types,
    maxFileBytes: max,
    signedTransformsOnly: input.signedTransformsOnly ?? current.signedTransformsOnly,
  };
  const saved = await saveFileSettings(ctx.db.admin, projectId, settings, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  if (!saved) throw ProjectErrors.project_not_found();
  return overviewOf(ctx, operator, saved);
}

export interface BucketInput extends BucketSettings {
  secretAccessKey: string;
}

function checkBucket(ctx: AppContext, b: BucketInput): BucketSettings {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(b.bucket)) throw StorageErrors.bucket_config_invalid('Invalid bucket name.');
  for (const [name, value] of [['endpoint', b.endpoint], ['publicUrl', b.publicUrl]] as const) {
    if (value === undefined) continue;
    let u: URL;
    try {
      u = new URL(value);
    } catch {
      throw StorageErrors.bucket_config_invalid(`${name} must be an http(s) URL.`);
    }
    if (!/^https?:$/.test(u.protocol)) throw StorageErrors.bucket_config_invalid(`${name} must be an http(s) URL.`);
    if (name === 'endpoint' && isRefusedEndpoint(ctx, u)) {
      throw StorageErrors.bucket_config_invalid('endpoint is pointing to a restricted host (localhost/internal).');
    }
  }
  const { bucket, region, endpoint, accessKeyId, forcePathStyle, publicUrl } = b;
  return { bucket, region, accessKeyId, forcePathStyle: forcePathStyle ?? false, ...(endpoint && { endpoint: endpoint.replace(/\/+$/, '') }), ...(publicUrl && { publicUrl: publicUrl.replace(/\/+$/, '') }) };
}

/** Saves (or, with null, clears) the project's own bucket. */
export async function setBucket(ctx: AppContext, operator: OperatorIdentity, projectId: string, input: BucketInput | null) {
  await loadMemberProject(ctx, operator, projectId);
  const now = ctx.clock.now();
  const bucket = input ? { settings: checkBucket(ctx, input), secret: encrypt(ctx.config.encryptionKey, input.secretAccessKey) } : null;
  const { rows } = await saveBucket(ctx.db.admin, projectId, BUCKET_SECRET, bucket, now);
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  const project = rows[0];
  if (!project) throw ProjectErrors.project_not_found();
  return overviewOf(ctx, operator, project);
}
