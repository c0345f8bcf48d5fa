/**
 * End-user sessions (docs/auth.md): password, magic link and code, guests and linking, social and
 * OpenID Connect redirects, second-factor verification, own sessions, sign-out everywhere.
 *
 * Refresh: the access token is refreshed shortly before it expires (a timer, and a check before
 * each request), and once after a 401. Refresh tokens rotate on every use and a token used twice
 * revokes its whole family (`refresh_reused`), so a refresh is single-flight: concurrent calls
 * in this tab share one request, and tabs take turns through the Web Locks API; a tab that got
 * the lock after another tab refreshed adopts that tab's session (shared storage, or the
 * BroadcastChannel that also carries sign-ins and sign-outs to every tab).
 */
import type { TokenSource, Transport } from './core.js';
import { PlinthError } from './errors.js';
import { localStorageStorage, memoryStorage, type TokenStorage } from './storage.js';

export interface User {
  _id: string;
  email: string | null;
  isAnonymous?: boolean;
  emailVerified?: boolean;
  [field: string]: unknown;
}

export interface Session {
  accessToken: string;
  /** Header mode only; in cookie mode the refresh token is an HttpOnly cookie. */
  refreshToken?: string;
  /** When the access token expires, in this device's clock (ms since the epoch). */
  expiresAt: number;
  user: User | null;
}

export type AuthEvent = 'INITIAL_SESSION' | 'SIGNED_IN' | 'SIGNED_OUT' | 'TOKEN_REFRESHED' | 'USER_UPDATED';
export type AuthListener = (event: AuthEvent, session: Session | null) => void;

export interface AuthOptions {
  /**
   * `header` (default): the refresh token is kept in `storage` and sent as `x-refresh-token`.
   * `cookie`: the server's HttpOnly `refreshToken` cookie carries it (requests go with
   * `credentials: 'include'`); JavaScript never sees it.
   */
  mode?: 'header' | 'cookie';
  /** Default: localStorage in browsers, memory elsewhere. */
  storage?: TokenStorage | 'memory' | 'local';
  /** The storage key (and the name of the cross-tab lock and channel). Default `plinth.session`. */
  storageKey?: string;
  /** Refresh on a timer before expiry (default true). */
  autoRefresh?: boolean;
  /**
   * Share the session with the other tabs of this origin: one refresh at a time through the Web
   * Locks API, sign-ins, refreshes and sign-outs announced on a BroadcastChannel. Default: true
   * in browsers, false elsewhere (a server holds one client per user).
   */
  crossTab?: boolean;
}

export interface SignInOk {
  mfaRequired?: false;
  user: User;
  session: Session;
  isNewUser?: boolean;
}
export interface MfaChallenge {
  mfaRequired: true;
  challengeId: string;
  methods: string[];
  mfaEnrollmentRequired?: boolean;
}
export type SignInResult = SignInOk | MfaChallenge;

export interface OwnSession {
  id: string;
  current: boolean;
  device: string | null;
  userAgent: string | null;
  ip: string | null;
  aal: string;
  signedInAt: string;
  lastUsedAt: string;
  expiresAt: string;
}

interface TokenAnswer {
  accessToken?: string;
  refreshToken?: string;
  user?: User;
  isNewUser?: boolean;
  mfaRequired?: boolean;
  challengeId?: string;
  methods?: string[];
  mfaEnrollmentRequired?: boolean;
}

type Message = { type: 'session'; session: Session | null; event: AuthEvent };

const A = '/api/userAuth';

/** Lifetime of a JWT (exp - iat), so the expiry is computed on this device's clock whatever its skew. */
function lifetimeMs(token: string): number {
  try {
    const part = token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/');
    const { exp, iat } = JSON.parse(atob(part)) as { exp?: number; iat?: number };
    if (typeof exp === 'number' && typeof iat === 'number') return (exp - iat) * 1000;
  } catch {
    /* not a JWT: treat as short-lived */
  }
  return 60_000;
}

type Locks = { request(name: string, cb: () => Promise<unknown>): Promise<unknown> };

