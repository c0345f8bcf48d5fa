/**
 * The end-user document as clients see it, and the rules for the custom fields a client may
 * write (signup, update-profile): system and secret keys are never taken from the body, the
 * rest is validated against the project's `users` schema.
 */
import { DataErrors } from '../data/errors.js';
import { withoutHidden } from '../collections/protection.js';
import type { FieldDef } from '../../db/types.js';
import { validateDocument } from '../collections/validate.js';
import { AuthErrors } from './errors.js';
import { FunctionErrors } from '../functions/errors.js';
import type { UserRow } from './queries.js';
import type { UsersSchema } from './schema.js';

/** Keys a client can never set through signup or update-profile. */
const PROTECTED = new Set([
  '_id', 'id', 'email', 'password', 'emailVerified', 'isVerified', 'isverified', 'githubId', 'googleId',
  'authProviders', 'isAnonymous', 'createdAt', 'updatedAt', '__proto__', 'constructor', 'prototype',
]);

/** The body's custom fields: protected keys and `$`-keys dropped. */
function customFields(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (PROTECTED.has(k) || k.startsWith('$') || k.includes('.')) continue;
    out[k] = v;
  }
  return out;
}

function checkUsername(value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || value.trim().length < 3 || value.trim().length > 50) {
    throw AuthErrors.invalid_input('Username must be between 3 and 50 characters.');
  }
}

/** Required `name`/`username` not supplied: derived from the email's local part (as urBackend). Returns the keys filled. */
function fillRequiredNames(fields: FieldDef[], email: string, data: Record<string, unknown>): string[] {
  const base = email.split('@')[0]!.replace(/[^A-Za-z0-9_.-]/g, '').padEnd(3, '0').slice(0, 50);
  const filled: string[] = [];
  for (const key of ['name', 'username']) {
    const f = fields.find((x) => x.key === key);
    if (f?.required && (data[key] === undefined || data[key] === null || data[key] === '')) {
      data[key] = base;
      filled.push(key);
    }
  }
  return filled;
}

/**
 * Validates a new user's custom fields: `data` to store, and which of its keys were derived
 * rather than chosen by the user (unique.ts may change those to keep them unique).
 */
export function newUserData(schema: UsersSchema, email: string, body: Record<string, unknown>): { data: Record<string, unknown>; derived: string[] } {
  const data = customFields(body);
  assertNotReadOnly(schema, data, true);
  checkUsername(data.username);
  const derived = fillRequiredNames(schema.fields, email, data);
  const result = validateDocument(schema.fields, { ...data, email, password: 'x'.repeat(8) }, 'insert');
  if (!result.ok) throw AuthErrors.invalid_input(result.message);
  return { data: customFields(result.value as Record<string, unknown>), derived };
}

/**
 * A new user's fields after the project's before-sign-up function (src/modules/functions/auth-hooks.ts)
 * returned `hook`: merged over `data` and validated against the users schema as sign-up input
 * is, except that the function, being the project's own code, may set `readOnly` fields (a
 * role, a plan). Keys no client may set (email, password, the verification flag, system keys)
 * make the answer invalid, as does a value the schema refuses: the sign-up fails closed
 * (502 function_result_invalid). `derived` loses the keys the function chose.
 */
export function hookUserData(
  schema: UsersSchema, email: string | null, signup: { data: Record<string, unknown>; derived: string[] }, hook: Record<string, unknown>,
): { data: Record<string, unknown>; derived: string[]; readOnly: boolean } {
  for (const k of Object.keys(hook)) {
    if (PROTECTED.has(k) || k === schema.verifyKey || k.startsWith('$') || k.includes('.')) {
      throw FunctionErrors.function_result_invalid(`A before-sign-up function cannot set '${k.slice(0, 100)}'.`);
    }
  }
  const data = { ...signup.data, ...hook };
  try {
    checkUsername(data.username);
  } catch (err) {
    throw FunctionErrors.function_result_invalid(`The before-sign-up function's data: ${(err as Error).message}`);
  }
  // Validation needs an email and a password of the schema's shape; neither is stored from here.
  const result = validateDocument(schema.fields, { ...data, email: email ?? 'guest@example.invalid', password: 'x'.repeat(8) }, 'insert');
  if (!result.ok) throw FunctionErrors.function_result_invalid(`The before-sign-up function's data: ${result.message}`);
  const readOnly = schema.fields.some((f) => f.readOnly && Object.hasOwn(hook, f.key));
  return { data: customFields(result.value as Record<string, unknown>), derived: signup.derived.filter((k) => !Object.hasOwn(hook, k)), readOnly };
}

/** Validates a profile update; returns the fields to merge into `data`. */
export function profileUpdate(schema: UsersSchema, body: Record<string, unknown>): Record<string, unknown> {
  const data = customFields(body);
  assertNotReadOnly(schema, data, false);
  checkUsername(data.username);
  if (Object.keys(data).length === 0) return data;
  const result = validateDocument(schema.fields, data, 'update');
  if (!result.ok) throw AuthErrors.invalid_input(result.message);
  return customFields(result.value as Record<string, unknown>);
}

