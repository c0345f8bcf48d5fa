/**
 * Threat: a rotated key or changed setting still honoured by another API node because its
 * cache has not heard of the change yet. `publish` must not resolve before every live peer has
 * run its handlers, and a node that never answers must not hang the publisher.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus, type BusEvent } from '../../src/db/bus.js';
import { createTestEnv, type TestEnv } from '../helpers/context.js';

let env: TestEnv;
let pool: pg.Pool;
const buses: Bus[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  pool = new pg.Pool({ connectionString: env.databaseUrl, max: 4 });
});
afterAll(async () => {
  for (const b of buses) await b.close();
  for (const c of clients) await c.end();
  await pool.end();
  await env.close();
});

async function bus(ackTimeoutMs?: number): Promise<Bus> {
  const b = await createBus(env.databaseUrl, pool, { ackTimeoutMs });
  buses.push(b);
  return b;
}

/** A peer that listens like a node but acknowledges only when the test says so. */
async function manualPeer(): Promise<{ received: Promise<{ nonce: string }>; ack(nonce: string): Promise<void> }> {
  const c = new pg.Client({ connectionString: env.databaseUrl, application_name: 'plinth-bus:manual-peer' });
  clients.push(c);
  await c.connect();
  await c.query('LISTEN plinth_events');
  const received = new Promise<{ nonce: string }>((resolve) =>
    c.on('notification', (m) => {
      const msg = JSON.parse(m.payload!);
      if (msg?.kind === 'event') resolve(msg);
    }),
  );
  const ack = async (nonce: string) => {
    await c.query('SELECT pg_notify($1, $2)', ['plinth_events', JSON.stringify({ kind: 'ack', nonce, from: 'manual-peer' })]);
  };
  return { received, ack };
}

const event: BusEvent = { type: 'project_changed', id: 'p1' };

describe('bus publish waits for every peer', () => {
  it('resolves only after the other node has run its handlers', async () => {
    const [a, b] = [await bus(), await bus()];
    const seenByB: string[] = [];
    b.subscribe((e) => seenByB.push(e.id));
    const seenByA: string[] = [];
    a.subscribe((e) => seenByA.push(e.id));
    await a.publish(event);
    expect(seenByB).toEqual(['p1']);
    expect(seenByA).toEqual(['p1']); // the publisher's own handlers run once, not again on the echo
    await b.close();
  });

  it('does not resolve until a slow peer acknowledges', async () => {
    const a = await bus();
    const peer = await manualPeer();
    let resolved = false;
    const publishing = a.publish(event).then(() => (resolved = true));
    const { nonce } = await peer.received;
    await new Promise((r) => setTimeout(r, 150));
    expect(resolved).toBe(false);
    await peer.ack(nonce);
    await publishing;
    expect(resolved).toBe(true);
    await clients.pop()!.end();
  });

  it('gives up on a peer that never answers after the timeout instead of hanging', async () => {
    const a = await bus(300);
    await manualPeer();
    const started = Date.now();
    await a.publish(event);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('still evicts on a bare event from a node that has not been upgraded yet', async () => {
    const a = await bus();
    const seen: string[] = [];
    a.subscribe((e) => seen.push(e.id));
    await pool.query('SELECT pg_notify($1, $2)', ['plinth_events', JSON.stringify({ type: 'project_changed', id: 'old-node', nonce: 'n1' })]);
    await pool.query('SELECT pg_notify($1, $2)', ['plinth_events', 'null']);
    for (let i = 0; i < 40 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(seen).toEqual(['old-node']);
  });
});
