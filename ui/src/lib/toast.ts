/** Toasts: short results of actions, announced to screen readers (role=status / alert). */
import { signal } from '@preact/signals';

export interface Toast {
  id: number;
  kind: 'ok' | 'error';
  text: string;
}

export const toasts = signal<Toast[]>([]);
let next = 1;

export function toast(text: string, kind: Toast['kind'] = 'ok'): void {
  const t = { id: next++, kind, text };
  toasts.value = [...toasts.value, t];
  setTimeout(() => dismiss(t.id), kind === 'error' ? 8000 : 4000);
}

export const toastError = (err: unknown) => toast(err instanceof Error ? err.message : String(err), 'error');

export function dismiss(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}
