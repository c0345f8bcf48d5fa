/**
 * Mail → Auth mails: the verification, reset, magic-link and email-code mails per locale. Shows
 * the mail a reader of the chosen locale gets (the project's own text, else the built-in one)
 * and edits the project's own text with a live preview; sets the project's default locale.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { MailPreview } from '../components/mail-preview';
import { Field, Loadable, RoleNote, Select } from '../components/ui';
import { useGate } from '../lib/permissions';

interface Settings {
  defaultLocale: string;
  builtinLocales: string[];
  kinds: Array<{ kind: string; variables: string[] }>;
  templates: Array<{ kind: string; locale: string; subject: string; html: string; text: string; updatedAt: string }>;
}
interface Rendered { subject: string; html: string; text: string; locale: string; source: 'project' | 'builtin' }

const KIND_LABELS: Record<string, string> = { verification: 'Email verification', reset: 'Password reset', magic_link: 'Magic link', email_code: 'Sign-in code' };

export function AuthMails({ pid }: { pid: string }) {
  const base = projectPath(pid, 'mail', 'auth-templates');
  const state = useLoad((s) => api.get<Settings>(base, s), [pid]);
  return <Loadable state={state}>{(s) => <Editor base={base} settings={s} reload={state.reload} />}</Loadable>;
}

function Editor({ base, settings, reload }: { base: string; settings: Settings; reload: () => void }) {
  const [kind, setKind] = useState('verification');
  const [locale, setLocale] = useState(settings.defaultLocale);
  const [defaultLocale, setDefaultLocale] = useState(settings.defaultLocale);
  const [other, setOther] = useState('');
  const own = settings.templates.find((t) => t.kind === kind && t.locale === locale);
  const [draft, setDraft] = useState({ subject: '', html: '', text: '' });
  const [preview, setPreview] = useState<Rendered | null>(null);
  const [problem, setProblem] = useState<string>();
  const cannotSetDefault = useGate(`PUT /api/projects/:projectId/mail/auth-templates/default-locale`);
  const cannotSave = useGate(`PUT /api/projects/:projectId/mail/auth-templates/:kind/:locale`);
  const cannotRemove = useGate(`DELETE /api/projects/:projectId/mail/auth-templates/:kind/:locale`);
  // The preview renders with the project's mail settings: the server allows it to the roles that may edit.
  const cannotPreview = useGate(`POST /api/projects/:projectId/mail/auth-templates/preview`);
  useEffect(() => setDraft({ subject: own?.subject ?? '', html: own?.html ?? '', text: own?.text ?? '' }), [kind, locale, own?.updatedAt]);
  useEffect(() => {
    if (cannotPreview) return;
    const timer = setTimeout(async () => {
      const hasDraft = draft.subject || draft.html || draft.text;
      try {
        setPreview(await api.post<Rendered>(`${base}/preview`, { kind, locale, ...(hasDraft ? draft : {}) }));
        setProblem(undefined);
      } catch (e) {
        setProblem((e as Error).message);
      }
    }, 300);
    return () => clearTimeout(timer);
  }, [kind, locale, draft]);
  const locales = [...new Set([...settings.builtinLocales, ...settings.templates.map((t) => t.locale), locale])];
  const variables = settings.kinds.find((k) => k.kind === kind)?.variables ?? [];
  return (
    <div class="stack">
      <form class="actions start" onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api.put(`${base}/default-locale`, { locale: defaultLocale });
          toast('Default locale saved');
          reload();
        } catch (err) {
          toastError(err);
        }
      }}>
        <Field label="Default locale (when neither the user nor the browser names a known one)" value={defaultLocale} onInput={(e) => setDefaultLocale(e.currentTarget.value)} />
        <button class="btn" disabled={!!cannotSetDefault} title={cannotSetDefault}>Save default</button>
      </form>
      <RoleNote what="Changing the auth mails, their default locale and previewing them" reason={cannotSave ?? cannotSetDefault ?? cannotPreview} />
      <div class="actions start">
        <Select label="Mail" value={kind} options={settings.kinds.map((k) => ({ value: k.kind, label: KIND_LABELS[k.kind] ?? k.kind }))} onChange={setKind} />
        <Select label="Locale" value={locale} options={locales} onChange={setLocale} />
        <Field label="Other locale (e.g. pt-BR)" value={other} onInput={(e) => setOther(e.currentTarget.value)} />
        <button type="button" class="btn" disabled={!other.trim()} onClick={() => setLocale(other.trim())}>Show</button>
      </div>
      <form class="split" onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api.put(`${base}/${encodeURIComponent(kind)}/${encodeURIComponent(locale)}`, draft);
          toast('Auth mail saved');
          reload();
        } catch (err) {
          toastError(err);
        }
      }}>
        <div>
          <p class="muted">{own ? 'This project has its own text for this locale.' : 'The built-in text is used; write your own below.'} Variables: {variables.map((v) => <code key={v}>{`{{ ${v} }}`} </code>)}</p>
          <Field label="Subject" value={draft.subject} onInput={(e) => setDraft({ ...draft, subject: e.currentTarget.value })} />
          <div class="field"><label for="auth-html">HTML</label><textarea id="auth-html" class="mono" rows={8} value={draft.html} onInput={(e) => setDraft({ ...draft, html: e.currentTarget.value })} /></div>
          <div class="field"><label for="auth-text">Text</label><textarea id="auth-text" class="mono" rows={4} value={draft.text} onInput={(e) => setDraft({ ...draft, text: e.currentTarget.value })} /></div>
          <div class="actions">
            {own && <button type="button" class="btn danger" disabled={!!cannotRemove} title={cannotRemove} onClick={async () => {
              try {
                await api.del(`${base}/${encodeURIComponent(kind)}/${encodeURIComponent(locale)}`);
                toast('Own text removed: the built-in text applies');
                reload();
              } catch (err) {
                toastError(err);
              }
            }}>Use built-in text</button>}
            <button class="btn primary" disabled={!!cannotSave} title={cannotSave}>Save for {locale}</button>
          </div>
        </div>
        <MailPreview problem={problem} preview={preview}>
          {preview && <p class="muted">{preview.source === 'project' ? 'Project text' : 'Built-in text'} · {preview.locale}</p>}
        </MailPreview>
      </form>
    </div>
  );
}
