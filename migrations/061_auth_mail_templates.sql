-- Up Migration
-- Localized auth mails (issue 38, src/modules/mail/auth-mails.ts): a project's own text of one
-- auth mail (verification, reset, magic link, email code) in one locale. Without a row, the
-- built-in text of that locale (English, German, French, Spanish) is used.
CREATE TABLE auth_mail_templates (
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('verification', 'reset', 'magic_link', 'email_code')),
  locale      text NOT NULL CHECK (locale ~ '^[a-z]{2,3}(-[A-Z][A-Za-z0-9]{1,7})?$'),
  subject     text NOT NULL CHECK (length(subject) BETWEEN 1 AND 300),
  html        text NOT NULL DEFAULT '' CHECK (length(html) <= 100000),
  text        text NOT NULL DEFAULT '' CHECK (length(text) <= 100000),
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (project_id, kind, locale)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON auth_mail_templates TO plinth_api;
