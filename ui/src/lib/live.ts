/**
 * Live records: the console follows a collection's changes through the realtime API apps use
 * (docs/realtime.md). A ticket is asked for as the project's owner, then `EventSource` opens
 * GET /api/realtime with it; when the stream ends for good (the ticket's time is up, the
 * server restarted), a new ticket is asked for, resuming after the last event seen.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, projectPath } from './api';

export interface Change {
  action: 'create' | 'update' | 'delete' | 'restore' | 'leave';
  id: string;
  /** The document after the change (before it, for a delete); absent when over 64 KB. */
  document?: Record<string, unknown> & { _id: string };
}

export type LiveStatus = 'off' | 'connecting' | 'live' | 'reconnecting';

const ACTIONS = ['create', 'update', 'delete', 'restore', 'leave'] as const;

export function useLiveChanges(projectId: string, collection: string, enabled: boolean, onChanges: (changes: Change[]) => void): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>(enabled ? 'connecting' : 'off');
  const handler = useRef(onChanges);
  handler.current = onChanges;
  useEffect(() => {
    if (!enabled) {
      setStatus('off');
      return;
    }
    let source: EventSource | null = null;
    let stopped = false;
    let lastEventId: string | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let batch: Change[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    // Changes arrive in bursts (a bulk write): one refresh per 50 ms at most.
    const push = (c: Change) => {
      batch.push(c);
      flush ??= setTimeout(() => {
        flush = undefined;
        const out = batch;
        batch = [];
        handler.current(out);
      }, 50);
    };
    const connect = async (attempt: number) => {
      if (stopped) return;
      try {
        const { ticket } = await api.post<{ ticket: string }>(projectPath(projectId, 'realtime', 'ticket'), { subscriptions: [{ collection }] });
        if (stopped) return;
        const url = new URL('/api/realtime', location.origin);
        url.searchParams.set('ticket', ticket);
        if (lastEventId) url.searchParams.set('lastEventId', lastEventId);
        source = new EventSource(url);
        source.addEventListener('ready', () => setStatus('live'));
        for (const action of ACTIONS) {
          source.addEventListener(action, (e) => {
            const ev = e as MessageEvent<string>;
            lastEventId = ev.lastEventId || lastEventId;
            try {
              const d = JSON.parse(ev.data) as { id: unknown; document?: Change['document'] };
              push({ action, id: String(d.id), ...(d.document ? { document: d.document } : {}) });
            } catch {
              /* a malformed event is skipped */
            }
          });
        }
        source.addEventListener('reset', () => push({ action: 'update', id: '' }));
        source.onerror = () => {
          if (source?.readyState === EventSource.CLOSED) {
            setStatus('reconnecting');
            source = null;
            retry = setTimeout(() => void connect(0), 1000);
          }
        };
      } catch {
        setStatus('reconnecting');
        retry = setTimeout(() => void connect(attempt + 1), Math.min(30_000, 1000 * 2 ** attempt));
      }
    };
    setStatus('connecting');
    void connect(0);
    return () => {
      stopped = true;
      source?.close();
      clearTimeout(retry);
      clearTimeout(flush);
    };
  }, [projectId, collection, enabled]);
  return status;
}
