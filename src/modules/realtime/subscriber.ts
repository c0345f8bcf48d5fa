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
import { candidateOf, changeJson, leaveJson, mayRead, mayReadBefore, positionOf, previousCandidateOf } from './event.js';
import type { Match } from './match.js';
import { after, formatPosition, type Position } from './position.js';
import type { ChangeRow } from './queries.js';
import type { TicketClaims } from './ticket.js';

const MAX_BUFFERED = 1024 * 1024;

export interface CompiledSubscription {
  /** The collection's name, lower-cased (names are case-insensitive). */
  collection: string;
  match: Match;
}

/** The collection definitions an event needs, by `projectId:lower-cased name`. */
export type Definitions = ReadonlyMap<string, CollectionDef | null>;
export const definitionKey = (projectId: string, collection: string) => `${projectId}:${collection.toLowerCase()}`;

export class Subscriber {
  private held: ChangeRow[] | null = [];
  private closed = false;
  /**
   * The feed's verdicts on changes of collections whose read rule needs the database, by
   * position, judged in this stream's scope before the changes are offered (feed.ts); each is
   * dropped once its change is sent or skipped.
   */
  readonly verdicts = new Map<string, boolean>();

  constructor(
    readonly scope: TicketClaims,
    readonly subscriptions: CompiledSubscription[],
    private readonly res: ServerResponse,
    /** The last position this client has (its Last-Event-ID, or where it joined). */
    public position: Position,
  ) {}

  get projectId(): string {
    return this.scope.projectId;
  }

  get isOpen(): boolean {
    return !this.closed && !this.res.destroyed;
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

  /** Sends the rows this client may see and has not had yet, in order. */
  send(rows: ChangeRow[], defs: Definitions): void {
    for (const row of rows) {
      if (!this.isOpen) return;
      const pos = positionOf(row);
      const id = formatPosition(pos);
      const verdict = this.verdicts.get(id);
      this.verdicts.delete(id);
      if (!after(pos, this.position)) continue;
      this.position = pos;
      const def = defs.get(definitionKey(row.project_id, row.collection));
      if (!def) continue;
      if (!mayRead(this.scope, def, row, verdict)) {
        if (this.lostSight(row, def)) this.write(`id: ${id}\nevent: leave\ndata: ${leaveJson(row, def.name)}\n\n`);
        continue;
      }
      if (this.matches(row)) {
        this.write(`id: ${id}\nevent: ${row.action}\ndata: ${changeJson(row, def.name)}\n\n`);
      } else if (this.left(row)) {
        this.write(`id: ${id}\nevent: leave\ndata: ${leaveJson(row, def.name)}\n\n`);
      }
    }
  }

  /**
   * An update that took the document out of this stream's filters: it matched one of them
   * before and matches none now, so the client drops its copy. When the previous version is
   * unknown (previousCandidateOf) it says `leave` anyway: dropping a document the client does
   * not hold is harmless, keeping a stale one is not.
   */
  private left(row: ChangeRow): boolean {
    if (row.action !== 'update') return false;
    const name = row.collection.toLowerCase();
    const subs = this.subscriptions.filter((s) => s.collection === name);
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
  private lostSight(row: ChangeRow, def: CollectionDef): boolean {
    if (row.action !== 'update') return false;
    const before = previousCandidateOf(row);
    if (before === null || !mayReadBefore(this.scope, def, before)) return false;
    const name = row.collection.toLowerCase();
    return this.subscriptions.some((s) => s.collection === name && s.match(before));
  }

  private matches(row: ChangeRow): boolean {
    const name = row.collection.toLowerCase();
    const doc = candidateOf(row);
    // a document too large to carry is announced without its body to every subscriber of the
    // collection (its filters cannot be judged); the client reads it by id, under the usual rules
    return this.subscriptions.some((s) => s.collection === name && (row.truncated || s.match(doc)));
  }

  /** A named event without an id (ready, reset, expired). */
  notice(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  heartbeat(): void {
    this.write(': ping\n\n');
  }

  write(chunk: string): void {
    if (!this.isOpen) return;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.res.end();
  }
}
