/**
 * One open realtime stream (Server-Sent Events): its scope, its compiled subscriptions, where
 * it is in the change stream, and the socket it writes to. A subscriber first catches up from
 * the database (a resume with `Last-Event-ID`), holding back live events meanwhile, then only
 * takes live events from its node's feed; every event below its position is skipped, so a
 * change is sent once. An update that takes a document out of the stream's filters is sent as
 * `leave` with its id, and so is one that takes a document out of the collection's read rule
 * for this caller (docs/rules.md). A client too slow to read (more than MAX_BUFFERED bytes waiting) is
 * disconnected: it resumes from its last event id, losing nothing.
 */
import type { ServerResponse } from 'node:http';
import type { CollectionDef } from '../collections/cache.js';
import { candidateOf, mayRead, mayReadBefore, positionOf, previousCandidateOf } from './event.js';
import { changeFrame, HEARTBEAT, joinFrames, leaveFrame, noticeFrame, Wire, type Frames } from './frames.js';
import type { Match } from './match.js';
import { after, formatPosition, type Position } from './position.js';
import type { ChangeRow } from './queries.js';
import type { TicketClaims } from './ticket.js';

export const MAX_BUFFERED = 1024 * 1024;
const FLUSH_BYTES = 64 * 1024;

export interface CompiledSubscription {
  /** The collection's name, lower-cased (names are case-insensitive). */
  collection: string;
  match: Match;
  /** The subscription's filter as written (JSON), and the definition it was compiled against: with the scope, its shape (shapeKey). */
  filter: string;
  definition: CollectionDef;
}

/** The collection definitions an event needs, by `projectId:lower-cased name`. */
export type Definitions = ReadonlyMap<string, CollectionDef | null>;
export const definitionKey = (projectId: string, collection: string) => `${projectId}:${collection.toLowerCase()}`;

/**
 * Who sees events, and what: a scope and its compiled subscriptions, with the feed's verdicts
 * on changes whose read rule needs the database (by position, feed.ts). A stream, or a shape:
 * the streams that would see every event alike (shapeKey).
 */
export interface Viewer {
  readonly scope: TicketClaims;
  readonly subscriptions: CompiledSubscription[];
  readonly verdicts: Map<string, boolean>;
}

const definitionIds = new WeakMap<CollectionDef, number>();
let nextDefinitionId = 0;

/**
 * What decides the events a stream sees, as a key: streams with the same key see every change
 * alike (the same frame, or none), so the feed judges and serializes each batch once per key.
 * The key kind; for a publishable key the end user and their token's custom claims (read
 * rules on `@auth.*`, private collections); the subscriptions (collection, filter as written,
 * and the definition they were compiled against). Not the operator, the token's expiry or the
 * position: those do not change what an event looks like.
 */
export function shapeKey(scope: TicketClaims, subscriptions: readonly CompiledSubscription[]): string {
  const who = scope.keyKind === 'secret' ? 'sk' : `pk\u0000${scope.userId ?? ''}\u0000${scope.claims ?? ''}`;
  const what = subscriptions.map((s) => {
    let id = definitionIds.get(s.definition);
    if (id === undefined) definitionIds.set(s.definition, (id = nextDefinitionId++));
    return `${s.collection}\u0000${id}\u0000${s.filter}`;
  });
  return `${scope.projectId}\u0001${who}\u0001${what.join('\u0001')}`;
}

/**
 * The frame `viewer` gets for a change: the change, its `leave`, or nothing. The same for
 * every viewer of one shape; the Buffer is built once per row (frames.ts).
 */
export function frameFor(viewer: Viewer, row: ChangeRow, def: CollectionDef, verdict: boolean | undefined): Buffer | null {
  if (!mayRead(viewer.scope, def, row, verdict)) return lostSight(viewer, row, def) ? leaveFrame(row, def.name) : null;
  if (matches(viewer, row)) return changeFrame(row, def.name);
  if (left(viewer, row)) return leaveFrame(row, def.name);
  return null;
}

/**
 * An update that took the document out of this stream's filters: it matched one of them
 * before and matches none now, so the client drops its copy. When the previous version is
 * unknown (previousCandidateOf) it says `leave` anyway: dropping a document the client does
 * not hold is harmless, keeping a stale one is not.
 */
function left(viewer: Viewer, row: ChangeRow): boolean {
  if (row.action !== 'update') return false;
  const name = row.collection.toLowerCase();
  const subs = viewer.subscriptions.filter((s) => s.collection === name);
  if (subs.length === 0) return false;
  const before = previousCandidateOf(row);
  return before === null || subs.some((s) => s.match(before));
}

/**
 * An update that took the document out of the collection's read rule for this caller
 * (docs/rules.md): the version before was readable and in this stream's filters, the new one
 * is not readable. The client drops its copy, as for a filter. A document that comes into
 * the rule arrives as an ordinary `update` with its body.
 */
