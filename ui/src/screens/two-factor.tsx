/**
 * The operator's second factors (Account screen): an authenticator app (set up with a QR code
 * and a first code) and passkeys (several, named); the ten recovery codes are shown once, when
 * the first factor is added or when they are regenerated. Removing a factor or regenerating
 * codes needs a fresh second factor: a typed code, or (empty field) one of the passkeys.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { dateTime } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { createPasskey, getPasskey, passkeysSupported } from '../lib/webauthn';
import { Field } from '../components/ui';

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

interface Factors {
  totp: { confirmed: boolean } | null;
  passkeys: Passkey[];
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
      <p>Each code signs you in once if you lose your phone or your passkeys. They are shown only now: store them somewhere safe.</p>
      <ul class="recovery-codes">{codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
      <div class="actions"><button class="btn primary" onClick={onDone}>I have saved them</button></div>
    </section>
  );
}

function Passkeys({ factors, freshProof, onChange, onCodes }: {
  factors: Factors; freshProof: () => Promise<object>; onChange: () => Promise<void>; onCodes: (codes: string[]) => void;
}) {
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; name: string }>();
  const supported = passkeysSupported();
  const run = (fn: () => Promise<void>) => async (e?: Event) => {
    e?.preventDefault();
    try {
      await fn();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <section aria-labelledby="passkeys-title">
      <h3 id="passkeys-title">Passkeys</h3>
      {factors.passkeys.length === 0 ? <p>No passkey yet. A passkey signs you in with your device's screen lock, without a password.</p> : (
        <table class="grid">
          <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{factors.passkeys.map((p) => (
            <tr key={p.id}>
              <td>{renaming?.id === p.id ? (
                <form class="inline-form" onSubmit={run(async () => {
                  await api.patch(`/api/auth/mfa/passkeys/${p.id}`, { name: renaming.name });
                  setRenaming(undefined);
                  toast('Passkey renamed');
                  await onChange();
                })}>
                  <label for={`rename-${p.id}`} class="sr-only">New name of {p.name}</label>
                  <input id={`rename-${p.id}`} required maxLength={100} value={renaming.name} onInput={(e) => setRenaming({ id: p.id, name: e.currentTarget.value })} />
                  <button class="btn">Save</button>
                </form>
              ) : p.name}</td>
              <td>{dateTime(p.createdAt)}</td>
              <td>{p.lastUsedAt ? dateTime(p.lastUsedAt) : 'never'}</td>
              <td class="row-actions">
                <button type="button" class="btn" aria-label={`Rename ${p.name}`} onClick={() => setRenaming({ id: p.id, name: p.name })}>Rename</button>
                <button type="button" class="btn danger" aria-label={`Remove ${p.name}`} onClick={run(async () => {
                  await api.del(`/api/auth/mfa/passkeys/${p.id}`, await freshProof());
                  toast('Passkey removed');
                  await onChange();
                })}>Remove</button>
              </td>
            </tr>
          ))}</tbody>
        </table>
      )}
      {supported ? (
        <form onSubmit={run(async () => {
          const options = await api.post('/api/auth/mfa/passkeys/register/options');
          const response = await createPasskey(options);
          const r = await api.post<{ recoveryCodes?: string[] }>('/api/auth/mfa/passkeys/register', { name: name.trim() || undefined, response });
          setName('');
          toast('Passkey added');
          if (r.recoveryCodes) onCodes(r.recoveryCodes);
          else await onChange();
        })}>
          <Field label="Passkey name" hint="For example the device it lives on." maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <div class="actions"><button class="btn">Add a passkey</button></div>
        </form>
      ) : <p>This browser cannot create passkeys.</p>}
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
  /** The typed code, or else a passkey's assertion over a fresh sign-in challenge. */
  const freshProof = async (): Promise<object> => {
    if (typed.trim()) return proofOf(typed);
    if (!factors.passkeys.length || !passkeysSupported()) throw new Error('Type a fresh code from your authenticator app or a recovery code first.');
    return { passkey: await getPasskey(await api.post('/api/auth/passkeys/signin/options')) };
  };
  const hasFactor = Boolean(factors.totp?.confirmed) || factors.passkeys.length > 0;

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

  return (
    <div>
      {factors.required && !hasFactor && <p>The administrator requires a second factor: set up an authenticator app or a passkey to continue.</p>}
      <section aria-labelledby="totp-title">
        <h3 id="totp-title">Authenticator app</h3>
        {factors.totp?.confirmed ? <p>An authenticator app is enrolled.</p> : (
          <>
            <p>Add a code from an authenticator app to every sign-in.</p>
            <div class="actions">
              <button class="btn primary" onClick={() => api.post<{ secret: string; qrCode: string }>('/api/auth/mfa/totp/enroll').then(setEnrolment, toastError)}>Set up authenticator app</button>
            </div>
          </>
        )}
      </section>
      <Passkeys factors={factors} freshProof={freshProof} onChange={load} onCodes={setCodes} />
      {hasFactor && (
        <section aria-labelledby="fresh-title">
          <h3 id="fresh-title">Recovery codes and removal</h3>
          <p>Recovery codes left: {factors.recoveryCodesLeft}.</p>
          <form onSubmit={(e) => e.preventDefault()}>
            <Field label="Fresh code or recovery code" hint={factors.passkeys.length ? 'Leave empty to confirm with one of your passkeys instead.' : undefined}
              autoComplete="one-time-code" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
            <div class="actions">
              <button class="btn" type="button" onClick={act(async () => setCodes((await api.post<{ recoveryCodes: string[] }>('/api/auth/mfa/recovery-codes', await freshProof())).recoveryCodes))}>New recovery codes</button>
              {factors.totp?.confirmed && <button class="btn danger" type="button" onClick={act(async () => {
                await api.del('/api/auth/mfa/totp', await freshProof());
                toast('Authenticator app removed');
                await load();
              })}>Remove authenticator app</button>}
            </div>
          </form>
        </section>
      )}
    </div>
  );
}
