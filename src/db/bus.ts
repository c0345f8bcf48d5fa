/**
 * A small event bus over PostgreSQL LISTEN/NOTIFY, so every API node hears at once when a
 * project's keys or settings change (and drops its cached copy). No extra service needed.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const CHANNEL = 'plinth_events';

export interface BusEvent {
  type: 'project_changed';
  id: string;
  /** Set by publish: lets the publisher see its own event come back through PostgreSQL. */
  nonce?: string;
}

export interface Bus {
  publish(event: BusEvent): Promise<void>;
  subscribe(fn: (event: BusEvent) => void): void;
  close(): Promise<void>;
}

export async function createBus(databaseUrl: string, pool: pg.Pool): Promise<Bus> {
  const handlers: Array<(e: BusEvent) => void> = [];
  const echoes = new Map<string, () => void>();
  let closed = false;
  let client: pg.Client | null = null;

  const deliver = (payload?: string) => {
    if (!payload) return;
    try {
      const event = JSON.parse(payload) as BusEvent;
      for (const h of handlers) h(event);
      if (event.nonce) echoes.get(event.nonce)?.();
    } catch {
      /* ignore malformed payloads */
    }
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('notification', (msg) => deliver(msg.payload));
    c.on('error', () => {
      client = null;
      if (!closed) setTimeout(() => void connect().catch(() => {}), 1000).unref();
    });
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
  }
  await connect();

  return {
    async publish(event) {
      deliver(JSON.stringify(event)); // this node first, synchronously
      // PostgreSQL hands a notification to every listening node at the same moment; waiting
      // for our own copy to come back means the others have it too before we answer.
      const nonce = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const echoed = new Promise<void>((resolve) => {
        echoes.set(nonce, resolve);
        timer = setTimeout(resolve, client ? 2000 : 0);
      });
      try {
        await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ ...event, nonce })]);
        await echoed;
      } finally {
        clearTimeout(timer);
        echoes.delete(nonce);
      }
    },
    subscribe(fn) {
      handlers.push(fn);
    },
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
