/**
 * Where the session is kept. Any object with get/set/remove (sync or async) works, e.g. an
 * encrypted store in React Native. Built in: memory (the default outside browsers) and
 * localStorage (the default in browsers). In cookie mode (`auth: {mode: 'cookie'}`) the refresh
 * token never reaches JavaScript: it is the server's HttpOnly cookie, and only the short-lived
 * access token and the user are stored here.
 */
export interface TokenStorage {
  get(key: string): string | null | Promise<string | null>;
  set(key: string, value: string): void | Promise<void>;
  remove(key: string): void | Promise<void>;
}

export function memoryStorage(): TokenStorage {
  const m = new Map<string, string>();
  return { get: (k) => m.get(k) ?? null, set: (k, v) => void m.set(k, v), remove: (k) => void m.delete(k) };
}

/** The browser's localStorage (shared by the tabs of an origin, which is what cross-tab refresh needs). */
export function localStorageStorage(ls: Storage = globalThis.localStorage): TokenStorage {
  return { get: (k) => ls.getItem(k), set: (k, v) => ls.setItem(k, v), remove: (k) => ls.removeItem(k) };
}
