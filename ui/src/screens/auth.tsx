/**
 * Sign-in, registration, email verification by code (when the server sends mail), forgotten
 * password. The session arrives as HttpOnly cookies; the token in the answer is not kept.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api, ApiError, request } from '../lib/api';
import { href, navigate, route } from '../lib/router';
import { me } from '../lib/session';
import { toast } from '../lib/toast';
import type { Operator } from '../lib/types';
import { Field } from '../components/ui';
import { proofOf } from './two-factor';
import { getPasskey, passkeysSupported } from '../lib/webauthn';

function Card({ title, children, error }: { title: string; children: ComponentChildren; error?: string }) {
  return (
    <main class="auth">
      <div class="auth-card">
        <p class="brand">Plinth</p>
        <h1>{title}</h1>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        {children}
      </div>
    </main>
  );
}

function useForm() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = (fn: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

const signIn = (user: Operator) => {
  me.value = user;
  navigate('#/projects', true);
};

/** The second step of a sign-in: a code of the authenticator app, a recovery code, or a passkey. */
function SecondStep({ challengeId, methods }: { challengeId: string; methods: string[] }) {
  const [typed, setTyped] = useState('');
  const f = useForm();
  const withPasskey = methods.includes('passkey') && passkeysSupported();
  return (
    <Card title="Two-step sign-in" error={f.error}>
      {withPasskey && (
        <form onSubmit={f.run(async () => {
          const options = await request('POST', '/api/auth/mfa/passkey/options', { body: { challengeId }, noRefresh: true });
          const passkey = await getPasskey(options);
          const data = await request<{ user: Operator }>('POST', '/api/auth/mfa/verify', { body: { challengeId, passkey }, noRefresh: true });
          signIn(data.user);
        })}>
          <button class="btn primary wide" disabled={f.busy}>Use a passkey</button>
        </form>
      )}
      <form onSubmit={f.run(async () => {
        const data = await request<{ user: Operator }>('POST', '/api/auth/mfa/verify', { body: { challengeId, ...proofOf(typed) }, noRefresh: true });
        signIn(data.user);
      })}>
        <Field label={methods.includes('totp') ? 'Code from your authenticator app' : 'Recovery code'} hint={methods.includes('totp') ? 'Or one of your recovery codes.' : undefined}
          autoComplete="one-time-code" required value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <button class={withPasskey ? 'btn wide' : 'btn primary wide'} disabled={f.busy}>{f.busy ? 'Checking…' : 'Verify'}</button>
      </form>
      <p class="auth-links"><a href="#/login" onClick={() => location.reload()}>Start again</a></p>
    </Card>
  );
}

/** What a GitHub sign-in that came back with `?error=<code>` (the server's catalogue) tells the operator. */
export const GITHUB_ERRORS: Record<string, string> = {
  github_not_configured: 'GitHub sign-in is not configured on this server.',
  github_state_invalid: 'This GitHub sign-in expired, was already used or was started in another browser. Please start again.',
  github_denied: 'GitHub sign-in was cancelled.',
  github_email_unverified: 'Your GitHub account has no verified email address. Verify one at GitHub, then try again.',
  github_linked_elsewhere: 'The Plinth account with this email is linked to another GitHub account.',
  github_sign_in_failed: 'GitHub sign-in failed. Please try again.',
  github_unlinked: 'GitHub sign-in was unlinked from the account with this email. Sign in with your password, then link GitHub again under Account.',
  github_identity_taken: 'This GitHub account is linked to another Plinth account.',
  github_already_linked: 'Your account is already linked to another GitHub account: unlink it first.',
  rate_limited: 'Too many attempts. Please try again in 15 minutes.',
};

/** "Sign in with GitHub", when the server has a GitHub app for the console (a full-page redirect). */
function GithubButton({ busy }: { busy: boolean }) {
  const [enabled, setEnabled] = useState(false);
  useEffect(() => {
    request<{ enabled: boolean }>('GET', '/api/auth/github', { noRefresh: true }).then((d) => setEnabled(d.enabled), () => setEnabled(false));
  }, []);
  if (!enabled) return null;
  return <a class="btn wide" href="/api/auth/github/start" aria-disabled={busy ? 'true' : undefined}>Sign in with GitHub</a>;
}

