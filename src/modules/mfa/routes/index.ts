/**
 * End users' second factors (/api/userAuth/mfa/*, docs/auth.md "Second factors"): enrolment
 * and management for the signed-in user (endUser), completing a sign-in (apiKey: the
 * challenge is the credential), and the project users' factors for the operator.
 */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { defineRoutes } from '../../../route-groups.js';
import { authPreconditions } from '../../auth/schema.js';
import factorsFlow from './factors.js';
import passkeySigninFlow from './passkey-signin.js';
import passkeysFlow from './passkeys.js';
import projectUserFactorsRoutes from './project-users.js';
import recoveryCodesFlow from './recovery-codes.js';
import totpFlow from './totp.js';
import verifyFlow from './verify.js';

/** Auth must be enabled with a valid users schema, as for every /api/userAuth route. */
async function preconditions(app: App, ctx: AppContext): Promise<void> {
  app.addHook('preHandler', authPreconditions(ctx));
}

export const mfaPublicRoutes = [
  defineRoutes('apiKey', preconditions, verifyFlow, passkeySigninFlow),
  defineRoutes('endUser', preconditions, totpFlow, recoveryCodesFlow, factorsFlow, passkeysFlow),
];

export const mfaDashboardRoutes = [defineRoutes('operator', projectUserFactorsRoutes)];
