/**
 * End users of the project: search, create and edit (a form built from the users schema, like
 * the records form, read-only and hidden fields included), sessions (revoke), second factors
 * (see, reset), verify, disable/enable, delete.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, projectPath } from '../lib/api';
import { fieldOfMessage, fromForm, toForm, type FormState } from '../lib/doc-form';
import type { FieldDef } from '../lib/types';
import { validateDocument } from '../lib/validate';
import { DocumentForm } from '../components/document-form';
import { dateTime, plural } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, PageHead, Pager } from '../components/ui';
import { RoleNote } from '../components/ui';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

interface User {
  _id: string;
  email: string;
  name?: string;
  role?: unknown;
  emailVerified: boolean;
  disabled: boolean;
  authProviders: string[];
  createdAt: string;
  [field: string]: unknown;
}

/** Keys of a user that are not profile fields: the account's own members and the system's. */
const ACCOUNT_KEYS = new Set([
  '_id', 'email', 'password', 'emailVerified', 'isVerified', 'isverified', 'authProviders', 'isAnonymous', 'disabled',
  'githubId', 'googleId', 'createdAt', 'updatedAt',
]);
const profileFieldsOf = (fields: FieldDef[]) => fields.filter((f) => !ACCOUNT_KEYS.has(f.key));
const profileOf = (user: User) => Object.fromEntries(Object.entries(user).filter(([k]) => !ACCOUNT_KEYS.has(k)));

type Problem = { message: string; field?: string };

/**
 * Create or edit one user: email, password (optional; a new one revokes their sessions), email
 * verified, and on creation an invitation; then the profile as the records form shows a
 * document. The operator may set read-only fields (a role) and sees and sets hidden ones.
 */
