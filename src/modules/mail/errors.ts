/** The mail domain's error catalogue (docs/wire-compatibility.md §7, docs/errors.md). */
import { AppError, defineErrors } from '../../lib/errors.js';

export const MailErrors = defineErrors('mail', {
  mail_invalid_payload: { status: 400, message: 'Invalid mail payload.' },
  auth_mail_locale_invalid: { status: 400, message: 'The locale must be a language tag such as en, de or pt-BR.' },
  auth_mail_template_missing: { status: 404, message: 'The project has no own template of this auth mail in this locale.' },
  auth_mail_template_content: { status: 422, message: 'An auth mail template needs a subject and at least one of html or text.' },
  mail_invalid_recipient: { status: 400, message: 'Invalid recipient email format' },
  mail_mode_ambiguous: { status: 400, message: 'Provide either (subject + html/text) or a templateId/templateName.' },
  mail_template_both: { status: 400, message: 'Provide only one of templateId or templateName.' },
  mail_template_not_found: { status: 400, message: 'Template not found.' },
  mail_subject_required: { status: 400, message: 'Subject is required.' },
  mail_content_required: { status: 400, message: 'Provide at least one of html or text content.' },
  mail_invalid_batch: { status: 400, message: 'Invalid batch payload: send a JSON array of 1 to 100 items, each with to, subject and html or text.' },
  mail_invalid_provider_id: { status: 400, message: 'Invalid identifier format.' },
  mail_invalid_audience_id: { status: 400, message: 'Invalid audience or contact identifier format.' },
  mail_log_not_found: { status: 404, message: 'Entry not found for this project.' },
  mail_audiences_need_key: { status: 403, message: 'Audiences require a project mail key. Add your own Resend key in the project settings.' },
  mail_contacts_need_key: { status: 403, message: "Contacts require the project's own mail key." },
  mail_broadcasts_gate: { status: 403, message: 'Both the project mail key and the Pro plan are required for broadcasts.' },
  mail_broadcast_fields: { status: 400, message: 'audienceId, subject and html are required' },
  mail_custom_templates_pro: {
    status: 403,
    message: 'Custom Email Templates are a Pro feature. Please upgrade to use this functionality.',
  },
  mail_template_invalid_id: { status: 400, message: 'Invalid template id' },
  mail_template_missing: { status: 404, message: 'Template not found.' },
  mail_template_conflict: { status: 409, message: 'Template name/key already exists.' },
  mail_template_content: { status: 400, message: 'Provide at least one of html or text.' },
  mail_template_empty_patch: { status: 400, message: 'At least one field must be provided.' },
  mail_webhook_secret_invalid: { status: 400, message: 'The webhook secret must look like whsec_<base64>.' },
  mail_provider_error: { status: 502, message: 'The mail provider failed.', passthrough: true },
  mail_quota_exceeded: { status: 429, message: 'Monthly mail limit exceeded.' },
});

/** 429 when the month's slots are gone; Retry-After points at the next UTC month. */
export function mailQuotaExceeded(limit: number, now: Date): AppError {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const seconds = Math.max(1, Math.ceil((next - now.getTime()) / 1000));
  return MailErrors.mail_quota_exceeded(undefined, { limit }, { headers: { 'retry-after': String(seconds) } });
}

/** Passes a provider's own status and message through (docs/wire-compatibility.md §7.6: "passthrough"). */
export function providerError(status: number | null, message: string): AppError {
  return MailErrors.mail_provider_error(message || undefined, undefined, { status: status ?? undefined });
}
