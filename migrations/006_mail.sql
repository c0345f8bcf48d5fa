-- Up Migration
-- Mail: delivery logs (one row per message), provider webhook events (idempotency and
-- out-of-order replay), templates (per project, plus global system templates), and the dev
-- outbox (messages "sent" when no mail provider is configured). Policies: sql/60_mail_policies.sql.

CREATE TABLE mail_logs (
  id                 object_id PRIMARY KEY,
  -- NULL for platform mails (operator OTPs); those are never visible to a tenant.
  project_id         object_id REFERENCES projects (id) ON DELETE CASCADE,
  job_id             text,
  provider_email_id  text,
  "to"               text NOT NULL,
  subject            text NOT NULL,
  status             text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'sent', 'delivered', 'bounced', 'complained', 'failed')),
  provider           text NOT NULL CHECK (provider IN ('byok', 'default', 'outbox')),
  using_byok         boolean NOT NULL DEFAULT false,
  template_used      text,
  -- What a system mail is for (e.g. 'auth.verify-email'); NULL for API sends.
  tag                text,
  -- Whether the message holds a slot of the monthly quota (system mails do not).
  charged            boolean NOT NULL DEFAULT true,
  error              text,
  sent_at            timestamptz NOT NULL,
  -- The newest provider event applied so far: a log never moves back in time.
  last_event_at      timestamptz,
  last_event_rank    smallint NOT NULL DEFAULT -1,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_logs_recent_idx ON mail_logs (project_id, sent_at DESC, id DESC);
CREATE UNIQUE INDEX mail_logs_provider_email_idx ON mail_logs (provider_email_id) WHERE provider_email_id IS NOT NULL;

-- Every verified webhook event, once (scope '' = platform secret, else the project id whose
-- secret signed it). Events for a message the worker has not yet marked accepted wait here
-- and are applied when it does.
CREATE TABLE mail_events (
  scope        text NOT NULL,
  event_id     text NOT NULL,
  email_id     text NOT NULL,
  type         text NOT NULL,
  event_at     timestamptz NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, event_id)
);
CREATE INDEX mail_events_email_idx ON mail_events (email_id);

CREATE TABLE mail_templates (
  id          object_id PRIMARY KEY DEFAULT new_object_id(),
  -- NULL: a global system template, readable by every project, writable by none.
  project_id  object_id REFERENCES projects (id) ON DELETE CASCADE,
  key         text NOT NULL CHECK (key ~ '^[a-z0-9_-]{1,100}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  subject     text NOT NULL DEFAULT '',
  html        text NOT NULL DEFAULT '',
  text        text NOT NULL DEFAULT '',
  is_system   boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mail_templates_name_idx ON mail_templates (coalesce(project_id, ''), lower(name));
CREATE UNIQUE INDEX mail_templates_key_idx ON mail_templates (coalesce(project_id, ''), key);

-- The dev outbox: what would have been sent, for operators to read.
CREATE TABLE mail_outbox (
  id           uuid PRIMARY KEY,
  project_id   object_id REFERENCES projects (id) ON DELETE CASCADE,
  mail_log_id  object_id,
  -- Same key, same message: a retried job never records (or "sends") twice.
  idempotency_key text NOT NULL UNIQUE,
  "from"       text NOT NULL,
  "to"         jsonb NOT NULL,
  subject      text NOT NULL,
  html         text,
  text         text,
  last_event   text NOT NULL DEFAULT 'sent',
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_recent_idx ON mail_outbox (project_id, created_at DESC);

INSERT INTO mail_templates (project_id, key, name, subject, html, text, is_system) VALUES
  (NULL, 'welcome', 'Welcome', 'Welcome to {{projectName}}',
   '<h1>Welcome, {{name}}!</h1><p>Thanks for joining {{projectName}}.</p><p><a href="{{appUrl}}">Open {{projectName}}</a></p>',
   'Welcome, {{name}}! Thanks for joining {{projectName}}. Open it at {{appUrl}}', true),
  (NULL, 'otp', 'OTP', 'Your verification code: {{otp}}',
   '<p>Hi {{name}},</p><p>Your code is <strong>{{otp}}</strong>. It expires in {{expiresInMinutes}} minutes.</p>',
   'Hi {{name}}, your code is {{otp}}. It expires in {{expiresInMinutes}} minutes.', true),
  (NULL, 'password-reset', 'Password reset', 'Reset your password',
   '<p>Hi {{name}},</p><p><a href="{{resetUrl}}">Reset your password</a>. If you did not ask for this, ignore this mail.</p>',
   'Hi {{name}}, reset your password at {{resetUrl}}. If you did not ask for this, ignore this mail.', true),
  (NULL, 'invite', 'Invite', 'You are invited to {{projectName}}',
   '<p>Hi {{name}},</p><p>You have been invited to {{projectName}}. <a href="{{inviteUrl}}">Accept the invitation</a>.</p>',
   'Hi {{name}}, you have been invited to {{projectName}}. Accept at {{inviteUrl}}', true);

GRANT SELECT, INSERT, UPDATE ON mail_logs TO plinth_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON mail_templates TO plinth_api;
GRANT SELECT, INSERT, UPDATE ON mail_outbox TO plinth_api;
