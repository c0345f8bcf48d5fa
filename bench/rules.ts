/**
 * Access rules (`npm run bench -- rules`, docs/rules.md): list and get by id with the publishable
 * key and a signed-in user, on 10 000 documents, under
 *
 * - a membership rule: `cards` readable by the members of their list,
 *   `@collection.members(list = $outer.list && user = @auth.id)`, with 1 000 members (1 000
 *   users, 100 lists of 10 members: each user sees 100 cards);
 * - today's owner rule: `notes`, a private collection (RLS mode `private`, owner field `owner`),
 *   each of 100 users owning 100 notes (each user sees 100 notes);
 * - no rule, for reference: the same cards collection read with the secret key.
 *
 * autocannon, 50 connections, from a separate process, random users and documents per request.
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createCollection } from '../src/modules/collections/service.js';
import { updateRules } from '../src/modules/rules/service.js';
import { makeProject, makeUserToken } from '../test/helpers/fixtures.js';
import { runBench } from './lib/bench-app.js';
import { load, type LoadRequest } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const DOCS = 10_000;
const LISTS = 100;
const MEMBERS = 1_000;
const VARIANTS = 500;
const hex = (prefix: string, n: number) => prefix + n.toString(16).padStart(24 - prefix.length, '0');

runBench('rules', { PLINTH_RUN_WORKER: 'false' }, async ({ app, ctx }) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const p = await makeProject(ctx);
  const members = await createCollection(ctx, p.id, 'pro', { name: 'members', fields: [{ key: 'list', type: 'String' }, { key: 'user', type: 'String' }] });
  const cards = await createCollection(ctx, p.id, 'pro', { name: 'cards', fields: [{ key: 'list', type: 'String' }, { key: 'text', type: 'String' }] });
  const notes = await createCollection(ctx, p.id, 'pro', {
    name: 'notes',
    fields: [{ key: 'owner', type: 'String' }, { key: 'text', type: 'String' }],
    rls: { enabled: true, mode: 'private', ownerField: 'owner' },
  });
  const user = (i: number) => hex('ee', i);
  // member m: user m, in list m % 100 (10 members a list); card g in list g % 100; note g owned by user g % 100
  await sql`INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${p.id}, ${members.id}, lpad(to_hex(g), 24, '0'), d, octet_length(d::text), now() - g * interval '1 second', now()
    FROM generate_series(0, ${MEMBERS - 1}) g, LATERAL (SELECT jsonb_build_object('list', 'list-' || (g % ${LISTS}), 'user', 'ee' || lpad(to_hex(g), 22, '0')) AS d) x`.execute(ctx.db.admin);
  await sql`INSERT INTO documents (project_id, collection_id, id, data, size_bytes, created_at, updated_at)
    SELECT ${p.id}, ${cards.id}, lpad(to_hex(g), 24, '0'), d, octet_length(d::text), now() - g * interval '1 second', now()
    FROM generate_series(0, ${DOCS - 1}) g, LATERAL (SELECT jsonb_build_object('list', 'list-' || (g % ${LISTS}), 'text', 'card ' || g) AS d) x`.execute(ctx.db.admin);
  await sql`INSERT INTO documents (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at)
    SELECT ${p.id}, ${notes.id}, 'aa' || lpad(to_hex(g), 22, '0'), d ->> 'owner', d, octet_length(d::text), now() - g * interval '1 second', now()
    FROM generate_series(0, ${DOCS - 1}) g, LATERAL (SELECT jsonb_build_object('owner', 'ee' || lpad(to_hex(g % ${LISTS}), 22, '0'), 'text', 'note ' || g) AS d) x`.execute(ctx.db.admin);
  const saved = await updateRules(ctx, p.id, 'cards', { list: '@collection.members(list = $outer.list && user = @auth.id)' });
  await updateRules(ctx, p.id, 'members', { list: 'user = @auth.id' });
  await sql`ANALYZE documents`.execute(ctx.db.admin);

  const tokens = new Map<number, string>();
  const headersOf = async (i: number) => {
    if (!tokens.has(i)) tokens.set(i, await makeUserToken(ctx, p, user(i), 3600));
    return { ...p.pk, authorization: `Bearer ${tokens.get(i)}` };
  };
  const variants = async (make: () => Promise<LoadRequest>) => Promise.all(Array.from({ length: VARIANTS }, make));
  // a card the user's list holds: card g with g % 100 == user % 100
  const cardOf = (u: number) => hex('', (Math.floor(Math.random() * (DOCS / LISTS)) * LISTS + (u % LISTS)));
  const noteOf = (u: number) => hex('aa', Math.floor(Math.random() * (DOCS / LISTS)) * LISTS + u);
  const scenarios: Array<[string, () => Promise<LoadRequest>]> = [
    ['list, membership rule (cards)', async () => { const u = Math.floor(Math.random() * MEMBERS); return { path: '/api/data/cards?limit=20', headers: await headersOf(u) }; }],
    ['list, owner rule (private notes)', async () => { const u = Math.floor(Math.random() * LISTS); return { path: '/api/data/notes?limit=20', headers: await headersOf(u) }; }],
    ['list, no rule (cards, secret key)', async () => ({ path: '/api/data/cards?limit=20', headers: p.sk })],
    ['get, membership rule (cards)', async () => { const u = Math.floor(Math.random() * MEMBERS); return { path: `/api/data/cards/${cardOf(u)}`, headers: await headersOf(u) }; }],
    ['get, owner rule (private notes)', async () => { const u = Math.floor(Math.random() * LISTS); return { path: `/api/data/notes/${noteOf(u)}`, headers: await headersOf(u) }; }],
    ['get, no rule (cards, secret key)', async () => ({ path: `/api/data/cards/${hex('', Math.floor(Math.random() * DOCS))}`, headers: p.sk })],
  ];
  // each list answers 20 of the user's 100 documents; every get finds its document
  const check = async (r: LoadRequest) => {
    const res = await app.inject({ method: 'GET', url: r.path, headers: r.headers });
    if (res.statusCode !== 200) throw new Error(`${r.path}: ${res.statusCode} ${res.body}`);
    const body = res.json();
    if (body.data?.items && body.data.items.length !== 20) throw new Error(`${r.path}: ${body.data.items.length} items`);
  };
  const rows: string[] = [];
  for (const [name, make] of scenarios) {
    const vs = await variants(make);
    for (const v of vs.slice(0, 5)) await check(v);
    // one at a time, in process: the latency of one request without queueing behind 49 others
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const v = vs[i % vs.length]!;
      const start = process.hrtime.bigint();
      await app.inject({ method: 'GET', url: v.path, headers: v.headers });
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const warm = times.slice(10).sort((x, y) => x - y);
    const a = await load({ url, seconds: SECONDS, variants: vs });
    rows.push(`| ${name} | ${warm[Math.floor(warm.length / 2)]!.toFixed(2)} | ${a.rps.toFixed(0)} | ${a.p50} / ${a.p99} | ${a.non2xx + a.errors} |`);
  }
  console.log(`\n${DOCS} documents a collection, ${MEMBERS} members in ${LISTS} lists, 50 connections, ${SECONDS} s per run, load from a separate process`);
  console.log(`rule warnings for cards: ${saved.warnings.map((w) => `${w.action} ${w.code}`).join(', ') || 'none'}\n`);
  console.log('| scenario | one at a time, p50 ms | req/s (50 connections) | p50 / p99 ms | non-2xx |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
});
