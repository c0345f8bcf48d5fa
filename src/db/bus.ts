/**
 * A small event bus over PostgreSQL LISTEN/NOTIFY, so every API node hears when a project's
 * keys or settings change (and drops its cached copy). No extra service needed.
 *
 * `publish` resolves only once every other node has handled the event: each node's listening
 * connection carries `application_name = plinth-bus:<nodeId>`, the publisher reads the live
 * peers from pg_stat_activity in the same statement that sends the notification, and waits for
 * each peer's acknowledgement (sent after its handlers ran). Hearing our own copy back is not
 * enough: PostgreSQL hands a notification to each listening backend separately, and a peer may
 * read its socket later than we do, so a rotated key could still pass there for a moment.
 *
 * A node that is not listening hears nothing, so its caches cannot be trusted: `listening`
 * turns false the moment the connection breaks (a PostgreSQL restart, a network cut caught by
 * the heartbeat), every `onReset` handler runs (the caches drop everything and stop keeping
 * entries), and the bus reconnects with backoff for as long as the node runs. Once it listens
 * again the handlers run once more (whatever was published in between was missed) and
 * caching resumes.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const CHANNEL = 'plinth_events';
const APP_PREFIX = 'plinth-bus:';
/** How long a publisher waits by default for a silent peer (a node that is hung or just starting). */
const ACK_TIMEOUT_MS = 2000;

export type BusEvent =
  | { type: 'project_changed'; id: string }
  /** A project wrote on a node (read replicas' read-your-writes window): position is its LSN. */
  | { type: 'project_wrote'; id: string; position: string | null }
  /** An operator left a project (removed, left, or their account deleted): their console streams of it end. */
  | { type: 'member_removed'; id: string; operatorId: string }
  /**
   * Sessions of an operator (id) ended: the listed families, or every family but `except` when
   * `sessions` is null. Their console streams end on every node.
   */
  | { type: 'operator_sessions_ended'; id: string; sessions: string[] | null; except: string | null };

export interface BusOptions {
  /** How long `publish` waits for a silent peer. */
  ackTimeoutMs?: number;
  /** How often the listening connection is probed, and how long a probe may take. */
  heartbeatMs?: number;
  /** Reconnection backoff: first delay, doubled up to the maximum. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Told when the listener is lost and when it is back after a loss (for logs and metrics). */
  onStateChange?: (listening: boolean, err?: Error) => void;
}

