/**
 * Idempotency keys, without HTTP: a write sent with a key runs once. Its answer is stored with
 * it IN THE WRITE'S TRANSACTION, so a write that committed (even if its answer was lost, or
 * came back 503 during a database cut) is remembered, and one that rolled back (a validation
 * error, a full quota) is not: its retry runs again. A retry with the same key and request
 * within 24 h gets the first answer; the same key with another request (another body, route or
 * caller) 409. Keys are per project; the caller is part of the fingerprint, so one end user's
 * stored answer is never handed to another.
 */
import type { AppContext } from '../../context.js';
import type { TenantScope, Tx } from '../../db/pool.js';
import { sha256Base64url } from '../../lib/crypto.js';
import { IdempotencyErrors } from './errors.js';
import { claimKey, releaseKey, saveAnswer, storedKey } from './queries.js';

/** How long a key answers the same again (and is kept). */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

export interface KeyedRequest {
  key: string;
  /** What the request asked, hashed: method, routed route, parameters, caller, body. */
  fingerprint: string;
}

/** What a write answers: its status and its body, before serialisation. */
export interface Response {
  status: number;
  body: unknown;
}

/** The answer to send: the body as JSON text, byte for byte the first answer on a replay. */
export interface Answer {
  status: number;
  body: string;
  replayed: boolean;
}

/** JSON with every object's keys sorted, so the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprintOf(parts: Record<string, unknown>): string {
  return sha256Base64url(canonical(parts));
}

/**
 * How long a claim committed ahead of a provider call (claimAhead) may stay unanswered before a
 * retry takes it over: far beyond the longest such a request runs (send-batch: the quota
 * statement, one provider call of at most 10 s, its logs), so only a claim whose process died
 * between the claim and its settling, or stalled that long. The takeover is one statement
 * (claimKey), so of several retries exactly one gets it; the node it was taken from, if it was
 * only slow, settles nothing (settleAhead checks the claim is still its own). The retry's call
 * carries the same provider idempotency key, so the provider does not act twice either.
 * Documented in docs/mail.md "Retries" and docs/data.md "Retries: Idempotency-Key".
 */
export const CLAIM_LEASE_MS = 2 * 60 * 1000;

const expiredAt = (ctx: AppContext) => new Date(ctx.clock.now().getTime() - KEY_TTL_MS);
const abandonedAt = (ctx: AppContext) => new Date(ctx.clock.now().getTime() - CLAIM_LEASE_MS);

/** The stored answer for a key this request could not claim, or why there is none to give. */
async function replay(tx: Tx, projectId: string, keyed: KeyedRequest): Promise<Answer> {
  const row = await storedKey(tx, projectId, keyed.key);
  // Gone between the claim and this read: it expired and was deleted meanwhile. A retry claims it.
  if (!row) throw IdempotencyErrors.idempotency_key_in_use();
  if (row.fingerprint !== keyed.fingerprint) throw IdempotencyErrors.idempotency_key_reused();
  if (row.status === null || row.response === null) throw IdempotencyErrors.idempotency_key_in_use();
  return { status: row.status, body: row.response, replayed: true };
}

/**
 * Runs `write` once for `keyed`, inside `tx`, which must be the transaction of the write
 * itself: the key is claimed first (a concurrent request with the same key waits here until
 * this transaction ends), the answer saved last.
 */
export async function once(ctx: AppContext, tx: Tx, projectId: string, keyed: KeyedRequest, write: () => Promise<Response>): Promise<Answer> {
  if (!(await claimKey(tx, projectId, keyed.key, keyed.fingerprint, ctx.clock.now(), expiredAt(ctx), abandonedAt(ctx)))) return replay(tx, projectId, keyed);
  const { status, body } = await write();
  const text = JSON.stringify(body);
  await saveAnswer(tx, projectId, keyed.key, status, text);
  return { status, body: text, replayed: false };
}

/** A key claimed ahead: the stored answer of an earlier request, or this request's claim. */
export type Claim = { answer: Answer; claimedAt?: undefined } | { answer: null; claimedAt: Date };

/**
 * For a write that cannot join a transaction (a provider call): commits a claim first, so a
 * concurrent request with the key gets 409 `idempotency_key_in_use` instead of a second call.
 * Returns the stored answer of an earlier request, or this request's claim (when it was made):
 * the caller writes, then `settleAhead`s with it.
 */
export async function claimAhead(ctx: AppContext, scope: TenantScope, keyed: KeyedRequest): Promise<Claim> {
  const claimedAt = ctx.clock.now();
  // Autocommit statements: the claim must be committed before the call.
  return ctx.db.read(scope, async (db) =>
    (await claimKey(db, scope.projectId, keyed.key, keyed.fingerprint, claimedAt, expiredAt(ctx), abandonedAt(ctx)))
      ? { answer: null, claimedAt }
      : { answer: await replay(db, scope.projectId, keyed) },
  );
}

/**
 * Stores the answer of a write claimed ahead, or gives the key back when nothing was written;
 * either only while the claim is still this request's (not taken over after CLAIM_LEASE_MS).
 * The answer is this request's either way.
 */
export async function settleAhead(ctx: AppContext, scope: TenantScope, keyed: KeyedRequest, claimedAt: Date, response: Response | null): Promise<Answer | null> {
  if (!response) {
    await ctx.db.read(scope, (db) => releaseKey(db, scope.projectId, keyed.key, claimedAt));
    return null;
  }
  const text = JSON.stringify(response.body);
  await ctx.db.read(scope, (db) => saveAnswer(db, scope.projectId, keyed.key, response.status, text, claimedAt));
  return { status: response.status, body: text, replayed: false };
}