export class Auth implements TokenSource {
  readonly credentials: RequestCredentials;
  private session: Session | null = null;
  private readonly storage: TokenStorage;
  private readonly key: string;
  private readonly mode: 'header' | 'cookie';
  private readonly autoRefresh: boolean;
  private readonly crossTab: boolean;
  private readonly listeners = new Set<AuthListener>();
  private inflight: Promise<boolean> | null = null;
  private loaded = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private channel: BroadcastChannel | undefined;
  /** Resolves once the stored session has been read (and, in cookie mode, restored from the cookie). */
  readonly ready: Promise<void>;

  constructor(
    private readonly t: Transport,
    opts: AuthOptions = {},
  ) {
    this.mode = opts.mode ?? 'header';
    this.credentials = this.mode === 'cookie' ? 'include' : 'omit';
    const s = opts.storage ?? (typeof localStorage !== 'undefined' ? 'local' : 'memory');
    this.storage = s === 'memory' ? memoryStorage() : s === 'local' ? localStorageStorage() : s;
    this.key = opts.storageKey ?? 'plinth.session';
    this.autoRefresh = opts.autoRefresh ?? true;
    this.crossTab = opts.crossTab ?? (typeof window !== 'undefined' && typeof document !== 'undefined');
    if (this.crossTab && typeof BroadcastChannel !== 'undefined') {
      this.channel = new BroadcastChannel(this.key);
      this.channel.onmessage = (e: MessageEvent<Message>) => {
        if (e.data?.type === 'session') this.adopt(e.data.session, e.data.event, false);
      };
      (this.channel as { unref?: () => void }).unref?.();
    }
    this.ready = this.init().finally(() => {
      this.loaded = true;
    });
  }

  private async init(): Promise<void> {
    const stored = await this.read();
    if (stored) this.adopt(stored, null, false);
    else if (this.mode === 'cookie' && (await this.storage.get(`${this.key}.out`)) === null) {
      // The cookie may hold a session from an earlier visit: ask once (401 when there is none).
      await this.refresh().catch(() => false);
    }
  }

  private async read(): Promise<Session | null> {
    try {
      const raw = await this.storage.get(this.key);
      return raw ? (JSON.parse(raw) as Session) : null;
    } catch {
      return null;
    }
  }

  private emit(event: AuthEvent): void {
    for (const l of this.listeners) {
      try {
        l(event, this.session);
      } catch (err) {
        console.error(err);
      }
    }
  }

  /** Makes `session` current, stores it (unless it came from storage or another tab), tells listeners and other tabs. */
  private adopt(session: Session | null, event: AuthEvent | null, persist = true): void {
    this.session = session;
    clearTimeout(this.timer);
    if (persist) {
      if (session) {
        void this.storage.set(this.key, JSON.stringify(session));
        void this.storage.remove(`${this.key}.out`);
      } else {
        void this.storage.remove(this.key);
        if (this.mode === 'cookie') void this.storage.set(`${this.key}.out`, '1');
      }
      if (event) this.channel?.postMessage({ type: 'session', session, event } satisfies Message);
    }
    if (session && this.autoRefresh) {
      const wait = Math.max(0, session.expiresAt - this.margin(session) - Date.now());
      this.timer = setTimeout(() => void this.refresh().catch(() => {}), wait);
      (this.timer as { unref?: () => void }).unref?.();
    }
    if (event) this.emit(event);
  }

  /** How long before expiry a token is refreshed. */
  private margin(_s: Session): number {
    return 30_000;
  }

  private fromAnswer(a: TokenAnswer, user: User | null = a.user ?? this.session?.user ?? null): Session {
    const accessToken = a.accessToken!;
    return {
      accessToken,
      refreshToken: this.mode === 'header' ? (a.refreshToken ?? this.session?.refreshToken) : undefined,
      expiresAt: Date.now() + lifetimeMs(accessToken),
      user,
    };
  }

  /**
   * Calls an auth route (below /api/userAuth) that answers tokens (sign-up, sign-in, guest, magic
   * link, second factor, passkey) and makes its session current. For feature modules (mfa.ts).
   */
  async signInWith(path: string, body: unknown, event: AuthEvent = 'SIGNED_IN'): Promise<SignInResult> {
    const a = await this.t.request<TokenAnswer>({ method: 'POST', path: A + path, body, auth: false, headers: this.modeHeader(), retries: 0 });
    if (a.mfaRequired) return { mfaRequired: true, challengeId: a.challengeId!, methods: a.methods ?? [], mfaEnrollmentRequired: a.mfaEnrollmentRequired };
    const session = this.fromAnswer(a);
    this.adopt(session, event);
    return { user: session.user!, session, isNewUser: a.isNewUser };
  }