function UserEditor({ base, fields, user, onClose, onSaved }: { base: string; fields: FieldDef[]; user: User | null; onClose: () => void; onSaved: () => void }) {
  const profile = profileFieldsOf(fields);
  const original = user ? profileOf(user) : null;
  const [email, setEmail] = useState(user?.email ?? '');
  const [password, setPassword] = useState('');
  const [verified, setVerified] = useState(user?.emailVerified ?? false);
  const [invite, setInvite] = useState(false);
  const [form, setForm] = useState<FormState>(() => toForm(profile, original));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const cannotCreate = useGate(`POST /api/projects/:projectId/users`);
  const cannotUpdate = useGate(`PATCH /api/projects/:projectId/users/:userId`);
  const cannotSave = user ? cannotUpdate : cannotCreate;
  const save = async (e: Event) => {
    e.preventDefault();
    if (cannotSave) return;
    const r = fromForm(profile, form, original);
    if (!r.ok) return setProblem({ message: r.message, field: r.field });
    const err = validateDocument(profile, r.value, user ? 'update' : 'insert');
    if (err) return setProblem({ message: err, field: fieldOfMessage(err) });
    setProblem(null);
    const body: Record<string, unknown> = { data: r.value, emailVerified: verified };
    if (!user || email.trim() !== user.email) body.email = email;
    if (password) body.password = password;
    if (!user && invite && !password) body.invite = true;
    setBusy(true);
    try {
      if (user) await api.patch(`${base}/${user._id}`, body);
      else await api.post(base, body);
      toast(user ? 'User saved' : invite && !password ? 'User created, invitation sent' : 'User created');
      onSaved();
      onClose();
    } catch (e) {
      if (e instanceof ApiError) setProblem({ message: e.message, field: fieldOfMessage(e.message) });
      else toastError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
      <form class="user-editor" onSubmit={save}>
        <div class="doc-form">
          <div class="field">
            <label for="user-email">Email</label>
            <input id="user-email" type="text" inputMode="email" autocomplete="off" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="user-password">{user ? 'New password' : 'Password'}</label>
            <input id="user-password" type="password" autocomplete="new-password" minLength={6} maxLength={100} value={password} aria-describedby="user-password-hint" onInput={(e) => setPassword(e.currentTarget.value)} />
            <small id="user-password-hint" class="hint">{user ? 'Leave empty to keep it; a new one signs them out everywhere.' : 'Optional: without one, they sign in by invitation, link, code or provider.'}</small>
          </div>
          <div class="field">
            <label for="user-verified">Email verified</label>
            <label class="toggle"><input id="user-verified" type="checkbox" role="switch" checked={verified} onChange={(e) => setVerified(e.currentTarget.checked)} /><span>{verified ? 'true' : 'false'}</span></label>
          </div>
          {!user && (
            <div class="field">
              <label for="user-invite">Send an invitation</label>
              <label class="toggle"><input id="user-invite" type="checkbox" role="switch" checked={invite && !password} disabled={!!password} aria-describedby="user-invite-hint" onChange={(e) => setInvite(e.currentTarget.checked)} /><span>{invite && !password ? 'yes' : 'no'}</span></label>
              <small id="user-invite-hint" class="hint">A sign-in link and code by mail, valid 24 hours (only without a password).</small>
            </div>
          )}
        </div>
        <h3>Profile</h3>
        <DocumentForm fields={profile} state={form} problem={problem} onChange={setForm} />
        {problem && problem.field === undefined && <p class="form-error" role="alert">{problem.message}</p>}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button class="btn primary" disabled={busy || !!cannotSave} title={cannotSave}>{user ? 'Save user' : 'Create user'}</button>
        </div>
      </form>
  );
}

/** One dialog for the whole edit (closing a dialog closes the editor): the user loaded in full, hidden fields included. */
function EditUser({ base, fields, id, onClose, onSaved }: { base: string; fields: FieldDef[]; id: string; onClose: () => void; onSaved: () => void }) {
  const state = useLoad((signal) => api.get<User>(`${base}/${id}`, signal), [id]);
  return (
    <Dialog title="Edit user" onClose={onClose} wide>
      <Loadable state={state}>{(user) => <UserEditor base={base} fields={fields} user={user} onClose={onClose} onSaved={onSaved} />}</Loadable>
    </Dialog>
  );
}
interface Session {
  id: string;
  ip: string | null;
  userAgent: string | null;
  lastUsedAt: string;
  expiresAt: string;
}

interface Factors {
  totp: { confirmed: boolean; createdAt: string } | null;
  passkeys: Array<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;
  recoveryCodesLeft: number;
}

const LIMIT = 25;

/** Which second factors a user has (kinds, names, dates; never a secret), and a reset (audited on the server). */
function SecondFactors({ base, user, onClose }: { base: string; user: User; onClose: () => void }) {
  const state = useLoad((signal) => api.get<Factors>(`${base}/${user._id}/factors`, signal), [user._id]);
  const [resetting, setResetting] = useState(false);
  const cannotReset = useGate(`DELETE /api/projects/:projectId/users/:userId/factors`);
  return (
    <Dialog title={`Second factors of ${user.email}`} onClose={onClose} wide>
      <Loadable state={state}>
        {(f) => !f.totp && f.passkeys.length === 0 ? <Empty title="No second factor"><p>This user signs in with one factor.</p></Empty> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th></tr></thead>
              <tbody>
                {f.totp && <tr><td>Authenticator app</td><td>{f.totp.confirmed ? '—' : 'set-up not finished'}</td><td>{dateTime(f.totp.createdAt)}</td><td>—</td></tr>}
                {f.passkeys.map((p) => <tr key={p.id}><td>Passkey</td><td>{p.name}</td><td>{dateTime(p.createdAt)}</td><td>{p.lastUsedAt ? dateTime(p.lastUsedAt) : 'never'}</td></tr>)}
              </tbody>
            </table>
            <p>Recovery codes left: {f.recoveryCodesLeft}.</p>
            <div class="actions"><button type="button" class="btn danger" disabled={!!cannotReset} title={cannotReset} onClick={() => setResetting(true)}>Reset second factors</button></div>
            <RoleNote what="Resetting second factors" reason={cannotReset} />
          </>
        )}
      </Loadable>
      {resetting && (
        <Confirm title="Reset second factors?" action="Reset"
          message={<p>The authenticator app, passkeys and recovery codes of <strong>{user.email}</strong> are removed and their sessions drop to one factor. They sign in with their password alone and can enrol again. The reset is recorded in the audit log.</p>}
          onConfirm={async () => { await api.del(`${base}/${user._id}/factors`); toast('Second factors reset'); state.reload(); }} onClose={() => setResetting(false)} />
      )}
    </Dialog>
  );
}

