/**
 * Issue 46 item 2: a resumable upload whose file name was longer than ~25 bytes could never be
 * finished nor deleted. Its upload id was the base64url of the file's path, so it grew with the
 * name; past Fastify's 100-character parameter limit every HEAD, PATCH and DELETE answered 414
 * FST_ERR_MAX_PARAM_LENGTH while the creation had answered 201 and charged the quota (kept until
 * the 24 h sweep). Upload ids are now fixed-length and carry no name: names of 1–255 bytes in
 * several scripts are created, read, patched to the end, served under their (sanitised) name,
 * and abandoned with their charge refunded. The id still binds the upload to its project and
 * its uploader, and ids issued before the change keep working while their uploads are in flight.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { makeProject, makeUserToken } from '../../helpers/fixtures.js';
import { encodePath, sanitiseFilename } from '../../../src/modules/storage/paths.js';
import { onDisk, storageUsed } from './helpers.js';
import { create, idOf, listen, offset, offsetOf, patch, terminate } from './tus-helpers.js';

let env: TestEnv;
let base: string;
beforeAll(async () => {
  env = await createTestEnv();
  base = await listen(env.app);
});
afterAll(() => env.close());

const SCRIPTS = {
  ascii: 'IMG_20261128_153045_HDR_edit',
  japanese: '東京タワーの夜景写真編集済み',
  accented: 'éàüñçøåÉÀÜÑÇœßþ',
  emoji: '📷🌅🎉🏔🐈',
  spaces: 'my holiday photo at the beach ',
} as const;
const BYTES = [1, 25, 26, 100, 200, 255];

/** A name of exactly `bytes` UTF-8 bytes in a script (ASCII filler where a character would not fit). */
function nameOf(unit: string, bytes: number): string {
  const ext = bytes >= 8 ? '.jpg' : '';
  const room = bytes - ext.length;
  const chars = Array.from(unit);
  let body = '';
  for (let i = 0; Buffer.byteLength(body + chars[i % chars.length]!) <= room; i++) body += chars[i % chars.length]!;
  body = body.trimEnd(); // tus metadata values are trimmed: keep the name as sent
  while (Buffer.byteLength(body) < room) body += 'x';
  return body + ext;
}

const cases = Object.entries(SCRIPTS).flatMap(([script, unit]) => BYTES.map((bytes) => ({ script, bytes, name: nameOf(unit, bytes) })));

/** The files row of a project's one upload. */
const fileOf = (projectId: string) => env.ctx.db.admin.selectFrom('files').selectAll().where('project_id', '=', projectId).executeTakeFirst();

let idLength: number;
beforeAll(async () => {
  const p = await makeProject(env.ctx);
  idLength = idOf(await create(base, p.sk, 1, { filename: 'a' })).length;
});

