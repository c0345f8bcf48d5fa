/**
 * The whole database as Kysely sees it: the foundation tables (src/db/types.ts) and the
 * domains' own (src/modules/<domain>/tables.ts; ai and data have none: they use the foundation's). It lives at the root, beside routes.ts and
 * boot.ts, because it is composition: src/db/ knows only this type, never the domains.
 */
import type { FoundationTables } from './db/types.js';
import type { AuthTables } from './modules/auth/tables.js';
import type { IdempotencyTables } from './modules/idempotency/tables.js';
import type { LogTables } from './modules/logs/tables.js';
import type { MailTables } from './modules/mail/tables.js';
import type { MfaTables } from './modules/mfa/tables.js';
import type { OperatorTables } from './modules/operators/tables.js';
import type { SocialTables } from './modules/social/tables.js';
import type { StorageTables } from './modules/storage/tables.js';
import type { WebhookTables } from './modules/webhooks/tables.js';
import type { FunctionTables } from './modules/functions/tables.js';
import type { AuditTables } from './modules/audit/tables.js';
import type { MemberTables } from './modules/members/tables.js';
import type { UsageTables } from './modules/usage/tables.js';

export interface Database extends FoundationTables, OperatorTables, AuthTables, MfaTables, StorageTables, SocialTables, MailTables, WebhookTables, IdempotencyTables, LogTables, FunctionTables, AuditTables, MemberTables, UsageTables {}
