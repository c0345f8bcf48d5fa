/** End users of the project: search, sessions (revoke), verify, disable/enable, delete. */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime, plural } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, PageHead, Pager } from '../components/ui';
import type { SectionProps } from './project-shell';

interface User {
  _id: string;
  email: string;
  name?: string;
  emailVerified: boolean;
  disabled: boolean;
  authProviders: string[];
  createdAt: string;
}
interface Session {
  id: string;
  ip: string | null;
  userAgent: string | null;
  lastUsedAt: string;
  expiresAt: string;
}

const LIMIT = 25;

function Sessions({ base, user, onClose }: { base: string; user: User; onClose: () => void }) {
  const state = useLoad((signal) => api.get<{ sessions: Session[] }>(`${base}/${user._id}/sessions`, signal), [user._id]);
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
                  <td><button type="button" class="btn" onClick={() => revoke(`${base}/${user._id}/sessions/${s.id}`)}>Revoke</button></td>
                </tr>
              ))}</tbody>
            </table>
            <div class="actions"><button type="button" class="btn danger" onClick={() => revoke(`${base}/${user._id}/sessions`)}>Revoke all</button></div>
          </>
        )}
      </Loadable>
    </Dialog>
  );
}

export default function Users({ project }: SectionProps) {
  const base = projectPath(project._id, 'users');
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const state = useLoad((signal) => api.get<{ items: User[]; total: number }>(`${base}?page=${page}&limit=${LIMIT}${search ? `&q=${encodeURIComponent(search)}` : ''}`, signal), [page, search]);
  const [sessionsOf, setSessionsOf] = useState<User | null>(null);
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
      <PageHead title="Users" />
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
              <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Signed up</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{items.map((u) => (
                <tr key={u._id} class={u.disabled ? 'deleted' : undefined}>
                  <td>{u.email}</td>
                  <td>{u.name ?? '—'}</td>
                  <td>{u.disabled ? 'disabled' : u.emailVerified ? 'verified' : 'unverified'}</td>
                  <td>{dateTime(u.createdAt)}</td>
                  <td class="row-actions">
                    <button type="button" class="btn" onClick={() => setSessionsOf(u)}>Sessions</button>
                    {!u.emailVerified && <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/verify`, 'User verified')}>Verify</button>}
                    {u.disabled
                      ? <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/enable`, 'User enabled')}>Enable</button>
                      : <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/disable`, 'User disabled, sessions revoked')}>Disable</button>}
                    <button type="button" class="btn danger" onClick={() => setDeleting(u)}>Delete</button>
                  </td>
                </tr>
              ))}</tbody>
            </table>
            <Pager status={`${plural(total, 'user')} · page ${page}`} hasPrevious={page > 1} hasNext={page * LIMIT < total}
              onPrevious={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
          </>
        )}
      </Loadable>
      {sessionsOf && <Sessions base={base} user={sessionsOf} onClose={() => setSessionsOf(null)} />}
      {deleting && (
        <Confirm title="Delete user?" message={<p><strong>{deleting.email}</strong> and their sessions are deleted. This cannot be undone.</p>} action="Delete user"
          onConfirm={async () => { await api.del(`${base}/${deleting._id}`); toast('User deleted'); state.reload(); }} onClose={() => setDeleting(null)} />
      )}
    </>
  );
}
