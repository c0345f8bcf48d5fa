/**
 * The node's reader of the change stream: one poller per API node, whatever the number of
 * subscribers, fanning each batch of changes out in memory to the subscribers of the
 * changes' projects. Every node reads the stream itself, so a write on any node reaches a
 * subscriber on any other. No `NOTIFY` per write (it would serialise commits cluster-wide).
 *
 * Idle (no subscriber), it does not poll. When the first subscriber comes it starts at the
 * stream's present; a subscriber resuming from an older event catches up from the database,
 * up to the database's present (`join`), before it takes live events.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Logger } from 'pino';
import type { CollectionDef } from '../collections/cache.js';
import { positionOf, readRuleNeedsDatabase } from './event.js';
import { after, compare, formatPosition, type Position } from './position.js';
import { changesAfter, horizon, projectChangesBetween, watermark, type ChangeRow } from './queries.js';
import { joinFrames } from './frames.js';
import { definitionKey, frameFor, shapeKey, type Definitions, type Subscriber, type Viewer } from './subscriber.js';

const BATCH = 1000;
/**
 * Heartbeats go out in this many slices of the interval, a slice of the streams each: one
 * timer for the node, and never a write to every socket in one tick (which would hold back
 * the events of that moment).
 */
const HEARTBEAT_SLICES = 16;

/**
 * The streams of a project that see every event alike (subscriber.ts, shapeKey): a batch is
 * judged and serialized once for them, and the same bytes go to each (frames.ts). Its scope
 * and subscriptions are its first stream's; its verdicts are the feed's for the batch.
 */
interface Shape extends Viewer {
  readonly key: string;
  readonly members: Set<Subscriber>;
}

/** A string's characters in one piece (V8 keeps a concatenation as a tree of its parts until it is flattened). */
const flat = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

/** A project's open streams on this node, by shape. */
class ProjectStreams {
  count = 0;
  readonly shapes = new Map<string, Shape>();

  *subscribers(): Generator<Subscriber> {
    for (const shape of this.shapes.values()) yield* shape.members;
  }
}

export interface FeedOptions {
  db: Kysely<Database>;
  pollMs: number;
  /** A comment line to every open stream this often (proxies keep it open); one timer for all streams. */
  heartbeatMs?: number;
  log: Logger;
  /** A collection's current definition (the node's collection cache). */
  collection: (projectId: string, name: string) => Promise<CollectionDef | null>;
  /**
   * The changes (of one collection) a publishable caller's read rule admits, judged in the
   * database in the caller's tenant scope, for a rule that needs it (a lookup, `@auth.<field>`):
   * their positions. Without it such changes reach nobody but the secret key.
   */
  readable?: (scope: { projectId: string; userId: string | null; claims?: string | null }, collectionId: string, readSql: string, rows: ChangeRow[]) => Promise<Set<string>>;
}

export class ChangeFeed {
  private position: Position | null = null;
  private readonly byProject = new Map<string, ProjectStreams>();
  /** Each stream's shape (the key string is kept once, on the shape). */
  private readonly shapeOf = new WeakMap<Subscriber, Shape>();
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly heartbeatSlices: Array<Set<Subscriber>> = Array.from({ length: HEARTBEAT_SLICES }, () => new Set());
  private heartbeatTick = 0;
  private nextSlice = 0;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Polls that failed in a row (the database away): logged once, retried at the same pace. */
  private failures = 0;

  constructor(private readonly opts: FeedOptions) {}

  /** Open streams of a project on this node. */
  streamsOf(projectId: string): number {
    return this.byProject.get(projectId)?.count ?? 0;
  }

  /** Every project with open streams on this node, and how many (the usage history's peaks). */
  *openStreams(): IterableIterator<[string, number]> {
    for (const [projectId, set] of this.byProject) yield [projectId, set.count];
  }

