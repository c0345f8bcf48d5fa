/**
 * Webhooks: a project's endpoints (the signing secret shown once at creation; events and
 * collections; enable/disable), each endpoint's delivery log with its attempts, status codes
 * and the first bytes of the answers, "Send test" and "Redeliver". The dashboard webhook
 * routes (docs/webhooks.md) do the work.
 */
import { useId, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime, plural } from '../lib/format';
import { href, navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, PageHead, SecretOnce } from '../components/ui';
import { RoleNote } from '../components/ui';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

const EVENTS = ['create', 'update', 'delete', 'restore'] as const;

interface Endpoint {
  _id: string;
  url: string;
  description: string;
  events: string[];
  collections: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
}

interface Attempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
}

interface Delivery {
  _id: string;
  eventType: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  log: Attempt[];
}

export default function Webhooks({ project, collections, rest }: SectionProps) {
  const base = projectPath(project._id, 'webhooks');
  const list = useLoad((signal) => api.get<Endpoint[]>(base, signal), [base]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const selected = rest[0];
  const cannotAdd = useGate(`POST /api/projects/:projectId/webhooks`);
  return (
    <section aria-labelledby="webhooks-title" class="webhooks">
      <PageHead title="Webhooks">
        <button type="button" class="btn primary" disabled={!!cannotAdd} title={cannotAdd} onClick={() => setCreating(true)}>Add endpoint</button>
      </PageHead>
      <RoleNote what="Adding, changing, testing and deleting endpoints" reason={cannotAdd} />
      <p class="muted" id="webhooks-title-desc">
        Plinth POSTs each change of the chosen collections to these URLs, signed with the endpoint's secret (Standard Webhooks), and retries failures.
      </p>
      <h2 id="webhooks-title" class="sr-only">Webhook endpoints</h2>
      {secret && (
        <div class="panel-inline wide-panel">
          <SecretOnce label={`Signing secret of ${secret.url}`} value={secret.secret} />
          <button type="button" class="btn" onClick={() => setSecret(null)}>I have kept it</button>
        </div>
      )}
      <Loadable state={list}>
        {(endpoints) => endpoints.length === 0 ? (
          <Empty title="No webhook endpoint yet"><p>Add one to receive the project's changes.</p></Empty>
        ) : (
          <ul class="endpoints">
            {endpoints.map((e) => (
              <EndpointCard key={e._id} projectId={project._id} base={base} e={e} open={selected === e._id} onChanged={list.reload} />
            ))}
          </ul>
        )}
      </Loadable>
      {creating && (
        <CreateDialog base={base} collections={collections.map((c) => c.name).filter((n) => n.toLowerCase() !== 'users')} onClose={() => setCreating(false)}
          onCreated={(r) => { setSecret({ url: r.endpoint.url, secret: r.secret }); list.reload(); }} />
      )}
    </section>
  );
}

function EndpointCard({ projectId, base, e, open, onChanged }: { projectId: string; base: string; e: Endpoint; open: boolean; onChanged: () => void }) {
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [tick, setTick] = useState(0);
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    try {
      await fn();
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  };
  const titleId = `ep-${e._id}`;
  return (
    <li class="card endpoint" aria-labelledby={titleId}>
      <div class="endpoint-head">
        <h3 id={titleId} class="truncate mono" title={e.url}>{e.url}</h3>
        <span class={`badge ${e.enabled ? 'delivered' : 'failed'}`}>{e.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      {e.description && <p class="wrap-anywhere">{e.description}</p>}
      <dl class="meta">
        <dt>Events</dt><dd>{e.events.length ? e.events.join(', ') : 'all'}</dd>
        <dt>Collections</dt><dd class="wrap-anywhere">{e.collections.length ? e.collections.join(', ') : 'all'}</dd>
        {e.disabledReason && <><dt>Disabled</dt><dd class="wrap-anywhere">{e.disabledReason}</dd></>}
        {e.failingSince && <><dt>Failing since</dt><dd>{dateTime(e.failingSince)}</dd></>}
      </dl>
      <div class="row-actions">
        <button type="button" class="btn" disabled={busy} onClick={() => run(async () => {
          const d = await api.post<Delivery & { outcome?: string }>(`${base}/${e._id}/test`);
          const last = d.log[d.log.length - 1];
          toast(`Test event: ${last?.statusCode ? `HTTP ${last.statusCode}` : last?.error ?? d.status}`, d.status === 'succeeded' ? 'ok' : 'error');
          setTick(tick + 1);
          if (!open) navigate(href('p', projectId, 'webhooks', e._id));
        })}>Send test</button>
        <button type="button" class="btn" disabled={busy} onClick={() => run(async () => {
          await api.patch(`${base}/${e._id}`, { enabled: !e.enabled });
          toast(e.enabled ? 'Endpoint disabled' : 'Endpoint enabled');
          onChanged();
        })}>{e.enabled ? 'Disable' : 'Enable'}</button>
        <a class="btn" href={open ? href('p', projectId, 'webhooks') : href('p', projectId, 'webhooks', e._id)} aria-expanded={open}>
          {open ? 'Hide deliveries' : 'Deliveries'}
        </a>
        <button type="button" class="btn danger" disabled={busy} onClick={() => setDeleting(true)}>Delete</button>
      </div>
      {open && <DeliveryLog key={tick} base={`${base}/${e._id}`} />}
      {deleting && (
        <Confirm title="Delete this endpoint?" message={<p class="wrap-anywhere">{e.url} and its delivery log will be deleted.</p>} action="Delete"
          onConfirm={async () => { await api.del(`${base}/${e._id}`); toast('Endpoint deleted'); onChanged(); }} onClose={() => setDeleting(false)} />
      )}
    </li>
  );
}

function DeliveryLog({ base }: { base: string }) {
  const log = useLoad((signal) => api.get<Delivery[]>(`${base}/deliveries?limit=50`, signal), [base]);
  const [busy, setBusy] = useState<string | null>(null);
  return (
    <section class="deliveries" aria-label="Deliveries">
      <div class="toolbar">
        <h4>Deliveries</h4>
        <button type="button" class="btn ghost" onClick={log.reload}>Refresh</button>
      </div>
      <Loadable state={log}>
        {(items) => items.length === 0 ? <p class="muted">No delivery yet. “Send test” sends one now.</p> : (
          <ul class="delivery-list">
            {items.map((d) => {
              const last = d.log[d.log.length - 1];
              return (
                <li key={d._id} class="delivery">
                  <details>
                    <summary>
                      <span class={`badge ${d.status === 'succeeded' ? 'delivered' : d.status === 'failed' ? 'failed' : ''}`}>{d.status}</span>{' '}
                      <strong>{d.eventType}</strong>{' '}
                      <span class="muted">{dateTime(d.createdAt)} · {plural(d.attempts, 'attempt')}{last?.statusCode ? ` · HTTP ${last.statusCode}` : last?.error ? ` · ${last.error}` : ''}</span>
                    </summary>
                    <p class="mono small wrap-anywhere">webhook-id {d._id}{d.nextAttemptAt ? ` · next attempt ${dateTime(d.nextAttemptAt)}` : ''}</p>
                    {/* Focusable: on a narrow window the table scrolls sideways, and the keyboard must reach it. */}
                    <div class="table-wrap" tabIndex={0} role="group" aria-label={`Attempts of ${d._id}`}>
                      <table class="grid small">
                        <caption class="sr-only">Attempts of {d._id}</caption>
                        <thead><tr><th scope="col">#</th><th scope="col">At</th><th scope="col">Status</th><th scope="col">Time</th><th scope="col">Answer (first bytes)</th></tr></thead>
                        <tbody>
                          {d.log.map((a) => (
                            <tr key={a.attempt}>
                              <td>{a.attempt}</td>
                              <td>{dateTime(a.at)}</td>
                              <td>{a.statusCode ?? '—'}</td>
                              <td>{a.durationMs} ms</td>
                              <td class="mono answer" title={a.response ?? a.error ?? ''}>{a.error ? `error: ${a.error}` : (a.response ?? '').slice(0, 200)}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                  </details>
                  <button type="button" class="btn" disabled={busy === d._id || d.status === 'pending'} aria-label={`Redeliver ${d._id}`} onClick={async () => {
                    setBusy(d._id);
                    try {
                      await api.post(`${base}/deliveries/${d._id}/redeliver`);
                      toast('Redelivery queued');
                      setTimeout(log.reload, 1500);
                      log.reload();
                    } catch (e) {
                      toastError(e);
                    } finally {
                      setBusy(null);
                    }
                  }}>Redeliver</button>
                </li>
              );
            })}
          </ul>
        )}
      </Loadable>
    </section>
  );
}

function CreateDialog({ base, collections, onClose, onCreated }: { base: string; collections: string[]; onClose: () => void; onCreated: (r: { endpoint: Endpoint; secret: string }) => void }) {
  const id = useId();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [cols, setCols] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const toggle = (set: Set<string>, v: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(v);
    else next.delete(v);
    return next;
  };
  return (
    <Dialog title="Add a webhook endpoint" onClose={onClose}>
      <form onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const r = await api.post<{ endpoint: Endpoint; secret: string }>(base, { url: url.trim(), description, events: [...events], collections: [...cols] });
          onCreated(r);
          onClose();
        } catch (err) {
          toastError(err);
        } finally {
          setBusy(false);
        }
      }}>
        <div class="field">
          <label for={`${id}-url`}>URL</label>
          <input id={`${id}-url`} type="url" required maxLength={2048} placeholder="https://example.com/hooks/plinth" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={`${id}-desc`}>Description</label>
          <input id={`${id}-desc`} maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <fieldset class="choices">
          <legend>Events (none ticked: all)</legend>
          {EVENTS.map((ev) => (
            <label class="check" key={ev}><input type="checkbox" checked={events.has(ev)} onChange={(e) => setEvents(toggle(events, ev, e.currentTarget.checked))} /> {ev}</label>
          ))}
        </fieldset>
        <fieldset class="choices">
          <legend>Collections (none ticked: all)</legend>
          {collections.length === 0 && <p class="muted">No collection yet.</p>}
          {collections.map((c) => (
            <label class="check wrap-anywhere" key={c}><input type="checkbox" checked={cols.has(c)} onChange={(e) => setCols(toggle(cols, c, e.currentTarget.checked))} /> {c}</label>
          ))}
        </fieldset>
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button type="submit" class="btn primary" disabled={busy || !url.trim()}>{busy ? 'Adding…' : 'Add endpoint'}</button>
        </div>
      </form>
    </Dialog>
  );
}
