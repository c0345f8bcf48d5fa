/**
 * Audit log: every change an operator made to this project through the dashboard API (who,
 * when, from which address, the action, its target, the setting before and after with secrets
 * masked), newest first, filtered and paged; a button verifies the hash chain and says where it
 * breaks; a link exports the filtered entries as NDJSON. The dashboard routes
 * GET /api/projects/:id/audit, …/audit/verify and …/audit/export do the work (docs/audit.md).
 */
import { useState } from 'preact/hooks';
import type { TargetedEvent } from 'preact/compat';
import { api, projectPath } from '../lib/api';
import { dateTime } from '../lib/format';
import { useLoad } from '../lib/use-load';
import { Empty, Field, Loadable, PageHead, Pager } from '../components/ui';
import type { SectionProps } from './project-shell';

interface AuditEntry {
  id: string;
  seq: number;
  at: string;
  operator: { id: string | null; email: string | null };
  ip: string | null;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
  hash: string;
}

interface AuditPage {
  items: AuditEntry[];
  nextCursor: string | null;
}

interface VerifyResult {
  ok: boolean;
  checked: number;
  head: { seq: number; hash: string };
  anchor: { seq: number; hash: string };
  broken: null | { reason: string; id: string | null; seq: number | null; at: string | null; message: string };
}

interface Filters {
  action: string;
  operator: string;
  target: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { action: '', operator: '', target: '', from: '', to: '' };
const PAGE = 50;

/** A datetime-local value (the browser's time zone) as ISO 8601, or '' when empty or invalid. */
const isoOf = (local: string) => {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
};

function filterQuery(f: Filters): URLSearchParams {
  const qs = new URLSearchParams();
  for (const k of ['action', 'operator', 'target'] as const) if (f[k].trim()) qs.set(k, f[k].trim());
  if (isoOf(f.from)) qs.set('from', isoOf(f.from));
  if (isoOf(f.to)) qs.set('to', isoOf(f.to));
  return qs;
}

const json = (v: unknown) => JSON.stringify(v, null, 2);

function Change({ entry }: { entry: AuditEntry }) {
  if (entry.before === null && entry.after === null) return <span class="muted">—</span>;
  return (
    <details>
      <summary>Before and after</summary>
      <div class="audit-change">
        <div>
          <h3 class="audit-change-title">Before</h3>
          <pre class="mono">{entry.before === null ? 'none' : json(entry.before)}</pre>
        </div>
        <div>
          <h3 class="audit-change-title">After</h3>
          <pre class="mono">{entry.after === null ? 'none' : json(entry.after)}</pre>
        </div>
      </div>
    </details>
  );
}

export default function Audit({ project }: SectionProps) {
  const base = projectPath(project._id, 'audit');
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const [verifying, setVerifying] = useState(false);
  const [verified, setVerified] = useState<VerifyResult | null>(null);
  const [verifyError, setVerifyError] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1];
  const qs = filterQuery(filters);
  const exportHref = `${base}/export${qs.toString() ? `?${qs}` : ''}`;
  qs.set('limit', String(PAGE));
  if (cursor) qs.set('cursor', cursor);
  const query = qs.toString();
  const list = useLoad((signal) => api.get<AuditPage>(`${base}?${query}`, signal), [base, query]);
  const filtered = Object.values(filters).some((v) => v.trim() !== '');

