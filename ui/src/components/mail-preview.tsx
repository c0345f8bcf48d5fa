/** A mail as it will be sent (subject, HTML in a sandboxed frame, text), or why it cannot be rendered: the mail screens' preview pane. */
import type { ComponentChildren } from 'preact';

export function MailPreview({ problem, preview, children }: {
  problem?: string | null;
  preview: { subject: string; html: string; text: string } | null;
  /** A line above the subject (where the text comes from). */
  children?: ComponentChildren;
}) {
  return (
    <div aria-live="polite">
      <h2>Preview</h2>
      {problem && <p class="form-error">{problem}</p>}
      {preview && (
        <>
          {children}
          <p><strong>Subject:</strong> {preview.subject}</p>
          <iframe class="mail-preview" title="HTML preview" sandbox="" srcdoc={preview.html} />
          <pre class="mail-text">{preview.text}</pre>
        </>
      )}
    </div>
  );
}
