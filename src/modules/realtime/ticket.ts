/**
 * Realtime tickets. `EventSource` cannot send headers, so a client first asks for a ticket with
 * its API key and end-user token (POST /api/realtime/ticket), then opens the stream with the
 * ticket in the URL. A ticket is a short-lived JWT (lib/identity/jwt.ts) signed with a key
 * derived from ENCRYPTION_KEY for this purpose only; it carries the caller's scope (project,
 * key kind, user and when the user's token expires) and the subscriptions, so any API node can
 * open the stream without a lookup. Usable until it expires, so the browser's own quick
 * reconnects work; the stream itself ends when the user's token expires.
 */
import { hkdfSync } from 'node:crypto';
import { signAccessJwt, verifyAccessJwt } from '../../lib/identity/jwt.js';
import type { KeyKind } from '../../db/pool.js';

export const TICKET_TTL_SECONDS = 60;
const AUDIENCE = 'plinth-realtime';

export interface Subscription {
  collection: string;
  /** The list API's filters as query parameters: `{ status: 'open', price_gte: '10' }`. */
  filter: Record<string, string | string[]>;
}

export interface TicketClaims {
  projectId: string;
  keyKind: Extract<KeyKind, 'secret' | 'publishable'>;
  userId: string | null;
  /** When the end user's token expires (epoch seconds), if there is one. */
  userExp: number | null;
  /** The custom claims of the user's verified token (JSON text), for read rules on `@auth.claims.*`. */
  claims?: string | null;
  /** A console ticket: the operator it was issued to (their streams end when they leave the project). */
  operatorId?: string;
  /**
   * A console ticket: the operator's session (refresh family) it was issued under; the stream
   * does not open once that session is revoked, and ends when it is (bus `operator_sessions_ended`).
   */
  operatorSessionId?: string | null;
  subscriptions: Subscription[];
}

export function ticketKey(encryptionKey: Buffer): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', encryptionKey, Buffer.alloc(0), 'plinth realtime ticket v1', 32));
}

export async function signTicket(key: Uint8Array, claims: TicketClaims, now: Date): Promise<string> {
  const ttl = claims.userExp === null ? TICKET_TTL_SECONDS : Math.max(1, Math.min(TICKET_TTL_SECONDS, claims.userExp - Math.floor(now.getTime() / 1000)));
  return signAccessJwt({ secret: key, audience: AUDIENCE, subject: claims.projectId, ttlSeconds: ttl, now, claims: { rt: claims } });
}

export async function verifyTicket(key: Uint8Array, ticket: string, now: Date): Promise<TicketClaims | null> {
  const payload = await verifyAccessJwt(ticket, key, AUDIENCE, now);
  const rt = payload?.rt as TicketClaims | undefined;
  return rt && rt.projectId === payload!.sub ? rt : null;
}
