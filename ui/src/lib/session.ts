/** The signed-in operator (undefined while checking, null when signed out). */
import { signal } from '@preact/signals';
import { api, cookie, request } from './api';
import type { Operator } from './types';

export const me = signal<Operator | null | undefined>(undefined);

export async function loadMe(): Promise<void> {
  // Every sign-in sets the readable csrfToken cookie: without it there is no session to find,
  // and the sign-in screen comes at once instead of after two failed round trips.
  if (!cookie('csrfToken')) {
    me.value = null;
    return;
  }
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