  private modeHeader(): Record<string, string> {
    return this.mode === 'header' ? { 'x-refresh-token-mode': 'header' } : {};
  }

  // ---- TokenSource -------------------------------------------------------------------------

  accessToken(): Promise<string | null> | string | null {
    const s = this.session;
    if (!s) return this.loaded ? null : this.ready.then(() => this.session?.accessToken ?? null);
    if (Date.now() < s.expiresAt - this.margin(s)) return s.accessToken;
    return this.refresh()
      .catch(() => false)
      .then(() => this.session?.accessToken ?? null);
  }

  async recover(token: string): Promise<boolean> {
    if (this.session && this.session.accessToken !== token && Date.now() < this.session.expiresAt) return true;
    return this.refreshFrom(token).catch(() => false);
  }

  // ---- Sessions ----------------------------------------------------------------------------

  /** The current session (after the stored one was read). */
  async getSession(): Promise<Session | null> {
    await this.ready;
    return this.session;
  }

  get user(): User | null {
    return this.session?.user ?? null;
  }

  /** Calls `listener` on every change of the session, in this tab or another; first with `INITIAL_SESSION` once known. Returns the unsubscribe. */
  onAuthStateChange(listener: AuthListener): () => void {
    this.listeners.add(listener);
    void this.ready.then(() => this.listeners.has(listener) && listener('INITIAL_SESSION', this.session));
    return () => this.listeners.delete(listener);
  }

  /** Refreshes the access token now (single-flight in this tab and across tabs). Resolves true when a session exists after it. */
  refresh(): Promise<boolean> {
    return this.refreshFrom(this.session?.accessToken ?? null);
  }

  private refreshFrom(stale: string | null): Promise<boolean> {
    if (this.inflight) return this.inflight;
    const run = async (): Promise<boolean> => {
      // Another tab may have refreshed while this one waited for the lock: take its session.
      const stored = await this.read();
      const current = stored && stored.accessToken !== stale ? stored : this.session;
      if (current && current.accessToken !== stale && Date.now() < current.expiresAt - this.margin(current)) {
        if (current !== this.session) this.adopt(current, 'TOKEN_REFRESHED', false);
        return true;
      }
      const rt = current?.refreshToken ?? this.session?.refreshToken;
      if (this.mode === 'header' && !rt) return false;
      const headers: Record<string, string> = this.mode === 'header' ? { 'x-refresh-token': rt!, 'x-refresh-token-mode': 'header' } : {};
      // Never retried: a refresh whose answer was lost already rotated the token, and sending the
      // old one again would revoke the family.
      const res = await this.t.send({ method: 'POST', path: `${A}/refresh-token`, headers, auth: false, retries: 0 });
      const body = (await res.json().catch(() => null)) as { data?: TokenAnswer } | null;
      if (res.ok && body?.data?.accessToken) {
        this.adopt(this.fromAnswer(body.data, current?.user ?? this.session?.user ?? null), this.session || current ? 'TOKEN_REFRESHED' : 'SIGNED_IN');
        return true;
      }
      if (res.status === 401 || res.status === 403) {
        if (this.session || current) this.adopt(null, 'SIGNED_OUT');
        return false;
      }
      throw new PlinthError('The session could not be refreshed.', res.status, 'refresh_failed');
    };
    const locks = this.crossTab ? (globalThis.navigator as { locks?: Locks } | undefined)?.locks : undefined;
    const p = (locks ? (locks.request(`${this.key}:refresh`, run) as Promise<boolean>) : run()).finally(() => {
      this.inflight = null;
    });
    this.inflight = p;
    return p;
  }

  /** Sets a session from tokens obtained elsewhere (e.g. a server-side sign-in). */
  async setSession(tokens: { accessToken: string; refreshToken?: string }): Promise<Session> {
    this.adopt(this.fromAnswer(tokens, null), 'SIGNED_IN');
    await this.me();
    return this.session!;
  }

  // ---- Password ----------------------------------------------------------------------------

  /** Creates an account and signs in (a verification code is mailed). Extra fields go to the users collection. */
  signUp(input: { email: string; password: string; [field: string]: unknown }): Promise<SignInOk> {
    return this.signInWith('/signup', input) as Promise<SignInOk>;
  }

