/** TypeBox pieces the MFA routes share (they feed /docs). */
import { Type } from '@sinclair/typebox';

export const Code = Type.String({ maxLength: 16, description: 'The 6-digit code of the authenticator app' });
export const RecoveryCode = Type.String({ maxLength: 32, description: 'One of the recovery codes (xxxxx-xxxxx)' });

/** A fresh second factor: exactly one of the two. */
export const Proof = Type.Object(
  { code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode) },
  { additionalProperties: false, description: 'A fresh code from the authenticator app, or a recovery code' },
);