function Sessions({ base, user, onClose }: { base: string; user: User; onClose: () => void }) {
  const state = useLoad((signal) => api.get<{ sessions: Session[] }>(`${base}/${user._id}/sessions`, signal), [user._id]);
  const cannotRevoke = useGate(`DELETE /api/projects/:projectId/users/:userId/sessions/:sessionId`);
  const cannotRevokeAll = useGate(`DELETE /api/projects/:projectId/users/:userId/sessions`);
  const revoke = async (path: string) => {
    try {
      await api.del(path);
      toast('Revoked');
      state.reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <Dialog title={`Sessions of ${user.email}`} onClose={onClose} wide>
      <Loadable state={state}>
        {({ sessions }) => sessions.length === 0 ? <Empty title="No live sessions" /> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">IP</th><th scope="col">Browser</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{sessions.map((s) => (
                <tr key={s.id}>
                  <td>{dateTime(s.lastUsedAt)}</td><td>{dateTime(s.expiresAt)}</td><td>{s.ip ?? '—'}</td><td class="clip">{s.userAgent ?? '—'}</td>
                  <td><button type="button" class="btn" disabled={!!cannotRevoke} title={cannotRevoke} onClick={() => revoke(`${base}/${user._id}/sessions/${s.id}`)}>Revoke</button></td>
                </tr>
              ))}</tbody>
            </table>
            <div class="actions"><button type="button" class="btn danger" disabled={!!cannotRevokeAll} title={cannotRevokeAll} onClick={() => revoke(`${base}/${user._id}/sessions`)}>Revoke all</button></div>
            <RoleNote what="Revoking sessions" reason={cannotRevokeAll} />
          </>
        )}
      </Loadable>
    </Dialog>
  );
}