describe.each(cases)('a $bytes-byte $script name', ({ bytes, name }) => {
  it('is created, read, patched to the end and served under its name', async () => {
    expect(Buffer.byteLength(name)).toBe(bytes);
    const p = await makeProject(env.ctx);
    const body = randomBytes(1000 + bytes);
    const created = await create(base, p.sk, body.length, { filename: name, filetype: 'image/jpeg' });
    expect(created.status).toBe(201);
    const id = idOf(created);
    expect(id.length).toBe(idLength); // the id does not grow with the name
    expect(await storageUsed(env, p.id)).toBe(body.length);

    const head = await offset(base, p.sk, id);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('0');
    expect(head.headers.get('upload-length')).toBe(String(body.length));

    // Odd sizes in one PATCH, even ones in two.
    const cut = bytes % 2 === 0 ? 400 : body.length;
    if (cut < body.length) {
      const first = await patch(base, p.sk, id, 0, body.subarray(0, cut));
      expect(first.status).toBe(204);
      expect(await offsetOf(base, p.sk, id)).toBe(cut);
    }
    const last = await patch(base, p.sk, id, cut < body.length ? cut : 0, body.subarray(cut < body.length ? cut : 0));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(body.length));

    const row = (await fileOf(p.id))!;
    expect(row.status).toBe('confirmed');
    expect(row.path).toBe(`${p.id}/${row.id}_${sanitiseFilename(name)}`);
    expect(last.headers.get('plinth-file-path')).toBe(encodePath(row.path));
    const session = await env.ctx.db.admin.selectFrom('upload_sessions').select('value').where('id', '=', row.path).executeTakeFirstOrThrow();
    expect((session.value as { metadata: { filename: string } }).metadata.filename).toBe(name); // the name as sent
    const served = await fetch(`${base}/api/storage/public/${encodePath(row.path)}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(body)).toBe(true);
    expect(await storageUsed(env, p.id)).toBe(body.length);
    expect(await offsetOf(base, p.sk, id)).toBe(body.length);
  });

  it('unfinished, is abandoned by DELETE (204) and its charge refunded', async () => {
    const p = await makeProject(env.ctx);
    const id = idOf(await create(base, p.sk, 5000, { filename: name }));
    expect((await patch(base, p.sk, id, 0, randomBytes(1234))).status).toBe(204);
    expect(await storageUsed(env, p.id)).toBe(5000);
    const path = (await fileOf(p.id))!.path;
    expect(onDisk(env, path)).toBe(true);

    const del = await terminate(base, p.sk, id);
    expect(del.status).toBe(204);
    expect(del.headers.get('tus-resumable')).toBe('1.0.0');
    expect(await storageUsed(env, p.id)).toBe(0);
    expect(await fileOf(p.id)).toBeUndefined();
    expect(onDisk(env, path)).toBe(false);
    expect((await offset(base, p.sk, id)).status).toBe(404);
    expect((await terminate(base, p.sk, id)).status).toBe(404);
  });
});

describe('a long-named upload stays bound to its project and uploader', () => {
  const long = nameOf(SCRIPTS.japanese, 255);

  it('another user of the project sees no upload (404) and cannot patch or delete it; another project is refused (403)', async () => {
    const p = await makeProject(env.ctx);
    const alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1')}` };
    const bob = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'b2b2b2b2b2b2b2b2b2b2b2b2')}` };
    const id = idOf(await create(base, alice, 10, { filename: long }));
    expect((await offset(base, bob, id)).status).toBe(404);
    expect((await patch(base, bob, id, 0, Buffer.alloc(10))).status).toBe(404);
    expect((await terminate(base, bob, id)).status).toBe(404);
    const q = await makeProject(env.ctx);
    expect((await offset(base, q.sk, id)).status).toBe(403); // another project's upload, as everywhere
    for (const r of [await patch(base, q.sk, id, 0, Buffer.alloc(10)), await terminate(base, q.sk, id)]) {
      expect(r.status).toBe(403);
      expect((await r.json()).code).toBe('access_denied');
    }
    expect(await storageUsed(env, p.id)).toBe(10);
    expect((await offsetOf(base, alice, id))).toBe(0);
    expect((await patch(base, alice, id, 0, Buffer.alloc(10))).status).toBe(204);
    expect((await fileOf(p.id))).toMatchObject({ owner_id: 'a1a1a1a1a1a1a1a1a1a1a1a1', status: 'confirmed' });
  });

  it('the project secret key reaches a user upload (as every storage route)', async () => {
    const p = await makeProject(env.ctx);
    const alice = { ...p.pk, authorization: `Bearer ${await makeUserToken(env.ctx, p, 'a1a1a1a1a1a1a1a1a1a1a1a1')}` };
    const id = idOf(await create(base, alice, 10, { filename: long }));
    expect(await offsetOf(base, p.sk, id)).toBe(0);
    expect((await terminate(base, p.sk, id)).status).toBe(204);
    expect(await storageUsed(env, p.id)).toBe(0);
  });

  it('ids that were never issued are not found', async () => {
    const p = await makeProject(env.ctx);
    await create(base, p.sk, 10, { filename: long });
    for (const forged of [p.id + '0'.repeat(idLength - p.id.length), p.id + 'f'.repeat(idLength - p.id.length), p.id + '0'.repeat(idLength - p.id.length - 1), Buffer.from(`${p.id}/../../etc/passwd`).toString('base64url'), 'x']) {
      expect((await offset(base, p.sk, forged)).status).toBe(404);
      expect((await terminate(base, p.sk, forged)).status).toBe(404);
    }
    expect(await storageUsed(env, p.id)).toBe(10);
  });
});

describe('upgrade: an upload created before ids were fixed-length', () => {
  it('is still reached by its old id (base64url of its path) while in flight, with the same checks', async () => {
    const p = await makeProject(env.ctx);
    const body = randomBytes(2000);
    await create(base, p.sk, body.length, { filename: 'holiday.jpg' });
    const path = (await fileOf(p.id))!.path;
    const old = Buffer.from(path).toString('base64url');
    expect(old.length).toBeLessThanOrEqual(100);
    expect(await offsetOf(base, p.sk, old)).toBe(0);
    expect((await patch(base, p.sk, old, 0, body.subarray(0, 500))).status).toBe(204);
    const q = await makeProject(env.ctx);
    expect((await offset(base, q.sk, old)).status).toBe(403);
    expect((await patch(base, p.sk, old, 500, body.subarray(500))).status).toBe(204);
    expect((await fileOf(p.id))!.status).toBe('confirmed');

    await create(base, p.sk, 3000, { filename: 'abandoned.bin' });
    const other = (await env.ctx.db.admin.selectFrom('files').select('path').where('project_id', '=', p.id).where('status', '=', 'pending').executeTakeFirstOrThrow()).path;
    expect((await terminate(base, p.sk, Buffer.from(other).toString('base64url'))).status).toBe(204);
    expect(await storageUsed(env, p.id)).toBe(body.length);
  });
});
