/**
 * Threat: a file the project does not accept, smuggled under an accepted type. With a MIME rule
 * (image/*), an executable declared as `image/png` is refused once its bytes are seen (their
 * magic numbers), on the three-step flow and on a resumable upload, and its bytes and charge
 * are gone; a declared type outside the rule and a size over the project's own limit are
 * refused before anything is stored.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, type TestProject } from '../../helpers/fixtures.js';
import { confirm, grantUpload, onDisk, putSigned, requestUpload, storageUsed } from './helpers.js';
import { create, idOf, listen, patch, uploadPath } from './tus-helpers.js';

let env: TestEnv;
let base: string;
let p: TestProject;
beforeAll(async () => {
  env = await createTestEnv();
  base = await listen(env.app);
  p = await makeProject(env.ctx);
  const r = await env.app.inject({ method: 'PUT', url: `/api/projects/${p.id}/files/settings`, headers: p.owner.auth, payload: { allowedTypes: ['image/*'], maxFileBytes: 1024 * 1024 } });
  expect(r.statusCode).toBe(200);
  expect(r.json().data.files).toMatchObject({ allowedTypes: ['image/*'], maxFileBytes: 1024 * 1024 });
});
afterAll(() => env.close());

// An ELF executable's first bytes, then padding.
const EXECUTABLE = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]), Buffer.alloc(4000, 0x90)]);

describe('three-step upload', () => {
  it('an executable declared as image/png is refused at confirm (415), its bytes removed and refunded', async () => {
    const { signedUrl, filePath } = await grantUpload(env, p.sk, EXECUTABLE.length, 'image/png', 'cat.png');
    expect((await putSigned(env, signedUrl, EXECUTABLE, { 'content-type': 'image/png' })).statusCode).toBe(200);
    const r = await confirm(env, p.sk, filePath, EXECUTABLE.length);
    expect(r.statusCode).toBe(415);
    expect(r.json().code).toBe('file_type_not_allowed');
    expect(onDisk(env, filePath)).toBe(false);
    expect(await storageUsed(env, p.id)).toBe(0);
    expect(await env.ctx.db.admin.selectFrom('files').select('id').where('path', '=', filePath).execute()).toEqual([]);
  });

  it('a real PNG is accepted', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).png().toBuffer();
    const { signedUrl, filePath } = await grantUpload(env, p.sk, png.length, 'image/png', 'ok.png');
    await putSigned(env, signedUrl, png, { 'content-type': 'image/png' });
    expect((await confirm(env, p.sk, filePath, png.length)).statusCode).toBe(200);
  });

  it('a declared type outside the rule, or a size over the project limit, is refused at request', async () => {
    const exe = await requestUpload(env, p.sk, { filename: 'x.exe', contentType: 'application/x-msdownload', size: 10 });
    expect(exe.statusCode).toBe(415);
    const big = await requestUpload(env, p.sk, { filename: 'x.png', contentType: 'image/png', size: 1024 * 1024 + 1 });
    expect(big.statusCode).toBe(413);
  });
});

describe('resumable upload', () => {
  it('an executable declared as image/png is refused on its last byte (415), nothing kept or charged', async () => {
    const created = await create(base, p.sk, EXECUTABLE.length, { filename: 'cat.png', filetype: 'image/png' });
    expect(created.status).toBe(201);
    const path = await uploadPath(env, idOf(created));
    const last = await patch(base, p.sk, idOf(created), 0, EXECUTABLE);
    expect(last.status).toBe(415);
    expect((await last.json()).code).toBe('file_type_not_allowed');
    expect(onDisk(env, path)).toBe(false);
    expect(await storageUsed(env, p.id)).toBeLessThan(EXECUTABLE.length);
    expect(await env.ctx.db.admin.selectFrom('files').select('id').where('path', '=', path).execute()).toEqual([]);
  });

  it('a declared type outside the rule is refused at creation', async () => {
    expect((await create(base, p.sk, 100, { filename: 'a.zip', filetype: 'application/zip' })).status).toBe(415);
  });
});
