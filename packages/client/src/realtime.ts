/**
 * `@plinth/client/realtime`: live changes of documents (docs/realtime.md). One stream carries
 * every subscription (collection + the list API's filters). After a cut the stream comes back
 * by itself with a new ticket and the last event id, so no change is missed or repeated; a
 * `reset` (the server no longer holds the changes since) and a `leave` (a document no longer
 * matches your filter) are handed to you; the connection state is observable.
 *
 * Uses fetch and a streamed body (not EventSource), so it works the same in browsers and in Node
 * and sends the API key and the client version as headers.
 */
import type { PlinthClient } from './index.js';
import type { QueryValue } from './core.js';
import type { Doc, SchemaMap, Stored } from './data.js';
import { PlinthError, errorOf } from './errors.js';
import { readBody } from './core.js';

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface Subscription<C extends string = string> {
  collection: C;
  /** The list API's filters: `{room: 'lobby', price_gte: 10}` (no `_regex`). */
  filter?: Record<string, QueryValue>;
}

export interface ChangeEvent<T extends Doc = Doc> {
  collection: string;
  action: 'create' | 'update' | 'delete' | 'restore';
  id: string;
  version: number;
  /** After the change (before it, for a delete); absent when `truncated` (over 64 KB: fetch it by id). */
  document?: Stored<T>;
  truncated?: boolean;
  /** The event's place in the stream (what a resume sends back). */
  eventId: string;
}

export interface LeaveEvent {
  collection: string;
  id: string;
  version: number;
  eventId: string;
}

export interface RealtimeHandlers<T extends Doc = Doc> {
  onChange?(event: ChangeEvent<T>): void;
  /** A document left your filter: drop your copy. */
  onLeave?(event: LeaveEvent): void;
  /** The changes since the last event are gone: reload your data. The stream carries on. */
  onReset?(reason: string): void;
  onState?(state: ConnectionState): void;
  /** A failure the stream recovers from (it reconnects), or, with state `closed`, one it cannot (a refused subscription). */
  onError?(error: PlinthError): void;
}

export interface RealtimeChannel {
  readonly state: ConnectionState;
  /** The id of the last event received (resumes start after it). */
  readonly lastEventId: string | null;
  close(): void;
}

export interface RealtimeOptions {
  /** Resume after this event id (e.g. one kept across a page load). */
  lastEventId?: string;
  /** The longest wait between reconnection attempts, ms (default 10 000). */
  maxBackoffMs?: number;
}

const ACTIONS = new Set(['create', 'update', 'delete', 'restore']);

export class Realtime<S extends SchemaMap = SchemaMap> {
  constructor(private readonly client: PlinthClient<S>) {}

  /** Opens one stream for these subscriptions. */
  subscribe<C extends Extract<keyof S, string>>(
    subscriptions: Subscription<C>[],
    handlers: RealtimeHandlers<S[C]>,
    opts: RealtimeOptions = {},
  ): RealtimeChannel {
    const t = this.client.transport;
    const auth = this.client.auth;
    let state: ConnectionState = 'connecting';
    let lastEventId: string | null = opts.lastEventId ?? null;
    let closed = false;
    let ctrl: AbortController | undefined;
    let failures = 0;
    const setState = (s: ConnectionState) => {
      if (s !== state) {
        state = s;
        handlers.onState?.(s);
      }
    };
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const dispatch = (event: string, data: string, id: string): 'expired' | void => {
      if (event === 'ready') {
        failures = 0;
        setState('open');
        return;
      }
      if (event === 'expired') return 'expired';
      let body: Record<string, unknown> = {};
      try {
        body = data ? (JSON.parse(data) as Record<string, unknown>) : {};
      } catch {
        return;
      }
      if (id) lastEventId = id;
      if (ACTIONS.has(event)) handlers.onChange?.({ ...(body as unknown as ChangeEvent<S[C]>), eventId: id });
      else if (event === 'leave') handlers.onLeave?.({ ...(body as unknown as LeaveEvent), eventId: id });
      else if (event === 'reset') handlers.onReset?.(String(body.reason ?? 'reset'));
    };

    const connect = async (): Promise<void> => {
      const { ticket } = await t.request<{ ticket: string }>({ method: 'POST', path: '/api/realtime/ticket', body: { subscriptions }, retries: 0 });
      ctrl = new AbortController();
      const res = await t.send({
        path: '/api/realtime',
        query: lastEventId ? { ticket, lastEventId } : { ticket },
        headers: { accept: 'text/event-stream' },
        auth: false,
        retries: 0,
        signal: ctrl.signal,
      });
      if (!res.ok || !res.body) throw errorOf(res, await readBody(res));
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      let event = 'message';
      let data: string[] = [];
      let id = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        let nl: number;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
          if (line === '') {
            const outcome = data.length || event !== 'message' ? dispatch(event, data.join('\n'), id) : undefined;
            event = 'message';
            data = [];
            id = '';
            if (outcome === 'expired') {
              ctrl.abort();
              await auth.refresh().catch(() => false);
              return;
            }
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = v;
          else if (field === 'data') data.push(v);
          else if (field === 'id') id = v;
        }
      }
    };

    void (async () => {
      handlers.onState?.('connecting');
      while (!closed) {
        try {
          await connect();
        } catch (err) {
          if (closed) break;
          const e = err instanceof PlinthError ? err : new PlinthError(String((err as Error)?.message ?? err), 0, 'network_error');
          // A refused subscription (bad filter, no access, realtime off) does not get better by retrying.
          if (e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 408 && e.status !== 429) {
            handlers.onError?.(e);
            setState('closed');
            closed = true;
            break;
          }
          handlers.onError?.(e);
        }
        if (closed) break;
        setState('reconnecting');
        const max = opts.maxBackoffMs ?? 10_000;
        await wait(Math.min(max, 250 * 2 ** failures++) * (0.5 + Math.random() / 2));
      }
    })();

    return {
      get state() {
        return state;
      },
      get lastEventId() {
        return lastEventId;
      },
      close() {
        closed = true;
        ctrl?.abort();
        setState('closed');
      },
    };
  }
}

/** The realtime feature of a client: `realtime(plinth).subscribe([{collection: 'messages', filter: {room}}], {onChange})`. */
export function realtime<S extends SchemaMap>(client: PlinthClient<S>): Realtime<S> {
  return new Realtime(client);
}
