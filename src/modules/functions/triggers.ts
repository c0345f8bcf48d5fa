/**
 * What calls a function of each kind (docs/functions.md): validated at deploy, so a node never
 * runs a function whose trigger it cannot read. Client text becomes only these shapes.
 */
import { parseCrontab } from 'graphile-worker';
import { FunctionErrors } from './errors.js';
import type { FunctionKind } from './tables.js';

export const WRITE_EVENTS = ['create', 'update', 'delete'] as const;
export const CHANGE_EVENTS = ['create', 'update', 'delete', 'restore'] as const;
export const AUTH_EVENTS = ['sign-up', 'sign-in', 'delete'] as const;
export const AUTH_HOOKS = ['before-sign-up', 'token-claims'] as const;

export type Trigger = Record<string, unknown>;

const COLLECTION = /^[A-Za-z0-9_-]{1,64}$/;

function events<T extends string>(value: unknown, allowed: readonly T[], what: string): T[] {
  if (value === undefined) return [...allowed];
  if (!Array.isArray(value) || value.length === 0 || !value.every((e) => typeof e === 'string' && (allowed as readonly string[]).includes(e))) {
    throw FunctionErrors.function_trigger_invalid(`${what} must be a non-empty list of ${allowed.join(', ')}.`);
  }
  return [...new Set(value as T[])];
}

function collection(value: unknown): string {
  if (typeof value !== 'string' || !COLLECTION.test(value)) throw FunctionErrors.function_trigger_invalid('trigger.collection must name a collection.');
  return value.toLowerCase();
}

/** The trigger as stored: only the members its kind reads, normalised. */
export function normaliseTrigger(kind: FunctionKind, raw: unknown): Trigger {
  const t = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  switch (kind) {
    case 'http':
      return {};
    case 'before':
      return { collection: collection(t.collection), events: events(t.events, WRITE_EVENTS, 'trigger.events') };
    case 'after':
      if (t.auth !== undefined) return { auth: events(t.auth, AUTH_EVENTS, 'trigger.auth') };
      return { collection: collection(t.collection), events: events(t.events, CHANGE_EVENTS, 'trigger.events') };
    case 'auth':
      if (typeof t.event !== 'string' || !(AUTH_HOOKS as readonly string[]).includes(t.event)) {
        throw FunctionErrors.function_trigger_invalid(`trigger.event must be one of ${AUTH_HOOKS.join(', ')}.`);
      }
      return { event: t.event };
    case 'schedule': {
      if (typeof t.cron !== 'string' || t.cron.length > 100 || !/^[0-9*,/\- ]+$/.test(t.cron.trim())) {
        throw FunctionErrors.function_trigger_invalid('trigger.cron must be a cron expression (minute hour day month weekday, UTC).');
      }
      try {
        parseCrontab(`${t.cron.trim()} plinth_check`);
      } catch (err) {
        throw FunctionErrors.function_trigger_invalid(`trigger.cron: ${err instanceof Error ? err.message : 'invalid'}`);
      }
      return { cron: t.cron.trim().replace(/\s+/g, ' ') };
    }
  }
}
