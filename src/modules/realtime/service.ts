/**
 * Realtime: tickets and streams. Knows no HTTP beyond the socket a stream writes to.
 *
 * A ticket is asked for with the API key (and the end user's token for private collections);
 * its subscriptions are checked then, with the list API's rules: the collection exists and
 * streams its changes, a private one needs the user, the filters are the list's (400 for
 * what the list would refuse). Opening the stream checks them again against the current
 * definitions, then the node's feed takes it (feed.ts).
 */
import type { OperatorIdentity } from '../operators/identity.js';
import { consoleStreamAllowed } from './queries.js';
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../../context.js';
import { isPlainObject } from '../../lib/objects.js';
import { verifyAccessTokenClaims } from '../auth/tokens.js';
import { assertProjectAssurance } from '../mfa/policy.js';
import { CollectionErrors } from '../collections/errors.js';
import { assertNotUsers } from '../data/access.js';
import { readRules } from '../rules/has-rules.js';
import { DataErrors } from '../data/errors.js';
import { parseFilters } from '../data/query.js';
import type { ProjectRecord } from '../projects/cache.js';
import { RealtimeErrors } from './errors.js';
import { compileFilters } from './match.js';
import { ORIGIN, type Position } from './position.js';
import { Subscriber, type CompiledSubscription } from './subscriber.js';
import { signTicket, TICKET_TTL_SECONDS, verifyTicket, type Subscription, type TicketClaims } from './ticket.js';

/** Every query parameter of a subscription's filter is a filter (no paging or sort words). */
const NO_RESERVED: ReadonlySet<string> = new Set();

export interface Caller {
  project: ProjectRecord;
  keyKind: 'secret' | 'publishable';
  /** The end user's access token, if the request carried one. */
  userToken: string | null;
}

function subscriptionsOf(raw: unknown, max: number): Subscription[] {
  if (!Array.isArray(raw) || raw.length === 0) throw RealtimeErrors.subscriptions_invalid();
  if (raw.length > max) throw RealtimeErrors.too_many_subscriptions(`At most ${max} subscriptions per stream.`);
  return raw.map((s) => {
    if (!isPlainObject(s) || typeof s.collection !== 'string' || (s.filter !== undefined && !isPlainObject(s.filter))) {
      throw RealtimeErrors.subscriptions_invalid();
    }
    return { collection: s.collection, filter: (s.filter ?? {}) as Subscription['filter'] };
  });
}

/** The subscriptions compiled against the collections' current definitions (the list's rules). */
async function compile(ctx: AppContext, scope: Omit<TicketClaims, 'subscriptions'>, subs: Subscription[]): Promise<CompiledSubscription[]> {
  const out: CompiledSubscription[] = [];
  for (const s of subs) {
    assertNotUsers(s.collection);
    const col = await ctx.collections.get(scope.projectId, s.collection);
    if (!col) throw CollectionErrors.collection_not_found();
    if (!col.realtime) throw RealtimeErrors.collection_not_streaming(`Collection '${col.name}' does not stream its changes. Turn realtime on for it first.`);
    const isPrivate = col.rls.enabled && col.rls.mode === 'private' && !readRules(col);
    if (scope.keyKind === 'publishable' && isPrivate && !scope.userId) {
      throw DataErrors.auth_required('Provide a valid user Bearer token to subscribe to a private collection.');
    }
    out.push({ collection: col.name.toLowerCase(), match: compileFilters(col, parseFilters(s.filter, NO_RESERVED)), filter: JSON.stringify(s.filter), definition: col });
  }
  return out;
}

export async function issueTicket(ctx: AppContext, caller: Caller, rawSubscriptions: unknown) {
  const now = ctx.clock.now();
  const user = caller.userToken ? await verifyAccessTokenClaims(caller.project, caller.userToken, now) : null;
  // A project that requires a second factor streams nothing to a session without one.
  if (user) await assertProjectAssurance(ctx, caller.project, user);
  return ticketFor(ctx, { projectId: caller.project.id, keyKind: caller.keyKind, userId: user?.userId ?? null, userExp: user?.exp ?? null, claims: user?.custom ?? null }, rawSubscriptions, now);
}