export interface Bus {
  publish(event: BusEvent): Promise<void>;
  /**
   * Tells the other nodes without waiting for their acknowledgement: resolves once the
   * notification is sent (PostgreSQL hands it to every listener at its commit).
   */
  announce(event: BusEvent): Promise<void>;
  subscribe(fn: (event: BusEvent) => void): void;
  /** Runs when the node may have missed events: drop everything cached from other nodes' data. */
  onReset(fn: () => void): void;
  /** Whether this node hears every event now; caches must not serve or keep entries otherwise. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** What travels on the channel: an event from a node, or a node's acknowledgement of one. */
type Wire =
  | { kind: 'event'; event: BusEvent; nonce: string; from: string }
  | { kind: 'ack'; nonce: string; from: string }
  | { kind: 'note'; event: BusEvent; from: string };

interface Pending {
  acked: Set<string>;
  peers: string[] | null;
  done: () => void;
}

/** Before acknowledgements, events went out bare (`{type, id, nonce}`). */
function isLegacyEvent(msg: unknown): msg is BusEvent {
  const m = msg as Partial<BusEvent> & { kind?: unknown };
  return m.kind === undefined && m.type === 'project_changed' && typeof m.id === 'string';
}

const PUBLISH_SQL = `
  SELECT pg_notify($1, $2),
         (SELECT coalesce(array_agg(substr(application_name, ${APP_PREFIX.length + 1})), '{}')
            FROM pg_stat_activity
           WHERE datname = current_database()
             AND application_name LIKE '${APP_PREFIX}%'
             AND application_name <> $3) AS peers`;

export async function createBus(databaseUrl: string, pool: pg.Pool, options: BusOptions = {}): Promise<Bus> {
  const ackTimeoutMs = options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
  const heartbeatMs = options.heartbeatMs ?? 5000;
  const reconnectMinMs = options.reconnectMinMs ?? 100;
  const reconnectMaxMs = options.reconnectMaxMs ?? 5000;
  const nodeId = randomUUID();
  const handlers: Array<(e: BusEvent) => void> = [];
  const resetHandlers: Array<() => void> = [];
  const pending = new Map<string, Pending>();
  let closed = false;
  let client: pg.Client | null = null;
  let heartbeat: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let backoff = reconnectMinMs;
  let everLost = false;

  const runHandlers = (event: BusEvent) => {
    for (const h of handlers) h(event);
  };
  const reset = () => {
    for (const h of resetHandlers) h();
  };
  const settleIfComplete = (p: Pending) => {
    if (p.peers && p.peers.every((peer) => p.acked.has(peer))) p.done();
  };
  const sendAck = (nonce: string) => {
    const ack: Wire = { kind: 'ack', nonce, from: nodeId };
    pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(ack)]).catch(() => {});
  };

  const receive = (payload?: string) => {
    let msg: Wire;
    try {
      msg = JSON.parse(payload ?? '') as Wire;
    } catch {
      return; // not ours
    }
    if (typeof msg !== 'object' || msg === null) return;
    if (msg.from === nodeId) return; // our own event: handled when published
    if (isLegacyEvent(msg)) return runHandlers(msg); // from a node not yet upgraded
    if (msg.kind === 'event') {
      runHandlers(msg.event);
      sendAck(msg.nonce);
    } else if (msg.kind === 'note') {
      runHandlers(msg.event);
    } else if (msg.kind === 'ack') {
      const p = pending.get(msg.nonce);
      if (p) {
        p.acked.add(msg.from);
        settleIfComplete(p);
      }
    }
  };

  /** The listener is gone (error, end, failed heartbeat): stop trusting caches, then retry. */
  const lost = (c: pg.Client, err?: Error) => {
    if (client !== c) return; // an old connection's late error
    client = null;
    everLost = true;
    clearInterval(heartbeat);
    c.removeAllListeners('notification');
    c.on('error', () => {}); // a broken client may still emit; nobody listens any more
    c.end().catch(() => {});
    reset();
    options.onStateChange?.(false, err);
    scheduleReconnect();
  };

  const scheduleReconnect = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        () => (backoff = reconnectMinMs),
        () => {
          backoff = Math.min(backoff * 2, reconnectMaxMs);
          scheduleReconnect();
        },
      );
    }, backoff);
    retry.unref();
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: databaseUrl, application_name: APP_PREFIX + nodeId, keepAlive: true });
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    c.on('notification', (msg) => receive(msg.payload));
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      c.removeAllListeners();
      c.on('error', () => {});
      await c.end().catch(() => {});
      throw err;
    }
    if (closed) return void (await c.end().catch(() => {}));
    client = c;
    // Events published while nobody listened here were missed: forget what is cached.
    reset();
    if (everLost) options.onStateChange?.(true);
    heartbeat = setInterval(() => probe(c), heartbeatMs);
    heartbeat.unref();
  }

  /** A connection cut without a FIN (a dead peer, a network partition) is found by its silence. */
  const probe = (c: pg.Client) => {
    const timeout = setTimeout(() => lost(c, new Error('bus heartbeat timed out')), heartbeatMs);
    c.query('SELECT 1').then(
      () => clearTimeout(timeout),
      (err: Error) => {
        clearTimeout(timeout);
        lost(c, err);
      },
    );
  };

  await connect();

  async function publish(event: BusEvent): Promise<void> {
    runHandlers(event); // this node first, synchronously
    const nonce = randomUUID();
    const p: Pending = { acked: new Set(), peers: null, done: () => {} };
    let timer: NodeJS.Timeout | undefined;
    const settled = new Promise<void>((resolve) => {
      p.done = resolve;
      // Without our own listener no acknowledgement can reach us: do not wait for one.
      timer = setTimeout(resolve, client ? ackTimeoutMs : 0);
    });
    pending.set(nonce, p);
    try {
      const wire: Wire = { kind: 'event', event, nonce, from: nodeId };
      const { rows } = await pool.query<{ peers: string[] }>(PUBLISH_SQL, [CHANNEL, JSON.stringify(wire), APP_PREFIX + nodeId]);
      p.peers = rows[0]!.peers;
      settleIfComplete(p);
      await settled;
    } finally {
      clearTimeout(timer);
      pending.delete(nonce);
    }
  }

  async function announce(event: BusEvent): Promise<void> {
    const wire: Wire = { kind: 'note', event, from: nodeId };
    await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(wire)]);
  }

  return {
    publish,
    announce,
    subscribe(fn) {
      handlers.push(fn);
    },
    onReset(fn) {
      resetHandlers.push(fn);
    },
    get listening() {
      return client !== null;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners('end');
        c.removeAllListeners('error');
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
    },
  };
}
