/** TypeBox schemas shared by the storage routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), data, message: Type.String() });

const ErrorReply = Type.Object(
  { success: Type.Literal(false), data: Type.Object({}), message: Type.String(), error: Type.String(), code: Type.String() },
  { additionalProperties: true },
);

export const errorReplies = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorReply]));

export const ApiKeyHeaders = Type.Object(
  {
    'x-api-key': Type.Optional(Type.String({ description: 'sk_live_…, or pk_live_… together with a user Bearer token' })),
    authorization: Type.Optional(Type.String({ description: 'Bearer <end-user access token> (required with a pk)' })),
  },
  { additionalProperties: true },
);

export const FileView = Type.Object({
  path: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  provider: Type.Union([Type.Literal('internal'), Type.Literal('external')]),
  warning: Type.Optional(Type.String()),
});
