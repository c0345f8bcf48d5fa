/**
 * The MailLog status machine (docs/mail.md, "MailLog states"). Provider events (webhooks, and the
 * dev outbox's simulated ones) are recorded once by event id and applied with a guarded
 * UPDATE that only moves a log forward: an event older than the newest one applied (by event
 * time, then by status rank) changes nothing, so replays and reordering are harmless.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { MailStatus } from './tables.js';

/**
 * Event type → new status and its rank (the tie-break for events with the same time). A Map:
 * the type is the sender's text, and `constructor` must not find anything.
 */
export const EVENT_EFFECTS: ReadonlyMap<string, { status: MailStatus; rank: number }> = new Map([
  ['email.delivery_delayed', { status: 'queued', rank: 0 }],
  ['email.sent', { status: 'sent', rank: 1 }],
  ['email.delivered', { status: 'delivered', rank: 2 }],
  ['email.failed', { status: 'failed', rank: 3 }],
  ['email.bounced', { status: 'bounced', rank: 3 }],
  ['email.complained', { status: 'complained', rank: 4 }],
] as const);

export interface MailEvent {
  /** '' for events signed with the platform secret, else the project whose secret signed it. */
  scope: string;
  eventId: string;
  emailId: string;
  type: string;
  at: Date;
}

/** Stores the event; false when this event id was already stored for this scope. */
export async function recordEvent(db: Kysely<Database>, e: MailEvent): Promise<boolean> {
  const row = await db
    .insertInto('mail_events')
    .values({ scope: e.scope, event_id: e.eventId, email_id: e.emailId, type: e.type, event_at: e.at })
    .onConflict((oc) => oc.columns(['scope', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The guarded UPDATE that moves the log of `e.emailId` to the event's status unless a newer
 * event was applied. A platform-scoped event touches only logs sent with the platform key (or
 * the outbox); a project-scoped one only that project's own-key logs.
 */
function applyStatement(e: MailEvent, effect: { status: MailStatus; rank: number }) {
  const scoped = e.scope === '' ? sql`using_byok = false` : sql`project_id = ${e.scope} AND using_byok = true`;
  return sql`
    UPDATE mail_logs
    SET status = ${effect.status}, last_event_at = ${e.at}, last_event_rank = ${effect.rank}, updated_at = now()
    WHERE provider_email_id = ${e.emailId} AND ${scoped}
      AND (last_event_at IS NULL OR (last_event_at, last_event_rank) < (${e.at}::timestamptz, ${effect.rank}::smallint))`;
}

/** Applies one event to its log (see applyStatement); returns whether a log changed. */
export async function applyEvent(db: Kysely<Database>, e: MailEvent): Promise<boolean> {
  const effect = EVENT_EFFECTS.get(e.type);
  if (!effect) return false;
  const res = await applyStatement(e, effect).execute(db);
  return Number(res.numAffectedRows ?? 0) > 0;
}

/**
 * Records several events of one message and applies the newest, in one statement: the log
 * ends where applying each in order would (the status machine only moves forward). Only for
 * events of a message whose log already carries its provider id and that no webhook can race
 * (the dev outbox's simulated ones): a webhook goes through ingestEvent.
 */
export async function recordAndApplyNewest(db: Kysely<Database>, events: MailEvent[]): Promise<void> {
  // The order the status machine applies: event time, then status rank.
  const newest = events
    .flatMap((e) => {
      const effect = EVENT_EFFECTS.get(e.type);
      return effect ? [{ e, effect }] : [];
    })
    .sort((a, b) => +b.e.at - +a.e.at || b.effect.rank - a.effect.rank)[0];
  if (!newest) return;
  const rows = events.map((e) => sql`(${e.scope}, ${e.eventId}, ${e.emailId}, ${e.type}, ${e.at}::timestamptz)`);
  await sql`
    WITH recorded AS (
      INSERT INTO mail_events (scope, event_id, email_id, type, event_at) VALUES ${sql.join(rows)}
      ON CONFLICT (scope, event_id) DO NOTHING)
    ${applyStatement(newest.e, newest.effect)}`.execute(db);
}

/** Applies the stored events of a message the worker has just learnt the provider id of. */
export async function applyStoredEvents(db: Kysely<Database>, emailId: string, scope: string): Promise<void> {
  const events = await db
    .selectFrom('mail_events')
    .select(['event_id', 'type', 'event_at'])
    .where('email_id', '=', emailId)
    .where('scope', '=', scope)
    .orderBy('event_at')
    .execute();
  for (const ev of events) {
    await applyEvent(db, { scope, eventId: ev.event_id, emailId, type: ev.type, at: new Date(ev.event_at) });
  }
}

/** Records and applies one event (a verified webhook). */
export async function ingestEvent(db: Kysely<Database>, e: MailEvent): Promise<{ duplicate: boolean; applied: boolean }> {
  // Two statements on purpose: the record commits before the apply, so a worker that sets
  // the provider id concurrently either sees this event stored or is seen by the apply.
  const fresh = await recordEvent(db, e);
  // Re-applying a duplicate is harmless (same time and rank change nothing) and heals a crash
  // between the two statements.
  const applied = await applyEvent(db, e);
  return { duplicate: !fresh, applied };
}
