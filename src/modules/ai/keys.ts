/**
 * Personal AI key settings: the account key (operators.ai_key) and the project key
 * (projects.secrets.aiKey). Keys are validated, AES-256-GCM encrypted before they reach the
 * database, and only `hasAiKey` ever leaves this module.
 */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { planOf } from '../plans/plans.js';
import { loadMemberProject } from '../projects/access.js';
import { AiErrors } from './errors.js';
import { setProjectSecret } from '../projects/queries.js';
import { updateAccountKey } from './queries.js';

/** `gsk_` then printable ASCII without spaces; 200 characters at most in total. */
const AI_KEY = /^gsk_[\x21-\x7e]{1,196}$/;

function validateAiKey(aiKey: string): void {
  if (!AI_KEY.test(aiKey)) throw AiErrors.invalid_ai_key();
}

/** Personal keys may be cleared on any plan; saving one needs the plan flag. */
function checkNewKey(operator: OperatorIdentity, aiKey: string | null): void {
  if (aiKey === null) return;
  if (!planOf(operator.plan).personalAiKey) throw AiErrors.personal_ai_key_not_allowed();
  validateAiKey(aiKey);
}

export interface KeyState {
  hasAiKey: boolean;
}

export async function setAccountKey(ctx: AppContext, operator: OperatorIdentity, aiKey: string | null): Promise<KeyState> {
  checkNewKey(operator, aiKey);
  const sealed = aiKey === null ? null : encrypt(ctx.config.encryptionKey, aiKey);
  await updateAccountKey(ctx.db.admin, operator.id, sealed, ctx.clock.now());
  return { hasAiKey: aiKey !== null };
}

export async function setProjectKey(
  ctx: AppContext,
  operator: OperatorIdentity,
  projectId: string,
  aiKey: string | null,
): Promise<KeyState> {
  const project = await loadMemberProject(ctx, operator, projectId);
  checkNewKey(operator, aiKey);
  const sealed = aiKey === null ? null : encrypt(ctx.config.encryptionKey, aiKey);
  await setProjectSecret(ctx.db.admin, project.id, 'aiKey', sealed, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: project.id });
  return { hasAiKey: aiKey !== null };
}