  const set = (k: keyof Filters) => (e: TargetedEvent<HTMLInputElement, Event>) => setDraft({ ...draft, [k]: e.currentTarget.value });
  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(draft);
    setCursors([]);
  };
  const clear = () => {
    setDraft(NO_FILTERS);
    setFilters(NO_FILTERS);
    setCursors([]);
  };
  const verify = async () => {
    setVerifying(true);
    setVerifyError(null);
    try {
      setVerified(await api.get<VerifyResult>(`${base}/verify`));
    } catch (err) {
      setVerified(null);
      setVerifyError((err as Error).message);
    } finally {
      setVerifying(false);
    }
  };

  return (
    <section aria-labelledby="audit-title" class="audit-screen">
      <PageHead title="Audit log">
        <button type="button" class="btn" onClick={verify} disabled={verifying}>{verifying ? 'Verifying…' : 'Verify chain'}</button>
        <a class="btn" href={exportHref} download={`audit-${project._id}.ndjson`}>Export NDJSON</a>
        <button type="button" class="btn" onClick={list.reload} disabled={list.loading}>{list.loading ? 'Refreshing…' : 'Refresh'}</button>
      </PageHead>
      <h2 id="audit-title" class="sr-only">Audit log</h2>
      <p class="muted">
        Every change made to this project through the dashboard: who made it, when, from which address, and the setting before and after. Secrets are never shown or kept. Each entry is chained to the one before by its hash, so a change made directly in the database is found by “Verify chain”.
      </p>
      <div role="status" aria-live="polite" class="audit-verify">
        {verifyError && <p class="status-err">Could not verify: {verifyError}</p>}
        {verified && verified.ok && (
          <p class="status-ok">
            The chain is intact: {verified.checked} {verified.checked === 1 ? 'entry' : 'entries'} checked{verified.anchor.seq > 0 ? ` (from entry ${verified.anchor.seq + 1}, after the retention trim)` : ''}. Newest entry {verified.head.seq}, hash <code class="mono">{verified.head.hash.slice(0, 16)}…</code>
          </p>
        )}
        {verified && !verified.ok && verified.broken && (
          <p class="status-err">
            The chain is broken{verified.broken.seq !== null ? ` at entry ${verified.broken.seq}` : ''}{verified.broken.at ? ` (${dateTime(verified.broken.at)}, id ${verified.broken.id})` : ''}: {verified.broken.message}
          </p>
        )}
      </div>
      <form class="audit-filters" aria-label="Filters" onSubmit={apply}>
        <Field label="Action" value={draft.action} onInput={set('action')} placeholder="keys.rotate or functions.*" />
        <Field label="Operator" value={draft.operator} onInput={set('operator')} placeholder="email or id" />
        <Field label="Target" value={draft.target} onInput={set('target')} placeholder="e.g. a collection" />
        <Field label="From" type="datetime-local" value={draft.from} onInput={set('from')} />
        <Field label="To" type="datetime-local" value={draft.to} onInput={set('to')} />
        <div class="audit-filter-actions">
          <button type="submit" class="btn primary">Apply filters</button>
          {filtered && <button type="button" class="btn" onClick={clear}>Clear</button>}
        </div>
      </form>
      <Loadable state={list}>
        {(page) => page.items.length === 0 ? (
          <Empty title={cursor ? 'No older entry' : filtered ? 'No entry matches these filters' : 'No change recorded yet'}>
            <p>Changes to settings, keys, schemas, rules, functions, webhooks, mail, users and data made in the console or through the dashboard API appear here.</p>
          </Empty>
        ) : (
          <>
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Audit entries">
              <table class="grid audit">
                <caption class="sr-only">Audit entries, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Operator</th>
                    <th scope="col">Address</th>
                    <th scope="col">Action</th>
                    <th scope="col">Target</th>
                    <th scope="col">Change</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((e) => (
                    <tr key={e.id}>
                      <td data-label="#" class="num">{e.seq}</td>
                      <td data-label="Time">{dateTime(e.at)}</td>
                      <td data-label="Operator" title={e.operator.id ?? undefined}>{e.operator.email ?? '—'}</td>
                      <td data-label="Address" class="mono">{e.ip ?? '—'}</td>
                      <td data-label="Action" class="mono">{e.action}</td>
                      <td data-label="Target" class="mono target" title={e.target ?? undefined}>{e.target ?? '—'}</td>
                      <td data-label="Change"><Change entry={e} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager
              status={cursor ? `Older entries (page ${cursors.length + 1})` : 'Newest entries'}
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
