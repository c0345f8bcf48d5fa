/**
 * Members: who shares this project and with which role (docs/teams.md). Admins invite by email,
 * change roles (up to their own), remove members and revoke pending invitations; the owner
 * offers the ownership to an admin, who accepts it here; anyone but the owner may leave. Every
 * control the signed-in operator's role forbids is hidden or disabled, with the reason.
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime } from '../lib/format';
import { navigate } from '../lib/router';
import { can, needs, type Role } from '../lib/roles';
import { me } from '../lib/session';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Field, Loadable, PageHead, Select } from '../components/ui';
import type { SectionProps } from './project-shell';

interface Member {
  operatorId: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: string;
}

interface Invitation {
  _id: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  expiresAt: string;
}

interface Transfer {
  toOperatorId: string;
  toEmail: string;
  expiresAt: string;
}

const GIVEN: Role[] = ['admin', 'developer', 'viewer'];

export default function Members({ project }: SectionProps) {
  const role = project.role;
  const myId = me.value?._id;
  const isAdmin = can(role, 'admin');
  const state = useLoad(async (signal) => {
    const [members, invitations, transfer] = await Promise.all([
      api.get<Member[]>(projectPath(project._id, 'members'), signal),
      isAdmin ? api.get<Invitation[]>(projectPath(project._id, 'members', 'invitations'), signal) : Promise.resolve([] as Invitation[]),
      api.get<Transfer | null>(projectPath(project._id, 'transfer'), signal),
    ]);
    return { members, invitations, transfer };
  }, [project._id, isAdmin]);
  const [invite, setInvite] = useState({ email: '', role: 'developer' as Role });
  const [removing, setRemoving] = useState<Member | null>(null);
  const [leaving, setLeaving] = useState(false);
  const [transferTo, setTransferTo] = useState('');
  const notAdmin = needs(role, 'admin');
  const notOwner = needs(role, 'owner');
  // An admin may give roles up to admin; only the owner outranks admins.
  const givable = GIVEN.filter((r) => can(role, r));

  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      toast(done);
      state.reload();
    } catch (err) {
      toastError(err);
    }
  };

  return (
    <>
      <PageHead title="Members" />
      <p class="muted">Your role: <strong>{role}</strong>. Viewers read; developers also change schemas, data, functions, webhooks and mail templates; admins also keys, settings and members; the owner also deletes and transfers the project.</p>
      {notAdmin && <p class="notice" id="members-role">Inviting, changing roles and removing members: {notAdmin}</p>}
      <Loadable state={state}>
        {({ members, invitations, transfer }) => (
          <>
            {transfer && (
              <div class="notice" role="status">
                <p>Ownership offered to <strong>{transfer.toEmail}</strong> until {dateTime(transfer.expiresAt)}.</p>
                <div class="actions start">
                  {transfer.toOperatorId === myId && (
                    <button type="button" class="btn primary" onClick={() => act(() => api.post(projectPath(project._id, 'transfer', 'accept')), 'You are now the owner of the project').then(() => location.reload())}>Accept ownership</button>
                  )}
                  {(transfer.toOperatorId === myId || role === 'owner') && (
                    <button type="button" class="btn" onClick={() => act(() => api.del(projectPath(project._id, 'transfer')), 'Ownership transfer cancelled')}>{role === 'owner' ? 'Withdraw offer' : 'Decline'}</button>
                  )}
                </div>
              </div>
            )}
            <div class="table-wrap"><table class="grid">
              <caption class="sr-only">Members of {project.name}</caption>
              <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {members.map((m) => {
                  const untouchable = m.role === 'owner' ? 'The owner’s role changes only by an ownership transfer.' : notAdmin ?? (!can(role, m.role) ? `Needs a role above ${m.role}; your role is ${role}.` : undefined);
                  return (
                    <tr key={m.operatorId}>
                      <td>{m.name ? `${m.name} ` : ''}<span class="mono">{m.email}</span>{m.operatorId === myId && <span class="muted"> (you)</span>}</td>
                      <td>
                        {untouchable ? (
                          <span title={untouchable}>{m.role}</span>
                        ) : (
                          <Select label={`Role of ${m.email}`} hideLabel value={m.role} options={givable} onChange={(r) => act(() => api.patch(projectPath(project._id, 'members', m.operatorId), { role: r }), `${m.email} is now ${r}`)} />
                        )}
                      </td>
                      <td>{dateTime(m.createdAt)}</td>
                      <td>
                        {m.operatorId === myId ? (
                          m.role === 'owner'
                            ? <span class="muted small">The owner cannot leave; transfer the ownership first.</span>
                            : <button type="button" class="btn" onClick={() => setLeaving(true)}>Leave project</button>
                        ) : (
                          <button type="button" class="btn danger" disabled={!!untouchable} title={untouchable} aria-label={`Remove ${m.email}`} onClick={() => setRemoving(m)}>Remove</button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table></div>

            {isAdmin && (
              <>
                <h2>Invite</h2>
                <form class="inline-form" onSubmit={async (e) => {
                  e.preventDefault();
                  await act(() => api.post(projectPath(project._id, 'members', 'invitations'), invite), `Invitation sent to ${invite.email}`);
                  setInvite({ ...invite, email: '' });
                }}>
                  <Field label="Email" type="email" required value={invite.email} onInput={(e) => setInvite({ ...invite, email: e.currentTarget.value })} />
                  <Select label="Role" value={invite.role} options={givable} onChange={(r) => setInvite({ ...invite, role: r as Role })} />
                  <div class="actions start"><button class="btn primary">Send invitation</button></div>
                </form>
                <p class="muted small">The link in the mail works once and expires in 7 days. It must be opened signed in with the invited address (or used to create that account).</p>
                <h2>Pending invitations</h2>
                {invitations.length === 0 ? <p class="muted">None.</p> : (
                  <div class="table-wrap"><table class="grid">
                    <caption class="sr-only">Pending invitations</caption>
                    <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
                    <tbody>
                      {invitations.map((i) => (
                        <tr key={i._id}>
                          <td class="mono">{i.email}</td><td>{i.role}</td><td>{i.invitedBy ?? '—'}</td><td>{dateTime(i.expiresAt)}</td>
                          <td><button type="button" class="btn" aria-label={`Revoke the invitation of ${i.email}`} onClick={() => act(() => api.del(projectPath(project._id, 'members', 'invitations', i._id)), 'Invitation revoked')}>Revoke</button></td>
                        </tr>
                      ))}
                    </tbody>
                  </table></div>
                )}
              </>
            )}

            <h2>Transfer ownership</h2>
            {notOwner ? (
              <p class="muted" id="transfer-role">Transferring the project: {notOwner}</p>
            ) : (
              <form class="inline-form" onSubmit={(e) => {
                e.preventDefault();
                if (transferTo) void act(() => api.post(projectPath(project._id, 'transfer'), { operatorId: transferTo }), 'Ownership offered: it moves when they accept');
              }}>
                <Select label="New owner (an admin)" value={transferTo} options={[{ value: '', label: 'Choose an admin…' }, ...members.filter((m) => m.role === 'admin').map((m) => ({ value: m.operatorId, label: m.email }))]} onChange={setTransferTo} />
                <div class="actions start"><button class="btn" disabled={!transferTo}>Offer ownership</button></div>
              </form>
            )}
          </>
        )}
      </Loadable>
      {removing && (
        <Confirm title={`Remove ${removing.email}?`} message={<p>They lose access to this project from their next request; their open console streams end.</p>} action="Remove"
          onConfirm={() => act(() => api.del(projectPath(project._id, 'members', removing.operatorId)), `${removing.email} removed`)}
          onClose={() => setRemoving(null)} />
      )}
      {leaving && (
        <Confirm title={`Leave “${project.name}”?`} message={<p>You lose access to this project until someone invites you again.</p>} action="Leave project"
          onConfirm={async () => {
            await api.post(projectPath(project._id, 'members', 'leave'));
            toast('You left the project');
            navigate('#/projects');
          }}
          onClose={() => setLeaving(false)} />
      )}
    </>
  );
}
