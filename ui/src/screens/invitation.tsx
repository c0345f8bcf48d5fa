/**
 * An invitation link (#/invitations/<token>, docs/teams.md): what it invites to, then, signed in
 * with the invited address, one button to join. Signed out: sign in, or create the account with
 * that address (the usual sign-up and email verification), then open the link again.
 */
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { dateTime } from '../lib/format';
import { href, navigate } from '../lib/router';
import { me } from '../lib/session';
import { toast } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Loadable, PageHead } from '../components/ui';

interface Preview {
  projectName: string;
  email: string;
  role: string;
  invitedBy: string | null;
  expiresAt: string;
  accountExists: boolean;
}

export default function InvitationScreen({ token }: { token: string }) {
  const state = useLoad(() => api.post<Preview>('/api/invitations/lookup', { token }), [token]);
  const [error, setError] = useState<string>();
  const user = me.value;
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <PageHead title="Invitation" />
      <Loadable state={state}>
        {(inv) => (
          <>
            <p>{inv.invitedBy ?? 'Someone'} invites <strong>{inv.email}</strong> to the project <strong>{inv.projectName}</strong> as <strong>{inv.role}</strong>.</p>
            <p class="muted small">The link works once, until {dateTime(inv.expiresAt)}.</p>
            {error && <p class="form-error" role="alert">{error}</p>}
            {user ? (
              user.email === inv.email ? (
                <div class="actions start">
                  <button type="button" class="btn primary" onClick={async () => {
                    try {
                      const joined = await api.post<{ _id: string; role: string }>('/api/invitations/accept', { token });
                      toast(`You joined ${inv.projectName} as ${joined.role}`);
                      navigate(href('p', joined._id, 'collections'));
                    } catch (err) {
                      setError((err as Error).message);
                    }
                  }}>Join {inv.projectName}</button>
                </div>
              ) : (
                <p class="notice">You are signed in as {user.email}. This invitation is for {inv.email}: sign out and sign in with that address.</p>
              )
            ) : (
              <>
                <p>{inv.accountExists ? `Sign in as ${inv.email}, then open this link again.` : `Create your account with ${inv.email}, then open this link again.`}</p>
                <div class="actions start">
                  <a class="btn primary" href={href(inv.accountExists ? 'login' : 'register')}>{inv.accountExists ? 'Sign in' : 'Create account'}</a>
                </div>
              </>
            )}
          </>
        )}
      </Loadable>
    </main>
  );
}
