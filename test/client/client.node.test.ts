/**
 * @plinth/client in Node against a running Plinth: sessions (sign-up, sign-in, refresh before
 * and after expiry, one refresh for concurrent calls and for two "tabs" sharing storage,
 * sign-out everywhere, magic code, guests), data (CRUD, filters, sort, offset and cursor
 * pages, count, populate, search, aggregate, batch, soft delete and restore), typed errors,
 * and retried writes that carry one Idempotency-Key (one document, not two).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, etagOf, isPlinthError, memoryStorage, PlinthError, PreconditionFailedError, type AuthEvent } from '../../packages/client/src/index.js';
import { lastCode, PASSWORD, uniqueEmail } from '../modules/auth/helpers.js';
import { recordingFetch, runPlinth, type Running } from './helpers.js';

let r: Running;

beforeAll(async () => {
  r = await runPlinth();
  await r.collection({
    name: 'posts',
    schema: [
      { key: 'title', type: 'String', required: true, searchable: true },
      { key: 'views', type: 'Number' },
      { key: 'status', type: 'String', enum: ['draft', 'published'] },
      { key: 'author', type: 'Ref', ref: 'users' },
      { key: 'userId', type: 'String' },
    ],
    rls: { enabled: true, mode: 'public-read', ownerField: 'userId', requireAuthForWrite: true },
  });
});
afterAll(() => r.env.close());

type Posts = { title: string; views?: number; status?: 'draft' | 'published'; author?: string; userId?: string };
type Schema = { posts: Posts; users: { email: string } };

function client(opts: { fetch?: typeof fetch; storage?: ReturnType<typeof memoryStorage>; retries?: number } = {}) {
  return createClient<Schema>({ url: r.url, apiKey: r.p.publishableKey, fetch: opts.fetch, retries: opts.retries, auth: { storage: opts.storage ?? 'memory' } });
}

describe('sessions', () => {
  it('sign-up, me, sign-in; onAuthStateChange hears each change', async () => {
    const c = client();
    const events: AuthEvent[] = [];
    c.auth.onAuthStateChange((e) => events.push(e));
    const email = uniqueEmail('cl');
    const up = await c.auth.signUp({ email, password: PASSWORD, name: 'Client' });
    expect(up.user).toMatchObject({ email, name: 'Client' });
    expect(up.session.refreshToken).toBeTruthy();
    expect((await c.auth.me()).email).toBe(email);
    await c.auth.signOut();
    expect(await c.auth.getSession()).toBeNull();
    const inn = await c.auth.signIn({ email, password: PASSWORD });
    expect(inn.mfaRequired).toBeFalsy();
    expect(events).toEqual(['INITIAL_SESSION', 'SIGNED_IN', 'USER_UPDATED', 'SIGNED_OUT', 'SIGNED_IN']);
  });

  it('wrong credentials are a PlinthError with the envelope code', async () => {
    const err = await client().auth.signIn({ email: uniqueEmail('none'), password: 'whatever 1' }).catch((e: unknown) => e);
    expect(isPlinthError(err)).toBe(true);
    expect(err).toMatchObject({ status: 401, code: 'invalid_credentials', message: 'Invalid email or password' });
  });

  it('an expired token: five concurrent calls share one refresh, and the session goes on', async () => {
    const log: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
    const c = client({ fetch: recordingFetch(log) });
    await c.auth.signUp({ email: uniqueEmail('cl'), password: PASSWORD });
    r.env.clock.advance(16 * 60 * 1000); // the server's clock: every token it issued has expired
    const results = await Promise.all(Array.from({ length: 5 }, () => c.auth.me()));
    expect(results.every((u) => u._id === results[0]!._id)).toBe(true);
    expect(log.filter((l) => l.path.endsWith('/refresh-token'))).toHaveLength(1);
    // and the rotated token still refreshes (no refresh_reused)
    expect(await c.auth.refresh()).toBe(true);
  });

  it('refreshes before expiry, without waiting for a 401', async () => {
    const log: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
    const c = client({ fetch: recordingFetch(log) });
    await c.auth.signUp({ email: uniqueEmail('cl'), password: PASSWORD });
    const s = (await c.auth.getSession())!;
    (s as { expiresAt: number }).expiresAt = Date.now() + 10_000; // within the 30 s margin
    await c.auth.me();
    const paths = log.map((l) => l.path.replace(/\?.*/, ''));
    expect(paths.slice(-2)).toEqual(['/api/userAuth/refresh-token', '/api/userAuth/me']);
  });

  it('two tabs sharing storage: the second adopts the first one\'s refresh instead of reusing the old token', async () => {
    const shared = memoryStorage();
    const log: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
    const a = client({ storage: shared, fetch: recordingFetch(log) });
    await a.auth.signUp({ email: uniqueEmail('tab'), password: PASSWORD });
    const b = client({ storage: shared, fetch: recordingFetch(log) });
    await b.auth.getSession();
    r.env.clock.advance(16 * 60 * 1000);
    await a.auth.me(); // 401 → a refreshes (rotates the refresh token) and stores the new session
    await b.auth.me(); // 401 → b finds a's newer session in storage, no second refresh
    expect(log.filter((l) => l.path.endsWith('/refresh-token'))).toHaveLength(1);
    expect(await b.auth.refresh()).toBe(true); // b's refresh token is the rotated one: no refresh_reused
  });

  it('sign-out everywhere revokes the other devices', async () => {
    const email = uniqueEmail('all');
    const a = client();
    await a.auth.signUp({ email, password: PASSWORD });
    const b = client();
    await b.auth.signIn({ email, password: PASSWORD });
    expect(await a.auth.sessions()).toHaveLength(2);
    const events: AuthEvent[] = [];
    b.auth.onAuthStateChange((e) => events.push(e));
    await a.auth.signOut({ everywhere: true });
    expect(await b.auth.refresh()).toBe(false);
    expect(await b.auth.getSession()).toBeNull();
    expect(events).toContain('SIGNED_OUT');
  });

  it('magic code: sendMagicLink then verifyCode signs in (a new user)', async () => {
    const c = client();
    const email = uniqueEmail('ml');
    await c.auth.sendMagicLink({ email });
    const res = await c.auth.verifyCode({ email, code: lastCode(r.mail, email, 'auth.passwordless') });
    expect(res).toMatchObject({ isNewUser: true, user: { email } });
  });

  it('magic link: handleRedirect on the mailed link signs in and tells a URL without one apart', async () => {
    const c = client();
    const email = uniqueEmail('link');
    await c.auth.sendMagicLink({ email });
    const mailed = [...r.mail].reverse().find((m) => m.to === email && m.tag === 'auth.passwordless')!;
    const link = /https?:\/\/\S+#type=magiclink&token=[\w-]+/.exec(mailed.text ?? '')?.[0];
    expect(link).toBeTruthy();
    expect(await c.auth.handleRedirect('http://localhost:5173/auth/callback')).toBeNull();
    const res = await c.auth.handleRedirect(link!);
    expect(res).toMatchObject({ user: { email } });
    expect((await c.auth.me()).email).toBe(email);
    const refused = await c.auth.handleRedirect('http://localhost:5173/auth/callback?error=OAuth%20state%20mismatch').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'social_sign_in_failed', message: 'OAuth state mismatch' });
  });

  it('a guest signs in, writes, links an email and keeps its user id', async () => {
    await r.patchProject({ allowAnonymous: true });
    const c = client();
    const { user } = await c.auth.signInAnonymously();
    expect(user.isAnonymous).toBe(true);
    const post = await c.collection('posts').insert({ title: 'guest post' });
    expect(post.userId).toBe(user._id);
    const email = uniqueEmail('guest');
    const linked = await c.auth.linkEmail({ email, password: PASSWORD });
    expect(linked).toMatchObject({ _id: user._id, email });
    expect((await c.auth.me())._id).toBe(user._id);
  });
});

