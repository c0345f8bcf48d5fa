/** End users' adapter of the shared WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts): a project's passkeys, in its tenant scope. */
import type { Tx } from '../../db/pool.js';
import { passkeyStore, USER_PASSKEYS } from '../../lib/identity/passkey-queries.js';

export const userPasskeyStore = (db: Tx, projectId: string) => passkeyStore(db, USER_PASSKEYS, { project_id: projectId });
