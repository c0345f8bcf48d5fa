/** The operator's own account: profile, password, two-step sign-in, sessions, GitHub, and the account AI key. */
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { me } from '../lib/session';
import { navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { Field, PageHead } from '../components/ui';
import { KeyForm } from './ai';
import { TwoFactor } from './two-factor';
import { Sessions } from './sessions';
import { LinkedAccounts } from './linked-accounts';

export default function Account() {
  const user = me.value!;
  const [hasKey, setHasKey] = useState(false);
  const [pw, setPw] = useState({ currentPassword: '', newPassword: '' });
  const [deletePw, setDeletePw] = useState('');
  const [deleteError, setDeleteError] = useState<string>();
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <PageHead title="Account" />
      <dl class="meta">
        <dt>Email</dt><dd>{user.email}</dd>
        <dt>Plan</dt><dd>{user.plan}</dd>
        <dt>Email verified</dt><dd>{user.isVerified ? 'yes' : 'no'}</dd>
      </dl>
      <h2>Change password</h2>
      <form onSubmit={async (e) => {
        e.preventDefault();
        try {
          await api.put('/api/auth/change-password', pw);
          setPw({ currentPassword: '', newPassword: '' });
          toast('Password changed');
        } catch (err) {
          toastError(err);
        }
      }}>
        <Field label="Current password" type="password" autoComplete="current-password" required value={pw.currentPassword} onInput={(e) => setPw({ ...pw, currentPassword: e.currentTarget.value })} />
        <Field label="New password" type="password" autoComplete="new-password" minLength={8} required value={pw.newPassword} onInput={(e) => setPw({ ...pw, newPassword: e.currentTarget.value })} />
        <div class="actions"><button class="btn primary">Change password</button></div>
      </form>
      <h2>Two-step sign-in</h2>
      <TwoFactor />
      <Sessions />
      <LinkedAccounts />
      <h2>Account AI key</h2>
      <KeyForm url="/api/user/me/byok" has={hasKey} what="Your account key (used by all your projects without their own)" onSaved={setHasKey} />
      <h2>Delete account</h2>
      <p class="muted">Refused while you own projects: transfer or delete them first. Your memberships and sessions end.</p>
      {deleteError && <p class="form-error" role="alert">{deleteError}</p>}
      <form onSubmit={async (e) => {
        e.preventDefault();
        setDeleteError(undefined);
        try {
          await api.del('/api/auth/me', { password: deletePw });
          me.value = null;
          navigate('#/login');
        } catch (err) {
          setDeleteError((err as Error).message);
        }
      }}>
        <Field label="Password to confirm" type="password" autoComplete="current-password" required value={deletePw} onInput={(e) => setDeletePw(e.currentTarget.value)} />
        <div class="actions"><button class="btn danger">Delete my account</button></div>
      </form>
    </main>
  );
}