  /** Signs in with email and password; `mfaRequired` when the user has a second factor (finish with `verifySecondFactor`). */
  signIn(input: { email: string; password: string }): Promise<SignInResult> {
    return this.signInWith('/login', input);
  }

  /** Finishes a sign-in that asked for a second factor: an authenticator code or a recovery code. */
  verifySecondFactor(input: { challengeId: string; code?: string; recoveryCode?: string; passkey?: unknown }): Promise<SignInOk> {
    return this.signInWith('/mfa/verify', input) as Promise<SignInOk>;
  }

  // ---- Passwordless ------------------------------------------------------------------------

  /** Mails a magic link and a 6-digit code. `redirectTo` must be the site URL or one of the project's redirect URLs. */
  async sendMagicLink(input: { email: string; redirectTo?: string; createUser?: boolean; data?: Record<string, unknown> }): Promise<void> {
    await this.t.request({ method: 'POST', path: `${A}/passwordless/start`, body: input, auth: false });
  }

  /** Signs in with the mailed code. */
  verifyCode(input: { email: string; code: string }): Promise<SignInResult> {
    return this.signInWith('/passwordless/verify', input);
  }

  /** Signs in with the token of a magic link (see also `handleRedirect`). */
  verifyMagicLink(token: string): Promise<SignInResult> {
    return this.signInWith('/passwordless/verify', { token });
  }

  // ---- Guests ------------------------------------------------------------------------------

  /** A new guest user (the project must allow anonymous users). */
  signInAnonymously(): Promise<SignInOk> {
    return this.signInWith('/anonymous', {}) as Promise<SignInOk>;
  }

  /** Gives the signed-in guest an email and password: the same user id, so its data stays its own. */
  async linkEmail(input: { email: string; password: string }): Promise<User> {
    const a = await this.t.request<TokenAnswer>({ method: 'POST', path: `${A}/anonymous/link-email`, body: input, retries: 0 });
    this.applyAnswer(a);
    return this.session?.user ?? a.user!;
  }

  /** The provider's authorization URL for linking the signed-in guest to a provider identity: send the browser there. */
  async linkProviderUrl(provider: string): Promise<string> {
    return (await this.t.request<{ url: string }>({ method: 'POST', path: `${A}/social/${encodeURIComponent(provider)}/link`, body: {} })).url;
  }

  /** Finishes a guest's provider link with what the provider sent back (`state`, `code`, `iss`). */
  async finishProviderLink(provider: string, input: { state: string; code: string; iss?: string; user?: unknown }): Promise<User> {
    const a = await this.t.request<TokenAnswer>({ method: 'POST', path: `${A}/social/${encodeURIComponent(provider)}/link/finish`, body: input, retries: 0 });
    this.applyAnswer(a);
    return this.session?.user ?? a.user!;
  }

  /** Takes a fresh access token (and user) an account route answered for this session (guest links, step-up). For feature modules. */
  updateFrom(a: { accessToken?: string | null; user?: User }): void {
    this.applyAnswer({ accessToken: a.accessToken ?? undefined, user: a.user });
  }

  private applyAnswer(a: TokenAnswer): void {
    if (!this.session) return;
    const next = a.accessToken ? this.fromAnswer(a, a.user ?? this.session.user) : { ...this.session, user: a.user ?? this.session.user };
    this.adopt(next, a.accessToken ? 'TOKEN_REFRESHED' : 'USER_UPDATED');
  }

  // ---- Social and OpenID Connect ----------------------------------------------------------

  /** The URL that starts a sign-in with `github`, `google` or one of the project's OpenID Connect providers. */
  providerUrl(provider: string): string {
    return this.t.href(`${A}/social/${encodeURIComponent(provider)}/start`, { key: this.t.apiKey });
  }

  /** Sends the browser to the provider. It comes back to `<siteUrl>/auth/callback`; call `handleRedirect()` there. */
  signInWithProvider(provider: string): void {
    globalThis.location.assign(this.providerUrl(provider));
  }

