/**
 * A Server-Sent Events client for the realtime tests: reads a stream with fetch and parses it
 * as the browser's EventSource does (id, event, data; comments ignored), so the tests see what
 * a browser would.
 */
export interface SseEvent {
  id: string | null;
  event: string;
  data: unknown;
}

export interface SseStream {
  status: number;
  events: SseEvent[];
  /** Resolves with the first event (from the start) that satisfies `pred`. */
  waitFor(pred: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** The events with an id (the changes), in order. */
  changes(): SseEvent[];
  closed: Promise<void>;
  close(): void;
}

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream & { body?: unknown }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = await res.json().catch(() => undefined);
    return { status: res.status, body, events, waitFor: () => Promise.reject(new Error('no stream')), changes: () => [], closed: Promise.resolve(), close: () => {} };
  }
  const closed = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: SseEvent = { id: null, event: 'message', data: undefined };
          let data: string | null = null;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const [field, ...rest] = line.split(':');
            const v = rest.join(':').replace(/^ /, '');
            if (field === 'id') e.id = v;
            else if (field === 'event') e.event = v;
            else if (field === 'data') data = data === null ? v : `${data}\n${v}`;
          }
          if (data === null) continue;
          e.data = JSON.parse(data);
          events.push(e);
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted
    }
    for (const w of waiters.splice(0)) w();
  })();
  let ended = false;
  void closed.then(() => (ended = true));
  return {
    status: res.status,
    events,
    changes: () => events.filter((e) => e.id !== null),
    async waitFor(pred, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.find(pred);
        if (hit) return hit;
        if (ended) throw new Error(`stream ended without the event; got ${JSON.stringify(events)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for an event; got ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
    closed,
    close: () => abort.abort(),
  };
}