  /**
   * Adds a subscriber: from `from` (its Last-Event-ID) when given, else from now. When changes
   * after `from` were already removed by retention, the client gets `reset` (it must reload)
   * and continues from now. The subscriber is registered before anything is awaited, so the
   * events dispatched meanwhile are held for it, not lost; it gets `ready` when it is live.
   */
  async join(sub: Subscriber, from: Position | null): Promise<'resumed' | 'reset' | 'joined'> {
    if (this.position === null) {
      const present = await watermark(this.opts.db);
      this.position ??= present;
    }
    const live = this.position;
    sub.position = live;
    this.add(sub);
    this.schedule();
    let outcome: 'resumed' | 'reset' | 'joined' = 'joined';
    if (from) outcome = compare(from, await horizon(this.opts.db)) < 0 ? 'reset' : 'resumed';
    if (outcome === 'reset') sub.notice('reset', { reason: 'The stream no longer holds the changes since your last event; reload your data.' });
    if (outcome === 'resumed') {
      // Catch up to the database's present, not to where this node's feed last read: a change
      // committed since the feed's last poll is one the client missed too, so it comes before
      // `ready`. The feed's next polls re-read those changes; the subscriber drops every event
      // at or below its position, so none is sent twice or out of order.
      const present = await watermark(this.opts.db);
      const until = compare(present, live) > 0 ? present : live;
      // an id beyond the present (not one we sent) must not hide the events still to come
      sub.position = compare(from!, until) < 0 ? from! : until;
      await this.catchUp(sub, until);
      if (sub.isOpen) sub.position = until; // every final change of the project up to `until` is sent
    }
    sub.notice('ready', { subscriptions: sub.subscriptions.map((s) => s.collection) });
    sub.goLive(await this.definitions([], sub));
    return outcome;
  }

  leave(sub: Subscriber): void {
    const streams = this.byProject.get(sub.projectId);
    const shape = this.shapeOf.get(sub);
    if (!streams || !shape || !shape.members.delete(sub)) return;
    this.shapeOf.delete(sub);
    for (const slice of this.heartbeatSlices) slice.delete(sub);
    streams.count--;
    if (shape.members.size === 0) streams.shapes.delete(shape.key);
    if (streams.count === 0) this.byProject.delete(sub.projectId);
  }

  /**
   * Ends the console streams an operator opened on a project (their membership ended): a
   * `revoked` notice, then the stream closes; its ticket no longer opens another (service.ts).
   */
  closeOperatorStreams(projectId: string, operatorId: string): number {
    const subs = this.byProject.get(projectId)?.subscribers() ?? [];
    return revoke(subs, (sub) => sub.scope.operatorId === operatorId, 'Your access to this project has ended.');
  }

  /**
   * Ends an operator's console streams opened under sessions that ended (`sessions`, or every
   * session but `except` when null), on whatever project: a `revoked` notice, then the stream closes.
   */
  closeOperatorSessionStreams(operatorId: string, sessions: readonly string[] | null, except: string | null): number {
    const ended = (sid: string | null | undefined) => (sessions ? !!sid && sessions.includes(sid) : !sid || sid !== except);
    const subs = [...this.byProject.values()].flatMap((streams) => [...streams.subscribers()]);
    return revoke(subs, (sub) => sub.scope.operatorId === operatorId && ended(sub.scope.operatorSessionId), 'Your session has ended; sign in again.');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.running;
    for (const streams of this.byProject.values()) for (const sub of [...streams.subscribers()]) sub.close();
    this.byProject.clear();
    for (const slice of this.heartbeatSlices) slice.clear();
  }

  private add(sub: Subscriber): void {
    let streams = this.byProject.get(sub.projectId);
    if (!streams) this.byProject.set(sub.projectId, (streams = new ProjectStreams()));
    const key = shapeKey(sub.scope, sub.subscriptions);
    let shape = streams.shapes.get(key);
    // flattened: a key built by concatenation is a tree of string pieces, kept as long as the shape
    if (!shape) streams.shapes.set(key, (shape = { key: flat(key), scope: sub.scope, subscriptions: sub.subscriptions, verdicts: new Map(), members: new Set() }));
    if (shape.members.has(sub)) return;
    shape.members.add(sub);
    this.shapeOf.set(sub, shape);
    streams.count++;
    // the shape's compiled filters serve every stream of it (the same filters, compiled against the same definitions)
    sub.subscriptions = shape.subscriptions;
    this.heartbeatSlices[this.nextSlice++ % HEARTBEAT_SLICES]!.add(sub);
    this.beat();
  }