function lostSight(viewer: Viewer, row: ChangeRow, def: CollectionDef): boolean {
  if (row.action !== 'update') return false;
  const before = previousCandidateOf(row);
  if (before === null || !mayReadBefore(viewer.scope, def, before)) return false;
  const name = row.collection.toLowerCase();
  return viewer.subscriptions.some((s) => s.collection === name && s.match(before));
}

function matches(viewer: Viewer, row: ChangeRow): boolean {
  const name = row.collection.toLowerCase();
  const doc = candidateOf(row);
  // a document too large to carry is announced without its body to every subscriber of the
  // collection (its filters cannot be judged); the client reads it by id, under the usual rules
  return viewer.subscriptions.some((s) => s.collection === name && (row.truncated || s.match(doc)));
}

export class Subscriber implements Viewer {
  private held: ChangeRow[] | null = [];
  private closed = false;
  private readonly wire: Wire;
  /**
   * The feed's verdicts on changes of collections whose read rule needs the database, by
   * position, judged in this stream's scope before the changes are offered one by one (while
   * it catches up, feed.ts); each is dropped once its change is sent or skipped. A live stream
   * takes its shape's verdicts instead.
   */
  readonly verdicts = new Map<string, boolean>();

  constructor(
    readonly scope: TicketClaims,
    /** Its compiled subscriptions; the feed swaps in its shape's (the same filters and definitions). */
    public subscriptions: CompiledSubscription[],
    private readonly res: ServerResponse,
    /** The last position this client has (its Last-Event-ID, or where it joined). */
    public position: Position,
  ) {
    this.wire = new Wire(res);
  }

  get projectId(): string {
    return this.scope.projectId;
  }

  get isOpen(): boolean {
    return !this.closed && !this.res.destroyed;
  }

  /** Live, and before `pos`: takes a batch starting at `pos` whole, as its shape sees it (feed.ts). */
  takesWhole(pos: Position): boolean {
    return this.held === null && this.isOpen && after(pos, this.position);
  }

  /** Opens the direct path to the socket once the headers are out (frames.ts, Wire). */
  started(): void {
    this.wire.direct();
  }

  /** Live events from the feed: held back while catching up, else sent. */
  offer(rows: ChangeRow[], defs: Definitions): void {
    if (this.held) this.held.push(...rows);
    else this.send(rows, defs);
  }

  /** Ends the catch-up: sends the events held back meanwhile, then goes live. */
  goLive(defs: Definitions): void {
    const held = this.held ?? [];
    this.held = null;
    this.send(held, defs);
  }

  /**
   * Sends the rows this client may see and has not had yet, in order, judged for this stream
   * alone (a catch-up, or a stream that joined mid-batch); in writes of about FLUSH_BYTES, so a
   * long catch-up that outruns the client is cut at MAX_BUFFERED as before, not a page later.
   */
  send(rows: ChangeRow[], defs: Definitions): void {
    let parts: Buffer[] = [];
    let size = 0;
    for (const row of rows) {
      if (size >= FLUSH_BYTES) {
        this.write(joinFrames(parts)!);
        parts = [];
        size = 0;
      }
      if (!this.isOpen) return;
      const pos = positionOf(row);
      let verdict: boolean | undefined;
      if (this.verdicts.size > 0) {
        const id = formatPosition(pos);
        verdict = this.verdicts.get(id);
        this.verdicts.delete(id);
      }
      if (!after(pos, this.position)) continue;
      this.position = pos;
      const def = defs.get(definitionKey(row.project_id, row.collection));
      if (!def) continue;
      const frame = frameFor(this, row, def, verdict);
      if (frame) {
        parts.push(frame);
        size += frame.length;
      }
    }
    const frames = joinFrames(parts);
    if (frames) this.write(frames);
  }

  /** A batch as its shape sees it (frames built once for the shape), up to `last`. */
  deliver(frames: Frames | null, last: Position): void {
    if (!this.isOpen) return;
    this.position = last;
    if (frames) this.write(frames);
  }

  /** A named event without an id (ready, reset, expired). */
  notice(event: string, data: unknown): void {
    this.write(joinFrames([noticeFrame(event, data)])!);
  }

  /** The comment line that keeps proxies from closing an idle stream (feed.ts, one timer for all). */
  heartbeat(): void {
    this.write(HEARTBEAT);
  }

  /** Writes, then closes a client too slow to read (more than MAX_BUFFERED bytes waiting): it resumes from its last event id. */
  private write(frames: Frames): void {
    if (!this.isOpen) return;
    this.wire.write(frames);
    if (this.wire.buffered > MAX_BUFFERED) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
  }
}
