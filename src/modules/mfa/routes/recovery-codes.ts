/** POST /api/userAuth/mfa/recovery-codes: a new set of ten (shown once), the old set void; needs a fresh second factor. */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { userIdOf } from '../../auth/user-auth.js';
import { regenerateRecoveryCodes } from '../recovery.js';
import { proofOf, StrongProof } from './schemas.js';

export default async function recoveryCodesFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/mfa/recovery-codes', {
    schema: { tags: ['userAuth mfa'], summary: 'Regenerate the recovery codes (the old set stops working); needs a fresh code, a recovery code or a passkey assertion', body: StrongProof },
    handler: async (req) => ok({ recoveryCodes: await regenerateRecoveryCodes(ctx, projectOf(req), userIdOf(req), proofOf(req.body)) }, 'Recovery codes regenerated'),
  });
}