describe('data', () => {
  it('CRUD, filters, sort, pages, count, soft delete and restore', async () => {
    const c = client();
    const { user } = await c.auth.signUp({ email: uniqueEmail('data'), password: PASSWORD });
    const posts = c.collection('posts');
    const tag = `t${Date.now()}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await posts.insert({ title: `${tag} post ${i}`, views: i, status: i % 2 ? 'published' : 'draft' }));
    expect(made[0]).toMatchObject({ _id: expect.any(String), userId: user._id, views: 0 });
    const mine = posts.where('userId', 'eq', user._id);
    const page = await mine.where('views', 'gte', 2).sort('-views').limit(2).list();
    expect(page.items.map((p) => p.views)).toEqual([4, 3]);
    expect((await mine.where({ views_gte: 2 }).sort('-views').limit(2).page(2).list()).items.map((p) => p.views)).toEqual([2]);
    expect(await mine.eq('status', 'published').count()).toBe(2);
    const seen: number[] = [];
    for await (const items of mine.sort('views').limit(2).pages()) seen.push(...items.map((p) => p.views!));
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
    const got = await posts.get(made[1]!._id);
    expect(got.title).toBe(`${tag} post 1`);
    const updated = await posts.update(made[1]!._id, { views: 10 });
    expect(updated.views).toBe(10);
    await posts.delete(made[1]!._id);
    const gone = await posts.get(made[1]!._id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(PlinthError);
    expect(gone).toMatchObject({ status: 404, code: 'document_not_found' });
    expect(await mine.withDeleted().count()).toBe(5);
    expect(await mine.count()).toBe(4);
    expect((await posts.restore(made[1]!._id)).views).toBe(10);
    expect(await mine.count()).toBe(5);
  });

  it('populate, search and aggregate', async () => {
    const c = client();
    const { user } = await c.auth.signUp({ email: uniqueEmail('pop'), password: PASSWORD });
    const posts = c.collection('posts');
    const word = `zebra${Date.now().toString(36)}`;
    const p = await posts.insert({ title: `the ${word} walks`, views: 3, author: user._id, status: 'published' });
    await posts.insert({ title: 'nothing here', views: 5, author: user._id, status: 'draft' });
    const populated = await posts.get(p._id, { populate: ['author'] });
    expect(populated.author).toMatchObject({ _id: user._id });
    const found = await posts.search(word).list();
    expect(found.items.map((d) => d._id)).toEqual([p._id]);
    const agg = await posts.where('userId', 'eq', user._id).aggregate({ groupBy: ['status'], count: true, sum: ['views'], sort: 'status' });
    expect(agg.groups).toEqual([
      { key: { status: 'draft' }, count: 1, sum: { views: 5 } },
      { key: { status: 'published' }, count: 1, sum: { views: 3 } },
    ]);
  });

  it('a batch is atomic; its failure names the operation', async () => {
    const c = client();
    await c.auth.signUp({ email: uniqueEmail('batch'), password: PASSWORD });
    const results = await c.batch([
      { op: 'create', collection: 'posts', data: { title: 'b1' } },
      { op: 'create', collection: 'posts', data: { title: 'b2' } },
    ]);
    expect(results.map((x) => x.op)).toEqual(['create', 'create']);
    const err = await c
      .batch([
        { op: 'update', collection: 'posts', id: results[0]!.id, data: { views: 1 } },
        { op: 'create', collection: 'posts', data: { title: 'bad', status: 'nope' as 'draft' } },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, details: { operation: 1 } });
    expect((await c.collection('posts').get(results[0]!.id)).views).toBeUndefined();
  });

  it('If-Match: two people editing one document, the stale save fails with PreconditionFailedError and writes nothing', async () => {
    const alice = client();
    await alice.auth.signUp({ email: uniqueEmail('ifmatch'), password: PASSWORD });
    const posts = alice.collection('posts');
    const made = await posts.insert({ title: 'draft', views: 1 });
    // Two editors read the same version: one from get (the server's ETag), one from a list item (derived).
    const { doc, etag } = await posts.getWithEtag(made._id);
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(etagOf(doc)).toBe(etag);
    expect(etagOf(made)).toBe(etag);
    const listed = (await posts.where({ userId: made.userId! }).list()).items.find((d) => d._id === made._id)!;
    expect(etagOf(listed)).toBe(etag);

    const first = await posts.update(made._id, { title: 'first editor' }, { ifMatch: etag });
    expect(first.title).toBe('first editor');
    const second = await posts.update(made._id, { title: 'second editor' }, { ifMatch: listed }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(PreconditionFailedError);
    expect(second).toBeInstanceOf(PlinthError);
    expect(second).toMatchObject({ status: 412, code: 'precondition_failed', etag: etagOf(first) });
    expect((await posts.get(made._id)).title).toBe('first editor');

    // Re-read, then the same edit goes through; deletes and restores take the condition too.
    const fresh = await posts.getWithEtag(made._id);
    expect(fresh.etag).toBe((second as PreconditionFailedError).etag);
    const retried = await posts.update(made._id, { title: 'second editor' }, { ifMatch: fresh.etag });
    expect(retried.title).toBe('second editor');
    await expect(posts.delete(made._id, { ifMatch: fresh.doc })).rejects.toBeInstanceOf(PreconditionFailedError);
    await posts.delete(made._id, { ifMatch: retried });
    const deleted = await posts.withDeleted().where({ userId: made.userId! }).list();
    const gone = deleted.items.find((d) => d._id === made._id)!;
    await expect(posts.restore(made._id, { ifMatch: retried })).rejects.toMatchObject({ code: 'precondition_failed' });
    expect((await posts.restore(made._id, { ifMatch: gone })).isDeleted).toBe(false);
    // '*' asks only that it exists.
    expect((await posts.update(made._id, { views: 2 }, { ifMatch: '*' })).views).toBe(2);
  });

  it('If-Match with two concurrent saves from the same version: exactly one wins', async () => {
    const c = client();
    await c.auth.signUp({ email: uniqueEmail('ifmatch2'), password: PASSWORD });
    const posts = c.collection('posts');
    const made = await posts.insert({ title: 'shared' });
    const results = await Promise.allSettled(['a', 'b', 'c'].map((title) => posts.update(made._id, { title }, { ifMatch: made })));
    expect(results.filter((x) => x.status === 'fulfilled')).toHaveLength(1);
    const lost = results.filter((x): x is PromiseRejectedResult => x.status === 'rejected').map((x) => x.reason as PlinthError);
    expect(lost.map((e) => e.code)).toEqual(['precondition_failed', 'precondition_failed']);
  });

  it('a write whose answer was lost is retried with the same Idempotency-Key: one document', async () => {
    const log: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
    let dropped = false;
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && String(input).endsWith('/api/data/posts') && !dropped) {
        dropped = true;
        await res.arrayBuffer();
        throw new TypeError('fetch failed'); // the server wrote; the answer never arrived
      }
      return res;
    };
    const c = client({ fetch: recordingFetch(log, lossy) });
    const { user } = await c.auth.signUp({ email: uniqueEmail('idem'), password: PASSWORD });
    const title = `once ${Date.now()}`;
    const doc = await c.collection('posts').insert({ title });
    const posts = log.filter((l) => l.method === 'POST' && l.path === '/api/data/posts');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers['idempotency-key']).toBeTruthy();
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    expect(await c.collection('posts').where({ userId: user._id, title }).count()).toBe(1);
    expect(doc.title).toBe(title);
  });

  it('every request names the client version', async () => {
    const log: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
    await client({ fetch: recordingFetch(log) }).collection('posts').limit(1).list();
    expect(log[0]!.headers['plinth-client']).toBe('0.1.0');
  });
});
