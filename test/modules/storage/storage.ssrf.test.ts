/**
 * Threat: a tenant points "their own bucket" at the platform's private network (cloud
 * metadata, a database on loopback, an internal service) and uses Plinth's S3 client to reach
 * it: server-side request forgery. With private endpoints refused (the production default),
 * such endpoints are refused when saved, when used, and when a public-looking name resolves to
 * a private address at connect time.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encrypt } from '../../../src/lib/crypto.js';
import { S3Driver } from '../../../src/modules/storage/drivers/s3.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { FAKE_KEY, startFakeS3, type FakeS3 } from '../../fakes/s3.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { requestUpload } from './helpers.js';

let env: TestEnv;
let s3: FakeS3;
let p: TestProject;

beforeAll(async () => {
  s3 = await startFakeS3();
  await s3.createBucket('byo-bucket');
  env = await createTestEnv({ STORAGE_ALLOW_PRIVATE_ENDPOINTS: 'false' });
  p = await makeProject(env.ctx);
});
afterAll(async () => {
  await env.close();
  await s3.close();
});

const port = () => new URL(s3.endpoint).port;
const saveBucket = (endpoint: string) =>
  env.app.inject({
    method: 'PATCH',
    url: `/api/projects/${p.id}/storage`,
    headers: p.owner.auth,
    payload: { bucket: 'byo-bucket', region: 'us-east-1', endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true },
  });

describe('own-bucket endpoints on private addresses', () => {
  it.each([
    'http://127.0.0.1:PORT', 'http://localhost:PORT', 'http://[::1]:PORT', 'http://[::ffff:127.0.0.1]:PORT',
    'http://169.254.169.254', 'http://10.0.0.5:9000', 'http://2130706433:PORT', 'http://minio.localhost:PORT',
  ])('%s is refused when saved (400) and nothing is stored', async (template) => {
    const res = await saveBucket(template.replace('PORT', port()));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'bucket_config_invalid', message: expect.stringMatching(/restricted host/) });
    const row = await env.ctx.db.admin.selectFrom('projects').select(['settings']).where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.settings.storage ?? null).toBeNull();
  });

  it('a private endpoint saved before (or by another route) is refused when used: 502, no request leaves', async () => {
    const q = await makeProject(env.ctx);
    const settings = { bucket: 'byo-bucket', region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: 'S3RVER', forcePathStyle: true };
    const secret = encrypt(env.ctx.config.encryptionKey, 'S3RVER');
    await sql`UPDATE projects SET settings = settings || jsonb_build_object('storage', ${JSON.stringify(settings)}::jsonb),
      secrets = secrets || jsonb_build_object('storageSecretAccessKey', ${JSON.stringify(secret)}::jsonb) WHERE id = ${q.id}`.execute(env.ctx.db.admin);
    await env.ctx.bus.publish({ type: 'project_changed', id: q.id });
    const res = await requestUpload(env, q.sk, { filename: 'f.txt', contentType: 'text/plain', size: 2 });
    expect(res.statusCode).toBe(502);
    expect(res.json().message).toMatch(/not a public host/);
  });

  it('a host name that resolves to a private address is refused at connect time (DNS rebinding)', async () => {
    const settings = { bucket: 'byo-bucket', region: 'us-east-1', endpoint: `http://localhost:${port()}`, accessKeyId: FAKE_KEY.accessKeyId, secretAccessKey: FAKE_KEY.secretAccessKey, forcePathStyle: true };
    const guarded = new S3Driver(settings, { publicOnly: true });
    await expect(guarded.head('nothing.txt')).rejects.toMatchObject({ code: 'ERR_NON_PUBLIC_ADDRESS' });
    // The same driver without the guard reaches the store: the refusal above is the guard's.
    expect(await new S3Driver(settings).head('nothing.txt')).toBeNull();
  });
});