  /**
   * On the page a sign-in comes back to (`<siteUrl>/auth/callback`): finishes a social/OIDC
   * sign-in (`?rtCode…#token=…`) or a magic link (`#type=magiclink&token=…`), removes the
   * tokens from the address bar and answers the result; null when the URL carries neither.
   * A provider's refusal (`?error=`) throws PlinthError `social_sign_in_failed`.
   */
  async handleRedirect(href: string = globalThis.location.href): Promise<SignInResult | null> {
    const url = new URL(href);
    const hash = new URLSearchParams(url.hash.slice(1));
    const q = url.searchParams;
    const clean = () => {
      if (typeof history !== 'undefined' && typeof location !== 'undefined' && location.href === href) history.replaceState(null, '', url.pathname);
    };
    if (q.get('error')) {
      clean();
      throw new PlinthError(q.get('error')!, 0, 'social_sign_in_failed');
    }
    if (q.get('mfaRequired') === 'true') {
      clean();
      return { mfaRequired: true, challengeId: q.get('challengeId')!, methods: (q.get('methods') ?? '').split(',').filter(Boolean) };
    }
    if (hash.get('type') === 'magiclink' && hash.get('token')) {
      clean();
      return this.verifyMagicLink(hash.get('token')!);
    }
    const token = hash.get('token');
    const rtCode = q.get('rtCode');
    if (token && rtCode) {
      clean();
      const { refreshToken } = await this.t.request<{ refreshToken: string }>({ method: 'POST', path: `${A}/social/exchange`, body: { token, rtCode }, auth: false, retries: 0 });
      this.adopt(this.fromAnswer({ accessToken: token, refreshToken }, null), 'SIGNED_IN');
      const user = await this.me();
      return { user, session: this.session!, isNewUser: q.get('isNewUser') === 'true' };
    }
    return null;
  }

  // ---- Account -----------------------------------------------------------------------------

  /** The signed-in user, fresh from the server (and kept in the session). */
  async me(): Promise<User> {
    const user = await this.t.request<User>({ path: `${A}/me` });
    if (this.session) this.adopt({ ...this.session, user }, 'USER_UPDATED');
    return user;
  }

  async updateProfile(fields: Record<string, unknown>): Promise<User> {
    const user = await this.t.request<User>({ method: 'PUT', path: `${A}/update-profile`, body: fields });
    if (this.session && user && typeof user === 'object' && '_id' in user) this.adopt({ ...this.session, user }, 'USER_UPDATED');
    return user;
  }

  /** Changing the password signs out every session (the server revokes them all). */
  async changePassword(input: { currentPassword: string; newPassword: string }): Promise<void> {
    await this.t.request({ method: 'PUT', path: `${A}/change-password`, body: input, retries: 0 });
  }

  async verifyEmail(input: { email: string; otp: string }): Promise<void> {
    await this.t.request({ method: 'POST', path: `${A}/verify-email`, body: input, auth: false });
  }

  async resendVerification(email: string): Promise<void> {
    await this.t.request({ method: 'POST', path: `${A}/resend-verification-otp`, body: { email }, auth: false });
  }

  async requestPasswordReset(email: string): Promise<void> {
    await this.t.request({ method: 'POST', path: `${A}/request-password-reset`, body: { email }, auth: false });
  }

  async resetPassword(input: { email: string; otp: string; newPassword: string }): Promise<void> {
    await this.t.request({ method: 'POST', path: `${A}/reset-password`, body: input, auth: false });
  }

  // ---- Own sessions and sign-out -----------------------------------------------------------

  /** The signed-in user's live sessions (device, address, last use). */
  async sessions(): Promise<OwnSession[]> {
    return (await this.t.request<{ sessions: OwnSession[] }>({ path: `${A}/sessions` })).sessions;
  }

  async revokeSession(id: string): Promise<void> {
    await this.t.request({ method: 'DELETE', path: `${A}/sessions/${encodeURIComponent(id)}` });
  }

  /**
   * Signs out: revokes this session on the server (`everywhere: true` first revokes every other
   * session of the user, on every device), forgets it here and in every tab. The local session
   * is dropped even when the server cannot be reached.
   */
  async signOut(opts: { everywhere?: boolean } = {}): Promise<void> {
    await this.ready;
    try {
      if (opts.everywhere && this.session) await this.t.request({ method: 'DELETE', path: `${A}/sessions/others` });
      const rt = this.session?.refreshToken;
      await this.t.request({ method: 'POST', path: `${A}/logout`, auth: false, retries: 0, headers: rt ? { 'x-refresh-token': rt } : {} });
    } finally {
      this.adopt(null, 'SIGNED_OUT');
    }
  }
}