/**
 * An administrator's profile fields (the secret key or the project's operator, user-admin.ts):
 * every field of the users schema may be set, `readOnly` and `hidden` ones included, validated
 * against it like any write. The keys a client may never set are refused here (400
 * user_field_reserved) rather than dropped: email, password and the verification flag have
 * their own members, and the rest are the system's. Returns the fields to store and, for a new
 * user, which were derived from the email (unique.ts may suffix those).
 */
export function adminUserData(schema: UsersSchema, body: Record<string, unknown>, creating: { email: string } | null): { data: Record<string, unknown>; derived: string[] } {
  for (const k of Object.keys(body)) {
    if (PROTECTED.has(k) || k === schema.verifyKey || k.startsWith('$') || k.includes('.')) {
      throw AuthErrors.user_field_reserved(`'${k.slice(0, 100)}' cannot be set as a profile field${k === 'email' || k === 'password' || k === schema.verifyKey ? ': use its own member' : ''}.`);
    }
  }
  const data = customFields(body);
  checkUsername(data.username);
  const derived = creating ? fillRequiredNames(schema.fields, creating.email, data) : [];
  if (!creating && Object.keys(data).length === 0) return { data, derived };
  const doc = creating ? { ...data, email: creating.email, password: 'x'.repeat(8) } : data;
  const result = validateDocument(schema.fields, doc, creating ? 'insert' : 'update');
  if (!result.ok) throw AuthErrors.invalid_input(result.message);
  return { data: customFields(result.value as Record<string, unknown>), derived };
}

/**
 * Fields of the users schema declared readOnly (docs/rules.md, "Field protection") are set by
 * the secret key only: a sign-up may carry one only with its default, an update not at all.
 * The trigger on app_users (sql/21_field_protection.sql) refuses the same for any other path.
 */
function assertNotReadOnly(schema: UsersSchema, data: Record<string, unknown>, creating: boolean): void {
  for (const f of schema.fields) {
    if (!f.readOnly || !Object.hasOwn(data, f.key)) continue;
    const v = data[f.key];
    if (creating && (v === null || v === f.default)) continue;
    throw DataErrors.field_read_only(`Field '${f.key}' is read-only: only the secret key may set or change it.`);
  }
}

/**
 * The user as an administrator sees it (the secret key, the project's operator): every profile
 * field, `hidden` ones ("owner" and "secret") included, and whether the account is disabled;
 * never the password hash (nor any factor secret, kept in other tables).
 */
export function toAdminUser(row: UserRow, schema?: UsersSchema): AdminUserView {
  const extra = schema && schema.verifyKey !== 'emailVerified' ? { [schema.verifyKey]: row.email_verified } : {};
  return { ...toUser(row), ...extra, disabled: row.disabled_at !== null } as AdminUserView;
}

export interface AdminUserView {
  _id: string;
  email: string | null;
  emailVerified: boolean;
  disabled: boolean;
  authProviders: string[];
  isAnonymous: boolean;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

/** The user as returned to the user themself: everything except the password hash and secret-hidden fields. */
export function toUser(row: UserRow, schema?: UsersSchema): Record<string, unknown> {
  const data = schema ? withoutHidden(schema.fields, row.data, true) : row.data;
  const user: Record<string, unknown> = { _id: row.id, email: row.email, ...data };
  user.emailVerified = row.email_verified;
  if (schema && schema.verifyKey !== 'emailVerified') user[schema.verifyKey] = row.email_verified;
  if (row.github_id) user.githubId = row.github_id;
  if (row.google_id) user.googleId = row.google_id;
  user.authProviders = row.auth_providers;
  user.isAnonymous = row.is_anonymous;
  user.createdAt = row.created_at.toISOString();
  user.updatedAt = row.updated_at.toISOString();
  return user;
}

const UNSAFE = ['password', 'email', 'token', 'otp', 'secret', 'session', 'refresh'];

/** The public profile (docs/wire-compatibility.md §2.7): `_id`, schema keys without sensitive words, timestamps. */
export function toPublicProfile(row: Pick<UserRow, 'id' | 'data' | 'created_at' | 'updated_at'>, schema: UsersSchema): Record<string, unknown> {
  const out: Record<string, unknown> = { _id: row.id };
  for (const f of schema.fields) {
    const lower = f.key.toLowerCase();
    if (UNSAFE.some((w) => lower.includes(w)) || f.key === schema.verifyKey || f.hidden) continue;
    if (row.data[f.key] !== undefined) out[f.key] = row.data[f.key];
  }
  out.createdAt = row.created_at.toISOString();
  out.updatedAt = row.updated_at.toISOString();
  return out;
}
