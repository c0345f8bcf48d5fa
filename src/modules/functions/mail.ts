/**
 * `plinth.mail.send` (docs/functions.md "plinth.mail"): one message queued by the same service
 * code as `POST /api/mail/send` (../mail/send.ts), as that route would for the function's own
 * project with its secret key: the same body schema, content rules, templates and their plan
 * gate, the sender the project's key decides (own key or shared, dev outbox without a
 * provider), the same monthly quota slot (429 `mail_quota_exceeded`), and with an idempotency
 * key the same key space as the route's `Idempotency-Key`. There is no second mail path.
 *
 * The project is the invocation's, never one the guest names: a `projectId`, `from` or any
 * other member the route does not read is ignored here as the route ignores it.
 */
import { Value } from '@sinclair/typebox/value';
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { keyedCall } from '../idempotency/http.js';
import type { SendInput } from '../mail/content.js';
import { SendBody } from '../mail/routes/send.js';
import { queuedResponse, sendMail, sendMailOnce, type SendResult } from '../mail/send.js';
import { FunctionErrors } from './errors.js';

const MEMBERS = ['to', 'subject', 'html', 'text', 'templateId', 'templateName', 'variables'] as const;

/** The route's validation message for the first problem (src/plugins/errors.ts words it the same way). */
function invalid(message: unknown): Error {
  const first = Value.Errors(SendBody, message).First();
  if (!first) return Errors.validation_failed();
  const field = first.path.replace(/^\//, '').replace(/\//g, '.');
  if (first.value === undefined && field && !field.includes('.')) return Errors.validation_failed(`Field '${field}' is required.`);
  return Errors.validation_failed(field ? `Field '${field}' ${first.message.toLowerCase()}.` : `The message ${first.message.toLowerCase()}.`);
}

export async function sendFromFunction(ctx: AppContext, projectId: string, message: unknown, idempotencyKey: unknown): Promise<SendResult> {
  if (!message || typeof message !== 'object' || Array.isArray(message)) throw Errors.validation_failed('plinth.mail.send takes a message object.');
  if (!Value.Check(SendBody, message)) throw invalid(message);
  const input: Record<string, unknown> = {};
  for (const k of MEMBERS) if ((message as Record<string, unknown>)[k] !== undefined) input[k] = (message as Record<string, unknown>)[k];
  const project = await ctx.projects.cachedById(projectId);
  if (!project) throw FunctionErrors.function_unavailable();
  const body = input as unknown as SendInput;
  if (idempotencyKey === undefined || idempotencyKey === null) return sendMail(ctx, project, body);
  const keyed = keyedCall(idempotencyKey, 'POST', '/api/mail/send', input);
  const answer = await sendMailOnce(ctx, project, body, keyed, queuedResponse);
  return (JSON.parse(answer.body) as { data: SendResult }).data;
}
