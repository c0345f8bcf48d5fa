/** Small building blocks shared by the screens: states, fields, dialogs, toasts, meters. */
import type { ComponentChildren, InputHTMLAttributes, TargetedEvent } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { dismiss, toastError, toasts } from '../lib/toast';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="state" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state empty">
      <p class="state-title">{title}</p>
      {children}
    </div>
  );
}

export function ErrorBox({ error, retry }: { error: Error; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p class="state-title">Something went wrong</p>
      <p>{error.message}</p>
      {retry && (
        <button type="button" class="btn" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** Loading, error or the content: every screen goes through this, so none is ever blank. */
export function Loadable<T>({ state, children }: { state: { data?: T; error?: Error; loading: boolean; reload: () => void }; children: (data: T) => ComponentChildren }) {
  if (state.error) return <ErrorBox error={state.error} retry={state.reload} />;
  if (state.data === undefined) return <Spinner />;
  return <>{children(state.data)}</>;
}

interface InputProps {
  label: string;
  hint?: string;
  type?: string;
  value?: string | number;
  placeholder?: string;
  required?: boolean;
  disabled?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: string | number;
  max?: string | number;
  step?: string | number;
  pattern?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'text' | 'email' | 'url';
  list?: string;
  class?: string;
  onInput?: (e: TargetedEvent<HTMLInputElement, Event>) => void;
}

export function Field({ label, hint, ...input }: InputProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} {...(input as InputHTMLAttributes<HTMLInputElement>)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export function Check({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.currentTarget.checked)} /> {label}
    </label>
  );
}

export function Select({ label, value, options, onChange, hideLabel }: { label: string; value: string; options: Array<string | { value: string; label: string }>; onChange: (v: string) => void; hideLabel?: boolean }) {
  const id = useId();
  return (
    <div class={hideLabel ? 'field inline' : 'field'}>
      <label for={id} class={hideLabel ? 'sr-only' : undefined}>
        {label}
      </label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map((o) => (typeof o === 'string' ? <option value={o}>{o}</option> : <option value={o.value}>{o.label}</option>))}
      </select>
    </div>
  );
}

/** A modal dialog (native <dialog>: focus stays inside, Escape closes). */
export function Dialog({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} class={wide ? 'dialog wide' : 'dialog'} aria-labelledby={id} onClose={onClose} onCancel={onClose}>
      <header class="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" class="btn ghost" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </header>
      {children}
    </dialog>
  );
}

/**
 * Confirmation for destructive actions; with `typed`, the user must type that text (a
 * project or collection name) before the button works.
 */
export function Confirm(props: { title: string; message: ComponentChildren; action: string; typed?: string; onConfirm: () => Promise<void> | void; onClose: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const ok = !props.typed || text === props.typed;
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!ok) return;
          setBusy(true);
          try {
            await props.onConfirm();
            props.onClose();
          } catch (err) {
            toastError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="dialog-body">{props.message}</div>
        {props.typed && <Field label={`Type “${props.typed}” to confirm`} value={text} onInput={(e) => setText(e.currentTarget.value)} autoComplete="off" />}
        <div class="actions">
          <button type="button" class="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="btn danger" disabled={!ok || busy}>
            {busy ? 'Working…' : props.action}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function Toasts() {
  return (
    <div class="toasts">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <span>{t.text}</span>
          <button type="button" class="btn ghost" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            ✕
          </button>
        </div>
      ))}
    </div>
  );
}

/** A usage bar: used against a limit (-1: unlimited). */
export function Meter({ label, used, limit, format }: { label: string; used: number; limit: number; format: (n: number) => string }) {
  const pct = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 0;
  return (
    <div class="meter">
      <div class="meter-label">
        <span>{label}</span>
        <span>
          {format(used)} / {limit < 0 ? 'unlimited' : format(limit)}
        </span>
      </div>
      <progress max={100} value={pct} aria-label={`${label}: ${pct}% used`} class={pct >= 90 ? 'hot' : undefined} />
    </div>
  );
}

/** A secret shown once (new or rotated key): a copy button and the warning. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret-once" role="group" aria-label={label}>
      <p class="warn">
        <strong>{label}</strong>: shown only now. Copy it and keep it safe; the console does not keep it.
      </p>
      <div class="secret-row">
        <code class="secret">{value}</code>
        <button
          type="button"
          class="btn"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

export function PageHead({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      <div class="page-actions">{children}</div>
    </div>
  );
}

/** Jumps keyboard focus to the main content (not a hash link: the hash is the route). */
export function SkipLink() {
  return (
    <button
      type="button"
      class="skip"
      onClick={() => {
        const main = document.getElementById('main');
        main?.focus();
      }}
    >
      Skip to content
    </button>
  );
}

/** Previous / next page buttons around a status text (offset pages and cursor pages alike). */
export function Pager({ status, hasPrevious, hasNext, onPrevious, onNext }: {
  status: ComponentChildren; hasPrevious: boolean; hasNext: boolean; onPrevious: () => void; onNext: () => void;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="btn" disabled={!hasPrevious} onClick={onPrevious}>Previous</button>
      <span class="muted">{status}</span>
      <button type="button" class="btn" disabled={!hasNext} onClick={onNext}>Next</button>
    </nav>
  );
}

/** Says, in words, what the operator's role keeps them from on this screen (nothing when it does not). */
export function RoleNote({ what, reason }: { what: string; reason: string | undefined }) {
  if (!reason) return null;
  return <p class="muted role-note">{what}: {reason}</p>;
}
