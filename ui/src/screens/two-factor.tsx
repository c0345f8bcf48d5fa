/**
 * The operator's authenticator app (Account screen): set up with a QR code and a first code,
 * then the ten recovery codes shown once; regenerate or remove with a fresh code.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { toast, toastError } from '../lib/toast';
import { Field } from '../components/ui';

interface Factors {
  totp: { confirmed: boolean } | null;
  recoveryCodesLeft: number;
  aal: string;
  required: boolean;
}

/** A typed code: six digits go as `code`, anything else as a recovery code. */
export const proofOf = (typed: string) => (/^\s*\d{6}\s*$/.test(typed) ? { code: typed.trim() } : { recoveryCode: typed.trim() });

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <section aria-labelledby="recovery-title">
      <h3 id="recovery-title">Your recovery codes</h3>
      <p>Each code signs you in once if you lose your phone. They are shown only now: store them somewhere safe.</p>
      <ul class="recovery-codes">{codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
      <div class="actions"><button class="btn primary" onClick={onDone}>I have saved them</button></div>
    </section>
  );
}

export function TwoFactor() {
  const [factors, setFactors] = useState<Factors>();
  const [enrolment, setEnrolment] = useState<{ secret: string; qrCode: string }>();
  const [codes, setCodes] = useState<string[]>();
  const [typed, setTyped] = useState('');
  const load = () => api.get<Factors>('/api/auth/mfa/factors').then(setFactors, toastError);
  useEffect(() => void load(), []);
  if (!factors) return <p>Loading…</p>;
  if (codes) return <RecoveryCodes codes={codes} onDone={() => { setCodes(undefined); void load(); }} />;

  const act = (fn: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    try {
      await fn();
      setTyped('');
    } catch (err) {
      toastError(err);
    }
  };

  if (enrolment) {
    return (
      <form onSubmit={act(async () => {
        const r = await api.post<{ recoveryCodes: string[] }>('/api/auth/mfa/totp/confirm', { code: typed.trim() });
        setEnrolment(undefined);
        setCodes(r.recoveryCodes);
        toast('Authenticator app enrolled');
      })}>
        <p>Scan this code with your authenticator app, or type the key by hand.</p>
        <img class="qr" src={enrolment.qrCode} width={200} height={200} alt="QR code of your authenticator app's setup key" />
        <p>Setup key: <code>{enrolment.secret}</code></p>
        <Field label="Code from the app" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <div class="actions"><button class="btn primary">Confirm</button></div>
      </form>
    );
  }

  if (!factors.totp?.confirmed) {
    return (
      <div>
        <p>{factors.required ? 'The administrator requires a second factor: set up an authenticator app to continue.' : 'Add a code from an authenticator app to every sign-in.'}</p>
        <div class="actions">
          <button class="btn primary" onClick={() => api.post<{ secret: string; qrCode: string }>('/api/auth/mfa/totp/enroll').then(setEnrolment, toastError)}>Set up authenticator app</button>
        </div>
      </div>
    );
  }

  return (
    <div>
      <p>An authenticator app is enrolled. Recovery codes left: {factors.recoveryCodesLeft}.</p>
      <form onSubmit={(e) => e.preventDefault()}>
        <Field label="Fresh code or recovery code" autoComplete="one-time-code" required value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <div class="actions">
          <button class="btn" type="button" onClick={act(async () => setCodes((await api.post<{ recoveryCodes: string[] }>('/api/auth/mfa/recovery-codes', proofOf(typed))).recoveryCodes))}>New recovery codes</button>
          <button class="btn danger" type="button" onClick={act(async () => {
            await api.del('/api/auth/mfa/totp', proofOf(typed));
            toast('Authenticator app removed');
            await load();
          })}>Remove authenticator app</button>
        </div>
      </form>
    </div>
  );
}
