/**
 * TypeBox pieces of user administration (docs/auth.md "User administration"), shared by the
 * secret-key routes (admin-users.ts) and the dashboard's (project-users.ts): one wire shape.
 */
import { Type } from '@sinclair/typebox';
import { envelopeOf } from '../../operators/schemas.js';

const Email = Type.String({ maxLength: 320, description: 'Stored trimmed and lower-cased; unique in the project' });
const Password = Type.String({ maxLength: 1024, description: '6–100 characters' });
const Fields = Type.Record(Type.String(), Type.Unknown(), {
  description: "Profile fields of the users schema, readOnly and hidden ones included (validated against it); not email, password or the verification flag",
});

export const UserListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the email, name or username, or a user id' })),
  email: Type.Optional(Type.String({ maxLength: 320, description: 'The email starts with this (case-insensitive)' })),
}, { additionalProperties: false });

export const CreateUserBody = Type.Object({
  email: Email,
  password: Type.Optional(Password),
  emailVerified: Type.Optional(Type.Boolean({ default: false })),
  invite: Type.Optional(Type.Boolean({ description: 'Mail an invitation: a sign-in link and code valid 24 hours (only without a password)' })),
  redirectTo: Type.Optional(Type.String({ maxLength: 2048, description: "Where the invitation's link opens: under the site URL or a redirect URL" })),
  data: Type.Optional(Fields),
}, { additionalProperties: false });

export const UpdateUserBody = Type.Object({
  email: Type.Optional(Email),
  password: Type.Optional(Type.String({ maxLength: 1024, description: "6–100 characters; revokes the user's sessions" })),
  emailVerified: Type.Optional(Type.Boolean()),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Merged into the profile (null stores null); readOnly and hidden fields included' })),
}, { additionalProperties: false });

/** A user as an administrator sees it: every profile field, hidden ones included; never a password. */
export const AdminUser = Type.Object({
  _id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  emailVerified: Type.Boolean(),
  disabled: Type.Boolean(),
  authProviders: Type.Array(Type.String()),
  isAnonymous: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
}, { additionalProperties: true, description: 'Plus the profile fields of the users schema' });

export const UserEnvelope = envelopeOf(AdminUser);
export const UserListEnvelope = envelopeOf(Type.Object({
  items: Type.Array(AdminUser),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
}));
