/** TypeBox pieces the MFA routes share (they feed /docs). */
import { Type } from '@sinclair/typebox';
import type { AuthenticationResponseJSON } from '../../../lib/identity/passkeys.js';
import type { SecondFactorProof } from '../second-factor.js';

export const Code = Type.String({ maxLength: 16, description: 'The 6-digit code of the authenticator app' });
export const RecoveryCode = Type.String({ maxLength: 32, description: 'One of the recovery codes (xxxxx-xxxxx)' });

/** A PublicKeyCredential as JSON (what @simplewebauthn/browser's startRegistration/startAuthentication return). */
export const WebauthnResponse = Type.Object(
  {
    id: Type.String({ maxLength: 1024 }),
    rawId: Type.String({ maxLength: 1024 }),
    type: Type.String({ maxLength: 32 }),
    response: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: true, description: 'The credential as JSON (PublicKeyCredential.toJSON())' },
);

/** A fresh second factor for removing or regenerating: an app code, a recovery code or a passkey assertion. */
export const StrongProof = Type.Object(
  { code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode), passkey: Type.Optional(WebauthnResponse) },
  { additionalProperties: false, description: 'A fresh app code, a recovery code, or a passkey assertion over a sign-in challenge' },
);

/** A StrongProof body as the shared check takes it (the assertion's JSON is checked by the ceremony). */
export const proofOf = (body: { code?: string; recoveryCode?: string; passkey?: unknown } | undefined): SecondFactorProof =>
  ({ code: body?.code, recoveryCode: body?.recoveryCode, passkey: body?.passkey as AuthenticationResponseJSON | undefined });
