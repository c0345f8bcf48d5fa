/**
 * Builders for the rows most tests need: an operator (with a dashboard token), a project with
 * its raw keys, a collection. They go through the real services where those exist.
 */
import type { AppContext } from '../../src/context.js';
import type { FieldDef, RlsConfig } from '../../src/db/types.js';
import { hashPassword } from '../../src/lib/passwords.js';
import { signOperatorToken } from '../../src/modules/operators/tokens.js';
import { createProject } from '../../src/modules/projects/service.js';
import { createPartition } from '../../src/modules/collections/partition-queries.js';

let seq = 0;
let cachedHash: string | undefined;

export interface TestOperator {
  id: string;
  email: string;
  password: string;
  plan: 'free' | 'pro';
  token: string;
  auth: { authorization: string };
}

export async function makeOperator(ctx: AppContext, opts: { plan?: 'free' | 'pro'; email?: string } = {}): Promise<TestOperator> {
  const email = opts.email ?? `op${Date.now()}${seq++}@example.com`;
  const password = 'correct horse battery';
  cachedHash ??= await hashPassword(password);
  const row = await ctx.db.admin
    .insertInto('operators')
    .values({ email, password_hash: cachedHash, name: 'Test Operator', plan: opts.plan ?? 'free', is_verified: true, ai_key: null })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  const token = await signOperatorToken(ctx.config.dashboardJwtSecret, row.id, ctx.clock.now());
  return { id: row.id, email, password, plan: opts.plan ?? 'free', token, auth: { authorization: `Bearer ${token}` } };
}

export interface TestProject {
  id: string;
  publishableKey: string;
  secretKey: string;
  owner: TestOperator;
  pk: { 'x-api-key': string };
  sk: { 'x-api-key': string };
}

export async function makeProject(ctx: AppContext, owner?: TestOperator, name = 'Test project'): Promise<TestProject> {
  const op = owner ?? (await makeOperator(ctx));
  const { project, publishableKey, secretKey } = await createProject(ctx, op, { name, siteUrl: 'http://localhost:5173' });
  return {
    id: project.id,
    publishableKey,
    secretKey,
    owner: op,
    pk: { 'x-api-key': publishableKey },
    sk: { 'x-api-key': secretKey },
  };
}

/** Inserts a collection row and its documents partition directly (no schema validation, no indexes): for tests of other domains. */
export async function makeCollection(
  ctx: AppContext,
  projectId: string,
  name: string,
  fields: FieldDef[] = [],
  rls?: Partial<RlsConfig>,
): Promise<{ id: string; name: string }> {
  const fullRls: RlsConfig = { enabled: false, mode: 'public-read', ownerField: 'userId', requireAuthForWrite: true, ...rls };
  // One transaction, as the service does: the partition's read policies come at its commit.
  return ctx.db.admin.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('collections')
      .values({
        project_id: projectId,
        name,
        fields: JSON.stringify(fields) as unknown as FieldDef[],
        rls: JSON.stringify(fullRls) as unknown as RlsConfig,
      })
      .returning(['id', 'name'])
      .executeTakeFirstOrThrow();
    await createPartition(tx, row.id);
    return row;
  });
}

export const USERS_FIELDS: FieldDef[] = [
  { key: 'email', type: 'String', required: true, unique: true },
  { key: 'password', type: 'String', required: true },
  { key: 'name', type: 'String' },
  { key: 'username', type: 'String' },
  { key: 'emailVerified', type: 'Boolean' },
];

/** An access token for `userId` in `project`, signed exactly as the auth endpoints sign them. */
export async function makeUserToken(ctx: AppContext, project: TestProject, userId: string, ttlSeconds = 900): Promise<string> {
  const { signAccessToken } = await import('../../src/modules/auth/tokens.js');
  const record = await ctx.projects.byId(project.id);
  if (!record) throw new Error('project not found');
  return signAccessToken(record, userId, ttlSeconds, ctx.clock.now());
}