  /**
   * One heartbeat timer for every stream of the node, while there are any: each tick pings one
   * slice of the streams, so each stream gets a comment line every `heartbeatMs`.
   */
  private beat(): void {
    const every = this.opts.heartbeatMs;
    if (!every || this.heartbeat || this.stopped) return;
    this.heartbeat = setInterval(() => {
      if (this.byProject.size === 0) {
        clearInterval(this.heartbeat!);
        this.heartbeat = null;
        return;
      }
      for (const sub of this.heartbeatSlices[this.heartbeatTick++ % HEARTBEAT_SLICES]!) sub.heartbeat();
    }, Math.max(1, Math.floor(every / HEARTBEAT_SLICES)));
    this.heartbeat.unref();
  }

  /** The gap (from the subscriber's position to where live events start), page by page. */
  private async catchUp(sub: Subscriber, until: Position): Promise<void> {
    while (sub.isOpen && after(until, sub.position)) {
      const rows = await projectChangesBetween(this.opts.db, sub.projectId, sub.position, until, BATCH);
      if (rows.length === 0) return;
      const defs = await this.definitions(rows, sub);
      await this.judge([sub], rows, defs);
      sub.send(rows, defs);
      if (rows.length < BATCH) return;
    }
  }

  /**
   * The next poll `pollMs` after the start of the last one, not after its end: a batch that
   * takes long to fan out (thousands of sockets) does not add its own time to the wait of the
   * changes committed meanwhile; a poll that overran starts the next at once.
   */
  private schedule(delay = this.opts.pollMs): void {
    if (this.stopped || this.timer || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const started = performance.now();
      this.running = this.poll().finally(() => {
        this.running = null;
        if (this.byProject.size > 0) this.schedule(Math.max(0, this.opts.pollMs - (performance.now() - started)));
        else this.position = null; // idle: the next subscriber starts from the present
      });
    }, delay);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      for (;;) {
        const from = this.position!;
        const rows = await changesAfter(this.opts.db, from, BATCH);
        if (rows.length > 0) {
          this.position = positionOf(rows[rows.length - 1]!);
          await this.dispatch(rows);
        }
        if (rows.length < BATCH || this.stopped) break;
      }
      if (this.failures > 0) this.opts.log.info('realtime: reading the change stream again');
      this.failures = 0;
    } catch (err) {
      if (this.failures++ === 0) this.opts.log.warn({ err }, 'realtime: cannot read the change stream; retrying');
    }
  }

  private async dispatch(rows: ChangeRow[]): Promise<void> {
    const byProject = new Map<string, ChangeRow[]>();
    for (const row of rows) {
      if (!this.byProject.has(row.project_id)) continue;
      const list = byProject.get(row.project_id);
      if (list) list.push(row);
      else byProject.set(row.project_id, [row]);
    }
    for (const [projectId, list] of byProject) {
      const streams = this.byProject.get(projectId);
      const anyone = streams?.subscribers().next().value;
      if (!streams || !anyone) continue;
      const defs = await this.definitions(list, anyone);
      // Live streams that have none of the batch yet take it whole, as their shape sees it;
      // the others (catching up, or just joined) one by one, judged for each.
      const first = positionOf(list[0]!);
      const whole: Array<{ shape: Shape; members: Subscriber[] }> = [];
      const single: Subscriber[] = [];
      for (const shape of streams.shapes.values()) {
        const members: Subscriber[] = [];
        for (const sub of shape.members) {
          if (sub.takesWhole(first)) members.push(sub);
          else if (sub.isOpen) single.push(sub);
        }
        if (members.length > 0) whole.push({ shape, members });
      }
      await this.judge([...whole.map((w) => w.shape), ...single], list, defs);
      const last = positionOf(list[list.length - 1]!);
      for (const { shape, members } of whole) {
        const frames = joinFrames(this.framesOf(shape, list, defs));
        for (const sub of members) sub.deliver(frames, last);
      }
      for (const sub of single) sub.offer(list, defs);
    }
  }

  /** The frames a shape sees of a batch, in order (its verdicts used up). */
  private framesOf(shape: Shape, rows: ChangeRow[], defs: Definitions): Buffer[] {
    const parts: Buffer[] = [];
    for (const row of rows) {
      let verdict: boolean | undefined;
      if (shape.verdicts.size > 0) {
        const id = formatPosition(positionOf(row));
        verdict = shape.verdicts.get(id);
        shape.verdicts.delete(id);
      }
      const def = defs.get(definitionKey(row.project_id, row.collection));
      if (!def) continue;
      const frame = frameFor(shape, row, def, verdict);
      if (frame) parts.push(frame);
    }
    return parts;
  }

  /**
   * The verdicts of collections whose read rule needs the database (docs/rules.md): for each
   * publishable subscriber of such a collection, one query per signed-in user (or anonymous
   * caller) and collection for the whole batch, shared by that user's streams. A query that
   * fails leaves no verdict: the change is not sent (fail closed), and the error is logged.
   */
  private async judge(subs: Viewer[], rows: ChangeRow[], defs: Definitions): Promise<void> {
    const readable = this.opts.readable;
    const judged = new Map<string, { def: CollectionDef; rows: ChangeRow[] }>();
    for (const row of rows) {
      const name = row.collection.toLowerCase();
      const def = defs.get(definitionKey(row.project_id, name));
      if (!def || !readRuleNeedsDatabase(def)) continue;
      const entry = judged.get(name);
      if (entry) entry.rows.push(row);
      else judged.set(name, { def, rows: [row] });
    }
    if (judged.size === 0) return;
    const answers = new Map<string, Promise<Set<string> | null>>();
    for (const sub of subs) {
      if (sub.scope.keyKind !== 'publishable') continue;
      for (const [name, { def, rows: changes }] of judged) {
        if (!sub.subscriptions.some((s) => s.collection === name)) continue;
        const readSql = def.rules_sql?.view ?? def.rules_sql?.list;
        if (!readable || !readSql) continue;
        // Subscribers of one user with different claims (two tokens) are judged apart.
        const key = `${sub.scope.userId ?? ''}\u0000${name}\u0000${sub.scope.claims ?? ''}`;
        let answer = answers.get(key);
        if (!answer) {
          answer = readable({ projectId: sub.scope.projectId, userId: sub.scope.userId, claims: sub.scope.userId ? sub.scope.claims ?? null : null }, def.id, readSql, changes).catch((err: unknown) => {
            this.opts.log.warn({ err, collection: def.name }, 'realtime: could not judge a read rule; the changes are not sent');
            return null;
          });
          answers.set(key, answer);
        }
        const admitted = await answer;
        for (const row of changes) sub.verdicts.set(formatPosition(positionOf(row)), admitted?.has(formatPosition(positionOf(row))) === true);
      }
    }
  }

  /** The current definitions of the collections `rows` touch (and those `sub` subscribes to). */
  private async definitions(rows: ChangeRow[], sub: Subscriber): Promise<Definitions> {
    const defs = new Map<string, CollectionDef | null>();
    const names = new Set([...rows.map((r) => r.collection), ...sub.subscriptions.map((s) => s.collection)]);
    for (const name of names) {
      defs.set(definitionKey(sub.projectId, name), await this.opts.collection(sub.projectId, name));
    }
    return defs;
  }
}

/** Ends the matching console streams: a `revoked` notice with the reason, then the stream closes. */
function revoke(subs: Iterable<Subscriber>, matches: (sub: Subscriber) => boolean, reason: string): number {
  let closed = 0;
  // A copy first: closing a stream leaves the feed's sets being iterated.
  for (const sub of [...subs]) {
    if (!matches(sub)) continue;
    sub.notice('revoked', { reason });
    sub.close();
    closed++;
  }
  return closed;
}
