/**
 * Mail: settings (own Resend key, sender, webhook secret), templates with a live preview,
 * localized auth mails (per kind and locale, with previews),
 * logs with live status, the dev outbox, audiences and contacts, broadcasts (Pro).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime } from '../lib/format';
import { href } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { MailPreview } from '../components/mail-preview';
import { Confirm, Empty, Field, Loadable, PageHead, RoleNote } from '../components/ui';
import type { SectionProps } from './project-shell';
import { AuthMails } from './auth-mails';
import { useGate } from '../lib/permissions';

const TABS = [['settings', 'Settings'], ['templates', 'Templates'], ['auth-mails', 'Auth mails'], ['logs', 'Logs'], ['outbox', 'Dev outbox'], ['audiences', 'Audiences'], ['broadcasts', 'Broadcasts']] as const;
type Tab = (typeof TABS)[number][0];

export default function Mail(props: SectionProps) {
  const tab = (TABS.some(([t]) => t === props.rest[0]) ? props.rest[0] : 'settings') as Tab;
  const pid = props.project._id;
  return (
    <>
      <PageHead title="Mail" />
      <nav class="tabs" aria-label="Mail sections">
        {TABS.map(([t, label]) => <a key={t} href={href('p', pid, 'mail', t)} aria-current={tab === t ? 'page' : undefined}>{label}</a>)}
      </nav>
      {tab === 'settings' && <Settings {...props} />}
      {tab === 'templates' && <Templates pid={pid} />}
      {tab === 'auth-mails' && <AuthMails pid={pid} />}
      {tab === 'logs' && <Logs pid={pid} />}
      {tab === 'outbox' && <Outbox pid={pid} />}
      {tab === 'audiences' && <Audiences pid={pid} />}
      {tab === 'broadcasts' && <Broadcasts pid={pid} />}
    </>
  );
}

function Settings({ project, reload }: SectionProps) {
  const [key, setKey] = useState('');
  const [from, setFrom] = useState(project.providerFromEmail);
  const [secret, setSecret] = useState('');
  const [webhookUrl, setWebhookUrl] = useState<string>();
  const cannotSet = useGate(`PATCH /api/projects/:projectId`);
  const cannotSetSecret = useGate(`PUT /api/projects/:projectId/mail/webhook-secret`);
  const save = async (body: object, msg: string) => {
    try {
      await api.patch(projectPath(project._id), body);
      toast(msg);
      reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <div class="stack">
      <form onSubmit={(e) => { e.preventDefault(); void save({ providerApiKey: key, providerFromEmail: from }, 'Mail settings saved'); setKey(''); }}>
        <h2>Own Resend account</h2>
        <p class="muted">Own key: {project.hasProviderApiKey ? 'set (never shown)' : 'not set — mail goes through the platform key or the dev outbox'}.</p>
        <Field label="Resend API key (re_…)" type="password" autoComplete="off" value={key} placeholder={project.hasProviderApiKey ? 'leave empty to keep the current key' : 're_…'} onInput={(e) => setKey(e.currentTarget.value)} />
        <Field label="Sender" placeholder="App <hello@example.com>" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        <div class="actions">
          {project.hasProviderApiKey && <button type="button" class="btn" disabled={!!cannotSet} title={cannotSet} onClick={() => save({ providerApiKey: null }, 'Own key removed')}>Remove own key</button>}
          <button class="btn primary" disabled={!!cannotSet} title={cannotSet} onClick={(e) => { if (!key) { e.preventDefault(); void save({ providerFromEmail: from }, 'Sender saved'); } }}>Save</button>
        </div>
        <RoleNote what="Setting the key and the sender" reason={cannotSet} />
      </form>
      <form onSubmit={async (e) => {
        e.preventDefault();
        try {
          const r = await api.put<{ hasWebhookSecret: boolean; webhookUrl: string }>(projectPath(project._id, 'mail', 'webhook-secret'), { secret: secret || null });
          setWebhookUrl(r.webhookUrl);
          setSecret('');
          toast(r.hasWebhookSecret ? 'Webhook secret saved' : 'Webhook secret cleared');
          reload();
        } catch (err) {
          toastError(err);
        }
      }}>
        <h2>Delivery webhooks</h2>
        <p class="muted">Webhook secret: {project.hasMailWebhookSecret ? 'set (never shown)' : 'not set'}.</p>
        <Field label="Signing secret (whsec_…), empty to clear" type="password" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
        {webhookUrl && <p>Point your Resend webhook at <code>{webhookUrl}</code></p>}
        <div class="actions"><button class="btn" disabled={!!cannotSetSecret} title={cannotSetSecret}>Save webhook secret</button></div>
        <RoleNote what="Setting the webhook secret" reason={cannotSetSecret} />
      </form>
    </div>
  );
}

interface TemplateSummary { id: string; key: string; name: string; subject: string; updatedAt: string }
interface Template extends TemplateSummary { html: string; text: string }

function Templates({ pid }: { pid: string }) {
  const base = projectPath(pid, 'mail', 'templates');
  const list = useLoad((s) => api.get<{ templates: TemplateSummary[] }>(base, s), []);
  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const [deleting, setDeleting] = useState<TemplateSummary | null>(null);
  const cannotWrite = useGate(`POST /api/projects/:projectId/mail/templates`);
  if (editing) return <TemplateEditor base={base} template={editing === 'new' ? null : editing} onDone={() => { setEditing(null); list.reload(); }} />;
  return (
    <>
      <div class="actions start"><button type="button" class="btn primary" disabled={!!cannotWrite} title={cannotWrite} onClick={() => setEditing('new')}>New template</button></div>
      <RoleNote what="Creating, changing and deleting templates" reason={cannotWrite} />
      <Loadable state={list}>
        {({ templates }) => templates.length === 0 ? <Empty title="No templates yet"><p>The system templates (welcome, otp, password-reset, invite) are always there.</p></Empty> : (
          <table class="grid">
            <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Subject</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>{templates.map((t) => (
              <tr key={t.id}><td>{t.name}</td><td class="mono">{t.key}</td><td>{t.subject}</td><td>{dateTime(t.updatedAt)}</td>
                <td class="row-actions">
                  <button type="button" class="btn" onClick={async () => setEditing((await api.get<{ template: Template }>(`${base}/${t.id}`)).template)}>Edit</button>
                  <button type="button" class="btn danger" disabled={!!cannotWrite} title={cannotWrite} onClick={() => setDeleting(t)}>Delete</button>
                </td></tr>
            ))}</tbody>
          </table>
        )}
      </Loadable>
      {deleting && <Confirm title="Delete template?" message={<p>{deleting.name}</p>} action="Delete template" onConfirm={async () => { await api.del(`${base}/${deleting.id}`); toast('Template deleted'); list.reload(); }} onClose={() => setDeleting(null)} />}
    </>
  );
}

function TemplateEditor({ base, template, onDone }: { base: string; template: Template | null; onDone: () => void }) {
  const [t, setT] = useState({ name: template?.name ?? '', subject: template?.subject ?? '', html: template?.html ?? '<p>Hello {{ name }}</p>', text: template?.text ?? 'Hello {{ name }}' });
  const [vars, setVars] = useState('{"name": "Ann"}');
  const [preview, setPreview] = useState<{ subject: string; html: string; text: string } | null>(null);
  const [problem, setProblem] = useState<string>();
  const cannotCreate = useGate(`POST /api/projects/:projectId/mail/templates`);
  const cannotUpdate = useGate(`PATCH /api/projects/:projectId/mail/templates/:templateId`);
  const cannotSave = template ? cannotUpdate : cannotCreate;
  const cannotPreview = useGate(`POST /api/projects/:projectId/mail/templates/preview`);
  useEffect(() => {
    if (cannotPreview) return;
    const timer = setTimeout(async () => {
      let variables: Record<string, unknown>;
      try {
        variables = JSON.parse(vars || '{}');
      } catch {
        return setProblem('Variables must be a JSON object.');
      }
      try {
        setPreview(await api.post(`${base}/preview`, { subject: t.subject, html: t.html, text: t.text, variables }));
        setProblem(undefined);
      } catch (e) {
        setProblem((e as Error).message);
      }
    }, 300);
    return () => clearTimeout(timer);
  }, [t, vars]);
  return (
    <form class="split" onSubmit={async (e) => {
      e.preventDefault();
      try {
        if (template) await api.patch(`${base}/${template.id}`, t);
        else await api.post(base, t);
        toast('Template saved');
        onDone();
      } catch (err) {
        toastError(err);
      }
    }}>
      <div>
        <Field label="Name" required value={t.name} onInput={(e) => setT({ ...t, name: e.currentTarget.value })} />
        <Field label="Subject" required value={t.subject} onInput={(e) => setT({ ...t, subject: e.currentTarget.value })} />
        <div class="field"><label for="tpl-html">HTML</label><textarea id="tpl-html" class="mono" rows={10} value={t.html} onInput={(e) => setT({ ...t, html: e.currentTarget.value })} /></div>
        <div class="field"><label for="tpl-text">Text</label><textarea id="tpl-text" class="mono" rows={4} value={t.text} onInput={(e) => setT({ ...t, text: e.currentTarget.value })} /></div>
        <div class="field"><label for="tpl-vars">Preview variables (JSON)</label><textarea id="tpl-vars" class="mono" rows={3} value={vars} onInput={(e) => setVars(e.currentTarget.value)} /></div>
        <div class="actions"><button type="button" class="btn" onClick={onDone}>Cancel</button><button class="btn primary" disabled={!!cannotSave} title={cannotSave}>Save template</button></div>
        <RoleNote what="Saving and previewing templates" reason={cannotSave ?? cannotPreview} />
      </div>
      <MailPreview problem={problem} preview={preview} />
    </form>
  );
}

interface Log { id: string; providerEmailId: string | null; to: string[] | string; subject: string; status: string; provider: string; sentAt: string; error: string | null }

function Logs({ pid }: { pid: string }) {
  const state = useLoad((s) => api.get<{ logs: Log[] }>(projectPath(pid, 'mail', 'logs'), s), []);
  useEffect(() => {
    const timer = setInterval(state.reload, 10_000);
    return () => clearInterval(timer);
  }, []);
  return (
    <Loadable state={state}>
      {({ logs }) => logs.length === 0 ? <Empty title="No mail sent yet" /> : (
        <table class="grid">
          <caption class="sr-only">Latest 50 mails (refreshed every 10 s)</caption>
          <thead><tr><th scope="col">Sent</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Status</th><th scope="col">Via</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{logs.map((l) => (
            <tr key={l.id}><td>{dateTime(l.sentAt)}</td><td>{Array.isArray(l.to) ? l.to.join(', ') : l.to}</td><td>{l.subject}</td>
              <td><span class={`badge ${l.status}`}>{l.status}</span>{l.error && <small class="muted"> {l.error}</small>}</td><td>{l.provider}</td>
              <td>{l.providerEmailId && <button type="button" class="btn" onClick={async () => {
                try {
                  const r = await api.get<{ providerStatus: { last_event?: string } | null }>(projectPath(pid, 'mail', 'logs', l.providerEmailId!, 'live'));
                  toast(`Provider status: ${r.providerStatus?.last_event ?? 'unknown'}`);
                } catch (e) {
                  toastError(e);
                }
              }}>Live status</button>}</td></tr>
          ))}</tbody>
        </table>
      )}
    </Loadable>
  );
}

interface OutboxMessage { id: string; to: string[] | string; subject: string; html: string | null; text: string | null; lastEvent: string | null; createdAt: string }

function Outbox({ pid }: { pid: string }) {
  const state = useLoad((s) => api.get<{ messages: OutboxMessage[] }>(projectPath(pid, 'mail', 'outbox'), s), []);
  return (
    <Loadable state={state}>
      {({ messages }) => messages.length === 0 ? <Empty title="The dev outbox is empty"><p>Without a mail provider, messages land here instead of being delivered.</p></Empty> : (
        <ul class="outbox">{messages.map((m) => (
          <li key={m.id} class="card">
            <p><strong>{m.subject}</strong> → {Array.isArray(m.to) ? m.to.join(', ') : m.to} <span class="muted">{dateTime(m.createdAt)} · {m.lastEvent ?? 'queued'}</span></p>
            {m.text && <pre class="mail-text">{m.text}</pre>}
          </li>
        ))}</ul>
      )}
    </Loadable>
  );
}

interface Audience { id: string; name: string }
interface Contact { id: string; email: string; first_name?: string; unsubscribed?: boolean }

function Audiences({ pid }: { pid: string }) {
  const base = projectPath(pid, 'mail', 'audiences');
  const state = useLoad((s) => api.get<{ data: Audience[] }>(base, s), []);
  const [name, setName] = useState('');
  const [open, setOpen] = useState<Audience | null>(null);
  const cannotCreate = useGate(`POST /api/projects/:projectId/mail/audiences`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/mail/audiences/:audienceId`);
  return (
    <>
      <form class="inline-form" onSubmit={async (e) => {
        e.preventDefault();
        try { await api.post(base, { name }); setName(''); toast('Audience created'); state.reload(); } catch (err) { toastError(err); }
      }}>
        <label for="aud-name">New audience</label><input id="aud-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} /><button class="btn" disabled={!!cannotCreate} title={cannotCreate}>Create</button>
      </form>
      <RoleNote what="Creating and deleting audiences and their contacts" reason={cannotCreate} />
      <Loadable state={state}>
        {({ data }) => data.length === 0 ? <Empty title="No audiences"><p>Audiences need the project's own Resend key.</p></Empty> : (
          <ul class="plain">{data.map((a) => (
            <li key={a.id} class="field-row"><button type="button" class="link" onClick={() => setOpen(a)}>{a.name}</button>
              <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} onClick={async () => { try { await api.del(`${base}/${a.id}`); toast('Audience deleted'); state.reload(); } catch (e) { toastError(e); } }}>Delete</button></li>
          ))}</ul>
        )}
      </Loadable>
      {open && <Contacts base={`${base}/${open.id}/contacts`} audience={open} />}
    </>
  );
}

function Contacts({ base, audience }: { base: string; audience: Audience }) {
  const state = useLoad((s) => api.get<{ data: Contact[] }>(base, s), [base]);
  const [email, setEmail] = useState('');
  const cannotAdd = useGate(`POST /api/projects/:projectId/mail/audiences/:audienceId/contacts`);
  const cannotRemove = useGate(`DELETE /api/projects/:projectId/mail/audiences/:audienceId/contacts/:contactId`);
  return (
    <section aria-label={`Contacts of ${audience.name}`}>
      <h2>Contacts of {audience.name}</h2>
      <form class="inline-form" onSubmit={async (e) => {
        e.preventDefault();
        try { await api.post(base, { email }); setEmail(''); toast('Contact added'); state.reload(); } catch (err) { toastError(err); }
      }}>
        <label for="contact-email">Add a contact</label><input id="contact-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /><button class="btn" disabled={!!cannotAdd} title={cannotAdd}>Add</button>
      </form>
      <Loadable state={state}>
        {({ data }) => data.length === 0 ? <Empty title="No contacts" /> : (
          <ul class="plain">{data.map((c) => (
            <li key={c.id} class="field-row">{c.email}{c.unsubscribed ? ' (unsubscribed)' : ''}
              <button type="button" class="btn danger" disabled={!!cannotRemove} title={cannotRemove} onClick={async () => { try { await api.del(`${base}/${c.id}`); state.reload(); } catch (e) { toastError(e); } }}>Remove</button></li>
          ))}</ul>
        )}
      </Loadable>
    </section>
  );
}

interface Broadcast { id: string; name?: string; subject?: string; status?: string; audience_id?: string }

function Broadcasts({ pid }: { pid: string }) {
  const base = projectPath(pid, 'mail', 'broadcasts');
  const state = useLoad((s) => api.get<{ data: Broadcast[] }>(base, s), []);
  const [b, setB] = useState({ audienceId: '', subject: '', html: '' });
  const cannotCreate = useGate(`POST /api/projects/:projectId/mail/broadcasts`);
  const cannotSend = useGate(`POST /api/projects/:projectId/mail/broadcasts/:id/send`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/mail/broadcasts/:id`);
  return (
    <>
      <form onSubmit={async (e) => {
        e.preventDefault();
        try { await api.post(base, b); toast('Broadcast created (draft)'); state.reload(); } catch (err) { toastError(err); }
      }}>
        <h2>New broadcast</h2>
        <p class="muted">Broadcasts need the project's own Resend key and the Pro plan.</p>
        <Field label="Audience id" required value={b.audienceId} onInput={(e) => setB({ ...b, audienceId: e.currentTarget.value })} />
        <Field label="Subject" required value={b.subject} onInput={(e) => setB({ ...b, subject: e.currentTarget.value })} />
        <div class="field"><label for="bc-html">HTML</label><textarea id="bc-html" class="mono" rows={5} required value={b.html} onInput={(e) => setB({ ...b, html: e.currentTarget.value })} /></div>
        <div class="actions"><button class="btn primary" disabled={!!cannotCreate} title={cannotCreate}>Create draft</button></div>
        <RoleNote what="Creating, sending and deleting broadcasts" reason={cannotCreate} />
      </form>
      <Loadable state={state}>
        {({ data }) => data.length === 0 ? <Empty title="No broadcasts" /> : (
          <ul class="plain">{data.map((x) => (
            <li key={x.id} class="field-row">{x.name ?? x.subject ?? x.id} <span class="muted">{x.status}</span>
              <button type="button" class="btn" disabled={!!cannotSend} title={cannotSend} onClick={async () => { try { await api.post(`${base}/${x.id}/send`); toast('Broadcast sent'); state.reload(); } catch (e) { toastError(e); } }}>Send</button>
              <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} onClick={async () => { try { await api.del(`${base}/${x.id}`); state.reload(); } catch (e) { toastError(e); } }}>Delete</button></li>
          ))}</ul>
        )}
      </Loadable>
    </>
  );
}