/**
 * A ticket for a member of the project in the dashboard: the stream reads as the secret key
 * does (every document of the subscribed collections), through the same stream route apps use.
 * The caller (the role guard) has checked that the operator is a member; the stream checks it
 * and the operator's session again when it opens, ends when either does (member_removed,
 * operator_sessions_ended), and at the latest when the operator's access token expires, as an
 * end user's stream does: the console then asks for a new ticket with a refreshed token.
 */
export function issueMemberTicket(ctx: AppContext, projectId: string, operator: OperatorIdentity, rawSubscriptions: unknown) {
  const scope = { projectId, keyKind: 'secret' as const, userId: null, userExp: operator.tokenExp ?? null, operatorId: operator.id, operatorSessionId: operator.sessionId ?? null };
  return ticketFor(ctx, scope, rawSubscriptions, ctx.clock.now());
}

/** The subscriptions checked (as the list API checks them) and signed into a ticket for this scope. */
async function ticketFor(ctx: AppContext, scope: Omit<TicketClaims, 'subscriptions'>, rawSubscriptions: unknown, now: Date) {
  const subscriptions = subscriptionsOf(rawSubscriptions, ctx.config.realtime.maxSubscriptions);
  await compile(ctx, scope, subscriptions);
  const ticket = await signTicket(ctx.realtime.ticketKey, { ...scope, subscriptions }, now);
  return { ticket, expiresIn: TICKET_TTL_SECONDS, userId: scope.userId };
}

/** The ticket's claims and compiled subscriptions; 401 / 4xx before any byte of the stream. */
export async function prepareStream(ctx: AppContext, ticket: string) {
  const claims = await verifyTicket(ctx.realtime.ticketKey, ticket, ctx.clock.now());
  if (!claims) throw RealtimeErrors.ticket_invalid();
  // A console ticket of an operator who is no longer a member, or whose session has ended, opens nothing.
  if (claims.operatorId && !(await consoleStreamAllowed(ctx.db.admin, claims.projectId, claims.operatorId, claims.operatorSessionId ?? null))) {
    throw RealtimeErrors.ticket_invalid();
  }
  const subscriptions = await compile(ctx, claims, claims.subscriptions);
  if (ctx.realtime.feed.streamsOf(claims.projectId) >= ctx.config.realtime.maxStreamsPerProject) {
    throw RealtimeErrors.too_many_streams(undefined, undefined, { headers: { 'retry-after': '30' } });
  }
  return { claims, subscriptions };
}

/**
 * Serves an open stream until the client goes, the user's token expires or the node stops:
 * heartbeats (the feed's), then the feed's events from `from` (Last-Event-ID) or from now.
 */
export async function serveStream(
  ctx: AppContext,
  res: ServerResponse,
  prepared: Awaited<ReturnType<typeof prepareStream>>,
  from: Position | null,
): Promise<void> {
  const sub = new Subscriber(prepared.claims, prepared.subscriptions, res, ORIGIN);
  const userExp = prepared.claims.userExp;
  const expiry = userExp === null ? null : setTimeout(() => {
    sub.notice('expired', { reason: 'The user token has expired; sign in again (refresh) and reconnect with a new ticket.' });
    sub.close();
  }, Math.max(0, userExp * 1000 - ctx.clock.now().getTime()));
  res.once('close', () => {
    if (expiry) clearTimeout(expiry);
    ctx.realtime.feed.leave(sub);
  });
  res.write(`retry: 2000\n\n`);
  sub.started(); // the headers are out: events go straight to the socket (frames.ts)
  try {
    await ctx.realtime.feed.join(sub, from);
    ctx.usage.peak(prepared.claims.projectId, ctx.realtime.feed.streamsOf(prepared.claims.projectId));
  } catch (err) {
    ctx.log.warn({ err }, 'realtime: could not start a stream');
    sub.close();
  }
}
