/** The signed-in operator (undefined while checking, null when signed out). */
import { signal } from '@preact/signals';
import { api, request } from './api';
import type { Operator } from './types';

export const me = signal<Operator | null | undefined>(undefined);

export async function loadMe(): Promise<void> {
  try {
    me.value = (await api.get<{ user: Operator }>('/api/auth/me')).user;
  } catch {
    me.value = null;
  }
}

export async function logout(): Promise<void> {
  await request('POST', '/api/auth/logout', { body: {}, noRefresh: true }).catch(() => undefined);
  me.value = null;
}
