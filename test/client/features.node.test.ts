/**
 * @plinth/client's feature entry points in Node against a running Plinth: realtime (filters,
 * leave, the connection state, and a cut stream that resumes with the last event id and gets
 * the change it missed exactly once), files (presigned upload with progress, public and signed
 * URLs, image transformations, tus with progress that resumes after a failure), mail send.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../packages/client/src/index.js';
import { files } from '../../packages/client/src/files.js';
import { mail } from '../../packages/client/src/mail.js';
import { realtime, type ChangeEvent, type ConnectionState, type LeaveEvent } from '../../packages/client/src/realtime.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';
import { runPlinth, type Running } from './helpers.js';

let r: Running;
let proxy: TcpProxy;

beforeAll(async () => {
  r = await runPlinth();
  await r.collection({
    name: 'messages',
    schema: [
      { key: 'text', type: 'String' },
      { key: 'room', type: 'String' },
    ],
    realtime: true,
  });
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(r.url).port));
});
afterAll(async () => {
  await proxy.close();
  await r.env.close();
});

const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((res) => setTimeout(res, 20));
  }
};

describe('realtime', () => {
  it('filtered changes, leave, state; after a cut it resumes and gets the missed change once', async () => {
    const server = createClient({ url: r.url, apiKey: r.p.secretKey });
    const viaProxy = createClient({ url: proxy.via(r.url), apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    const changes: ChangeEvent[] = [];
    const leaves: LeaveEvent[] = [];
    const states: ConnectionState[] = [];
    const ch = realtime(viaProxy).subscribe([{ collection: 'messages', filter: { room: 'lobby' } }], {
      onChange: (e) => changes.push(e),
      onLeave: (e) => leaves.push(e),
      onState: (s) => states.push(s),
    }, { maxBackoffMs: 300 });
    await until(() => ch.state === 'open');
    const m = server.collection('messages');
    const a = await m.insert({ text: 'one', room: 'lobby' });
    await m.insert({ text: 'elsewhere', room: 'other' });
    await until(() => changes.length === 1);
    expect(changes[0]).toMatchObject({ action: 'create', id: a._id, document: { text: 'one' } });
    await m.update(a._id, { room: 'other' });
    await until(() => leaves.length === 1);
    expect(leaves[0]!.id).toBe(a._id);

    await proxy.cut();
    await until(() => ch.state === 'reconnecting');
    const missed = await m.insert({ text: 'while away', room: 'lobby' });
    await proxy.restore();
    await until(() => changes.some((c) => c.id === missed._id));
    await until(() => ch.state === 'open');
    await new Promise((res) => setTimeout(res, 300));
    expect(changes.filter((c) => c.id === missed._id)).toHaveLength(1);
    expect(states).toEqual(expect.arrayContaining(['connecting', 'open', 'reconnecting']));
    ch.close();
    expect(ch.state).toBe('closed');
  });

  it('a refused subscription closes the channel with the envelope error', async () => {
    const c = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    const errors: string[] = [];
    const ch = realtime(c).subscribe([{ collection: 'messages', filter: { text_regex: 'a' } }], { onError: (e) => errors.push(e.code) });
    await until(() => ch.state === 'closed');
    expect(errors[0]).toMatch(/invalid|realtime|filter/);
  });
});

describe('files', () => {
  it('presigned upload with progress, public URL, image transform, signed URL of a private file, delete', async () => {
    const c = createClient({ url: r.url, apiKey: r.p.publishableKey, auth: { storage: 'memory' } });
    await c.auth.signUp({ email: uniqueEmail('files'), password: PASSWORD });
    const f = files(c);
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } }).png().toBuffer();
    const progress: number[] = [];
    const up = await f.upload(new Uint8Array(png), { filename: 'pic.png', contentType: 'image/png', onProgress: (p) => progress.push(p.loaded) });
    expect(up.path).toMatch(/pic\.png$/);
    expect(progress.at(-1)).toBe(png.length);
    const pub = await fetch(f.publicUrl(up.path));
    expect(Buffer.from(await pub.arrayBuffer()).equals(png)).toBe(true);
    const img = await fetch(f.imageUrl(up.path, { width: 20, format: 'png' }));
    expect(img.status).toBe(200);
    expect((await sharp(Buffer.from(await img.arrayBuffer())).metadata()).width).toBe(20);

    const secret = await f.upload(new TextEncoder().encode('secret text'), { filename: 's.txt', contentType: 'text/plain', private: true });
    expect((await fetch(f.publicUrl(secret.path))).status).toBe(403);
    const { url } = await f.downloadUrl(secret.path, { expiresIn: 60 });
    expect(await (await fetch(url)).text()).toBe('secret text');
    await f.delete(secret.path);
    const again = await f.delete(secret.path).catch((e: unknown) => e);
    expect(again).toMatchObject({ status: 404 });
  });

  it('tus: progress per chunk, and a second call after a failure resumes from the server offset', async () => {
    let patches = 0;
    const sent: string[] = [];
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method === 'PATCH') {
        sent.push((init.headers as Record<string, string>)['upload-offset']!);
        if (++patches === 2) throw new TypeError('fetch failed'); // the connection drops mid-upload
      }
      return fetch(input, init);
    };
    const c = createClient({ url: r.url, apiKey: r.p.secretKey, fetch: flaky });
    const f = files(c);
    const bytes = new Uint8Array(300 * 1024).map((_, i) => i % 251);
    const progress: number[] = [];
    const opts = { filename: 'big.bin', contentType: 'application/octet-stream', chunkSize: 100 * 1024, onProgress: (p: { loaded: number }) => progress.push(p.loaded) };
    const failed = await f.uploadResumable(bytes, opts).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'network_error' });
    const done = await f.uploadResumable(bytes, opts);
    expect(sent).toEqual(['0', '102400', '102400', '204800']);
    expect(progress).toEqual([0, 102400, 102400, 204800, 307200]);
    expect(done.path).toMatch(/big\.bin$/);
    const got = new Uint8Array(await (await fetch(files(c).publicUrl(done.path))).arrayBuffer());
    expect(got.length).toBe(bytes.length);
    expect(got.every((b, i) => b === bytes[i])).toBe(true);
  });
});

describe('mail', () => {
  it('send with the secret key, with an Idempotency-Key', async () => {
    const keys: string[] = [];
    const c = createClient({
      url: r.url,
      apiKey: r.p.secretKey,
      fetch: (input, init) => {
        keys.push((init?.headers as Record<string, string>)['idempotency-key'] ?? '');
        return fetch(input, init);
      },
    });
    const sent = await mail(c).send({ to: 'someone@example.com', subject: 'Hello', text: 'Hi there' });
    expect(sent).toMatchObject({ id: expect.any(String), provider: 'default' });
    expect(keys[0]).toBeTruthy();
  });
});