export default function Users({ project, collections }: SectionProps) {
  const base = projectPath(project._id, 'users');
  const usersCollection = collections.find((c) => c.name.toLowerCase() === 'users');
  // Each control names the route it calls (all the developer role's, as the server enforces).
  const cannotWrite = useGate(`PATCH /api/projects/:projectId/users/:userId`);
  const cannotCreate = useGate(`POST /api/projects/:projectId/users`);
  const cannotVerify = useGate(`POST /api/projects/:projectId/users/:userId/verify`);
  const cannotEnable = useGate(`POST /api/projects/:projectId/users/:userId/enable`);
  const cannotDisable = useGate(`POST /api/projects/:projectId/users/:userId/disable`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/users/:userId`);
  const fields = usersCollection?.model ?? [];
  const hasRole = fields.some((f) => f.key === 'role');
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const state = useLoad((signal) => api.get<{ items: User[]; total: number }>(`${base}?page=${page}&limit=${LIMIT}${search ? `&q=${encodeURIComponent(search)}` : ''}`, signal), [page, search]);
  const [sessionsOf, setSessionsOf] = useState<User | null>(null);
  const [factorsOf, setFactorsOf] = useState<User | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const act = async (path: string, message: string) => {
    try {
      await api.post(path);
      toast(message);
      state.reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <>
      <PageHead title="Users">
        <button type="button" class="btn primary" disabled={!usersCollection || !!cannotCreate} title={cannotCreate ?? (usersCollection ? undefined : 'Create a users collection first')} onClick={() => setEditing('new')}>New user</button>
      </PageHead>
      <RoleNote what="Creating, changing, verifying, disabling and deleting users" reason={cannotWrite} />
      <form class="inline-form" role="search" onSubmit={(e) => { e.preventDefault(); setPage(1); setSearch(q.trim()); }}>
        <label for="user-search">Search users</label>
        <input id="user-search" type="search" class="grow" placeholder="email, name, username or id" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button class="btn">Search</button>
      </form>
      <Loadable state={state}>
        {({ items, total }) => items.length === 0 ? (
          <Empty title={search ? 'No user matches' : 'No end users yet'}>
            <p>{search ? 'Try part of the email.' : 'Users appear here when they sign up through /api/userAuth (a users collection is needed).'}</p>
          </Empty>
        ) : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Email</th><th scope="col">Name</th>{hasRole && <th scope="col">Role</th>}<th scope="col">Status</th><th scope="col">Signed up</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{items.map((u) => (
                <tr key={u._id} class={u.disabled ? 'deleted' : undefined}>
                  <td>{u.email}</td>
                  <td>{u.name ?? '—'}</td>
                  {hasRole && <td>{u.role === undefined || u.role === null ? '—' : String(u.role)}</td>}
                  <td>{u.disabled ? 'disabled' : u.emailVerified ? 'verified' : 'unverified'}</td>
                  <td>{dateTime(u.createdAt)}</td>
                  <td class="row-actions">
                    {usersCollection && <button type="button" class="btn" disabled={!!cannotWrite} title={cannotWrite} aria-label={`Edit ${u.email}`} onClick={() => setEditing(u._id)}>Edit</button>}
                    <button type="button" class="btn" onClick={() => setSessionsOf(u)}>Sessions</button>
                    <button type="button" class="btn" onClick={() => setFactorsOf(u)}>Second factors</button>
                    {!u.emailVerified && <button type="button" class="btn" disabled={!!cannotVerify} title={cannotVerify} onClick={() => act(`${base}/${u._id}/verify`, 'User verified')}>Verify</button>}
                    {u.disabled
                      ? <button type="button" class="btn" disabled={!!cannotEnable} title={cannotEnable} onClick={() => act(`${base}/${u._id}/enable`, 'User enabled')}>Enable</button>
                      : <button type="button" class="btn" disabled={!!cannotDisable} title={cannotDisable} onClick={() => act(`${base}/${u._id}/disable`, 'User disabled, sessions revoked')}>Disable</button>}
                    <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} onClick={() => setDeleting(u)}>Delete</button>
                  </td>
                </tr>
              ))}</tbody>
            </table>
            <Pager status={`${plural(total, 'user')} · page ${page}`} hasPrevious={page > 1} hasNext={page * LIMIT < total}
              onPrevious={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
          </>
        )}
      </Loadable>
      {editing === 'new' && (
        <Dialog title="New user" onClose={() => setEditing(null)} wide>
          <UserEditor base={base} fields={fields} user={null} onClose={() => setEditing(null)} onSaved={state.reload} />
        </Dialog>
      )}
      {editing && editing !== 'new' && <EditUser base={base} fields={fields} id={editing} onClose={() => setEditing(null)} onSaved={state.reload} />}
      {sessionsOf && <Sessions base={base} user={sessionsOf} onClose={() => setSessionsOf(null)} />}
      {factorsOf && <SecondFactors base={base} user={factorsOf} onClose={() => setFactorsOf(null)} />}
      {deleting && (
        <Confirm title="Delete user?" message={<p><strong>{deleting.email}</strong> and their sessions are deleted. This cannot be undone.</p>} action="Delete user"
          onConfirm={async () => { await api.del(`${base}/${deleting._id}`); toast('User deleted'); state.reload(); }} onClose={() => setDeleting(null)} />
      )}
    </>
  );
}