export function Login() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const query = route.value.query;
  // Back from GitHub: an error code, or the second step of an operator with a second factor.
  const fromGithub = query.get('challengeId') ? { challengeId: query.get('challengeId')!, methods: (query.get('methods') ?? 'totp,recovery_code').split(',') } : undefined;
  const [challenge, setChallenge] = useState<{ challengeId: string; methods: string[] } | undefined>(fromGithub);
  const githubError = query.get('error');
  const f = useForm();
  if (challenge) return <SecondStep challengeId={challenge.challengeId} methods={challenge.methods} />;
  return (
    <Card title="Sign in" error={f.error ?? (githubError ? GITHUB_ERRORS[githubError] ?? `Sign-in failed (${githubError}).` : undefined)}>
      <form onSubmit={f.run(async () => {
        try {
          const data = await request<{ user: Operator; mfaRequired?: boolean; challengeId?: string; methods?: string[] }>('POST', '/api/auth/login', { body: { email, password }, noRefresh: true });
          if (data.mfaRequired && data.challengeId) return setChallenge({ challengeId: data.challengeId, methods: data.methods ?? ['totp', 'recovery_code'] });
          signIn(data.user);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'email_not_verified') navigate(`#/verify?email=${encodeURIComponent(email)}`);
          throw err;
        }
      })}>
        <Field label="Email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Field label="Password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button class="btn primary wide" disabled={f.busy}>{f.busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
      {passkeysSupported() && (
        <form onSubmit={f.run(async () => {
          const options = await request('POST', '/api/auth/passkeys/signin/options', { noRefresh: true });
          const response = await getPasskey(options);
          const data = await request<{ user: Operator }>('POST', '/api/auth/passkeys/signin', { body: { response }, noRefresh: true });
          signIn(data.user);
        })}>
          <button class="btn wide" disabled={f.busy}>Use a passkey</button>
        </form>
      )}
      <GithubButton busy={f.busy} />
      <p class="auth-links">
        <a href="#/register">Create an account</a> · <a href="#/forgot">Forgot password?</a>
      </p>
    </Card>
  );
}

export function Register() {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const f = useForm();
  return (
    <Card title="Create an account" error={f.error}>
      <form onSubmit={f.run(async () => {
        const data = await request<{ verificationRequired: boolean }>('POST', '/api/auth/register', { body: { email, password, name: name || undefined }, noRefresh: true });
        if (data.verificationRequired) {
          toast('Account created. Enter the code we emailed you.');
          navigate(`#/verify?email=${encodeURIComponent(email)}`);
          return;
        }
        const login = await request<{ user: Operator }>('POST', '/api/auth/login', { body: { email, password }, noRefresh: true });
        signIn(login.user);
      })}>
        <Field label="Name (optional)" autoComplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <Field label="Email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Field label="Password" type="password" autoComplete="new-password" required minLength={8} hint="At least 8 characters." value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button class="btn primary wide" disabled={f.busy}>{f.busy ? 'Creating…' : 'Create account'}</button>
      </form>
      <p class="auth-links">
        <a href="#/login">I have an account</a>
      </p>
    </Card>
  );
}

export function Verify() {
  const [email, setEmail] = useState(route.value.query.get('email') ?? '');
  const [otp, setOtp] = useState('');
  const [challenge, setChallenge] = useState<{ challengeId: string; methods: string[] }>();
  const f = useForm();
  // An account with a second factor: the mailed code verified the email, the factor signs in.
  if (challenge) return <SecondStep challengeId={challenge.challengeId} methods={challenge.methods} />;
  return (
    <Card title="Verify your email" error={f.error}>
      <form onSubmit={f.run(async () => {
        const data = await request<{ user: Operator; mfaRequired?: boolean; challengeId?: string; methods?: string[] }>('POST', '/api/auth/verify-otp', { body: { email, otp }, noRefresh: true });
        toast('Email verified.');
        if (data.mfaRequired && data.challengeId) return setChallenge({ challengeId: data.challengeId, methods: data.methods ?? ['totp', 'recovery_code'] });
        signIn(data.user);
      })}>
        <Field label="Email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Field label="6-digit code" inputMode="numeric" pattern="[0-9]{6}" autoComplete="one-time-code" required value={otp} onInput={(e) => setOtp(e.currentTarget.value.trim())} />
        <button class="btn primary wide" disabled={f.busy}>Verify</button>
      </form>
      <p class="auth-links">
        <button type="button" class="link" onClick={async () => {
          await api.post('/api/auth/send-otp', { email }).then(() => toast('If this account needs verification, a new code is on its way.'), (e: Error) => toast(e.message, 'error'));
        }}>Send a new code</button>
        {' · '}
        <a href="#/login">Back to sign in</a>
      </p>
    </Card>
  );
}

export function Forgot() {
  const [email, setEmail] = useState('');
  const f = useForm();
  return (
    <Card title="Reset your password" error={f.error}>
      <form onSubmit={f.run(async () => {
        await request('POST', '/api/auth/forgot-password', { body: { email }, noRefresh: true });
        toast('If the account exists, a reset code is on its way.');
        navigate(`#/reset?email=${encodeURIComponent(email)}`);
      })}>
        <Field label="Email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <button class="btn primary wide" disabled={f.busy}>Send reset code</button>
      </form>
      <p class="auth-links"><a href="#/login">Back to sign in</a></p>
    </Card>
  );
}

export function Reset() {
  const [email, setEmail] = useState(route.value.query.get('email') ?? '');
  const [otp, setOtp] = useState('');
  const [password, setPassword] = useState('');
  const f = useForm();
  return (
    <Card title="Choose a new password" error={f.error}>
      <form onSubmit={f.run(async () => {
        await request('POST', '/api/auth/reset-password', { body: { email, otp, newPassword: password }, noRefresh: true });
        toast('Password changed. Sign in with the new one.');
        navigate(href('login'));
      })}>
        <Field label="Email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Field label="6-digit code" inputMode="numeric" pattern="[0-9]{6}" required value={otp} onInput={(e) => setOtp(e.currentTarget.value.trim())} />
        <Field label="New password" type="password" autoComplete="new-password" minLength={8} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button class="btn primary wide" disabled={f.busy}>Change password</button>
      </form>
    </Card>
  );
}
