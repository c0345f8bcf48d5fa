/** TypeBox shapes shared by the operator routes (and the envelope helper other dashboard routes reuse). */
import { Type, type TSchema } from '@sinclair/typebox';

export const envelopeOf = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Boolean(), data, message: Type.String() });

export const MessageEnvelope = envelopeOf(Type.Object({ message: Type.String() }));

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const NewPassword = Type.String({ minLength: 8, maxLength: 100 });
/** Login takes any stored password; the cap only bounds hashing work. */
export const AnyPassword = Type.String({ minLength: 1, maxLength: 100 });
export const OtpCode = Type.String({ pattern: '^[0-9]{6}$' });

export const OperatorUser = Type.Object({
  _id: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  plan: Type.Union([Type.Literal('free'), Type.Literal('pro')]),
  isVerified: Type.Boolean(),
  isAdmin: Type.Boolean(),
  createdAt: Type.String(),
});

export const SessionData = Type.Object({
  token: Type.String(),
  accessToken: Type.String(),
  expiresIn: Type.String(),
  refreshToken: Type.Optional(Type.String()),
  user: OperatorUser,
});

export const SessionEnvelope = envelopeOf(SessionData);

/** What a password sign-in of an operator with a second factor gets instead of a session. */
export const ChallengeEnvelope = envelopeOf(
  Type.Object({ mfaRequired: Type.Literal(true), challengeId: Type.String(), methods: Type.Array(Type.String()), expiresIn: Type.Integer() }),
);
