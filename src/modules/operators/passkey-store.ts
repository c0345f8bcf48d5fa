/** Operators' adapter of the shared WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts), through the owner connection. */
import type { Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { OPERATOR_PASSKEYS, passkeyStore } from '../../lib/identity/passkey-queries.js';

export const operatorPasskeyStore = (db: Kysely<Database>) => passkeyStore(db, OPERATOR_PASSKEYS, {});
