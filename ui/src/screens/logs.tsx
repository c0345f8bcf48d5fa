/**
 * Request log: the project's last public-API requests (time, method, routed route, status, duration,
 * error code, user id; never bodies, keys or query strings), newest first, filtered by status
 * and route, refreshed by hand or every few seconds. The dashboard route
 * GET /api/projects/:id/logs/requests (docs/dashboard.md "Request log") does the work.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime } from '../lib/format';
import { useLoad } from '../lib/use-load';
import { Check, Empty, Loadable, PageHead, Pager, Select } from '../components/ui';
import type { SectionProps } from './project-shell';

interface RequestRow {
  id: string;
  at: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  code: string | null;
  userId: string | null;
}

interface RequestPage {
  items: RequestRow[];
  nextCursor: string | null;
}

interface RouteCount {
  route: string;
  requests: number;
  errors: number;
}

const STATUSES = [
  { value: 'all', label: 'All statuses' },
  { value: 'errors', label: 'Errors (4xx and 5xx)' },
  { value: '4xx', label: 'Client errors (4xx)' },
  { value: '5xx', label: 'Server errors (5xx)' },
  { value: 'ok', label: 'Successes (below 400)' },
];

const AUTO_REFRESH_MS = 5000;
const PAGE = 50;

export default function Logs({ project }: SectionProps) {
  const base = projectPath(project._id, 'logs', 'requests');
  const [status, setStatus] = useState('all');
  const [route, setRoute] = useState('');
  const [auto, setAuto] = useState(false);
  // The cursors of the pages opened so far: the last one is the page shown (none: the newest).
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const qs = new URLSearchParams({ limit: String(PAGE) });
  if (status !== 'all') qs.set('status', status);
  if (route) qs.set('route', route);
  if (cursor) qs.set('cursor', cursor);
  const query = qs.toString();
  const list = useLoad((signal) => api.get<RequestPage>(`${base}?${query}`, signal), [base, query]);
  const routes = useLoad((signal) => api.get<RouteCount[]>(`${base}/routes`, signal), [base]);
  const refresh = () => {
    list.reload();
    routes.reload();
  };
  // Auto-refresh follows the newest page only (an older page would shift under the reader).
  useEffect(() => {
    if (!auto || cursor) return;
    const timer = setInterval(refresh, AUTO_REFRESH_MS);
    return () => clearInterval(timer);
  }, [auto, cursor, list.reload, routes.reload]);
  const filter = (apply: () => void) => {
    apply();
    setCursors([]);
  };
  const routeOptions = [{ value: '', label: 'All routes' }, ...(routes.data ?? []).map((r) => ({ value: r.route, label: `${r.route} (${r.requests}${r.errors ? `, ${r.errors} failed` : ''})` }))];
  if (route && !routeOptions.some((o) => o.value === route)) routeOptions.push({ value: route, label: route });
  return (
    <section aria-labelledby="logs-title" class="reqlog-screen">
      <PageHead title="Request log">
        <button type="button" class="btn" onClick={refresh} disabled={list.loading}>{list.loading ? 'Refreshing…' : 'Refresh'}</button>
      </PageHead>
      <h2 id="logs-title" class="sr-only">Request log</h2>
      <p class="muted">
        The last requests your apps made with this project's keys: when, the route, the answer's status and error code, how long it took, and the signed-in user. Bodies, keys, headers and query strings are never kept.
      </p>
      <div class="reqlog-filters" role="group" aria-label="Filters">
        <Select label="Status" value={status} options={STATUSES} onChange={(v) => filter(() => setStatus(v))} />
        <Select label="Route" value={route} options={routeOptions} onChange={(v) => filter(() => setRoute(v))} />
        <Check label={`Refresh every ${AUTO_REFRESH_MS / 1000} s`} checked={auto} onChange={setAuto} />
      </div>
      <Loadable state={list}>
        {(page) => page.items.length === 0 ? (
          <Empty title={cursor ? 'No older request' : status === 'all' && !route ? 'No request yet' : 'No request matches these filters'}>
            <p>Requests made with the project's API keys appear here within a second or two.</p>
          </Empty>
        ) : (
          <>
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Requests">
              <table class="grid reqlog">
                <caption class="sr-only">Requests, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Method</th>
                    <th scope="col">Route</th>
                    <th scope="col">Status</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Error code</th>
                    <th scope="col">User</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((r) => (
                    <tr key={r.id} class={r.status >= 400 ? 'failed' : undefined}>
                      <td data-label="Time">{dateTime(r.at)}</td>
                      <td data-label="Method" class="mono">{r.method}</td>
                      <td data-label="Route" class="mono route" title={r.route}>{r.route}</td>
                      <td data-label="Status"><span class={r.status >= 400 ? 'status-err' : 'status-ok'}>{r.status}</span></td>
                      <td data-label="Duration" class="num">{r.durationMs} ms</td>
                      <td data-label="Error code" class="mono">{r.code ?? '—'}</td>
                      <td data-label="User" class="mono" title={r.userId ?? undefined}>{r.userId ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager
              status={cursor ? `Older requests (page ${cursors.length + 1})` : 'Newest requests'}
              hasPrevious={cursors.length > 0}
              hasNext={page.nextCursor !== null}
              onPrevious={() => setCursors(cursors.slice(0, -1))}
              onNext={() => page.nextCursor && setCursors([...cursors, page.nextCursor])}
            />
          </>
        )}
      </Loadable>
    </section>
  );
}
