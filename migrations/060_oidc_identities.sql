-- Up Migration
-- Sign-in with any OpenID Connect provider (issue 38, src/modules/social/oidc.ts).
--
-- A provider identity of an end user: (provider, issuer, subject) names one person at one
-- provider. The issuer is part of the key: when an operator points a provider at another
-- issuer, the old subjects no longer match (linking then needs a verified email again).
-- GitHub and Google keep their columns on app_users (migrations/004_auth.sql).
CREATE TABLE app_user_identities (
  project_id      object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  provider        text NOT NULL CHECK (provider ~ '^[a-z][a-z0-9-]{0,39}$'),
  issuer          text NOT NULL CHECK (length(issuer) <= 2048),
  subject         text NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
  user_id         object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  email           text,
  created_at      timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (project_id, provider, issuer, subject)
);
CREATE INDEX app_user_identities_user_idx ON app_user_identities (user_id);

-- The OAuth state of a flow in flight may now name any configured provider (its id).
ALTER TABLE social_states DROP CONSTRAINT IF EXISTS social_states_provider_check;
ALTER TABLE social_states ADD CONSTRAINT social_states_provider_check CHECK (provider ~ '^[a-z][a-z0-9-]{0,39}$');

GRANT SELECT, INSERT, UPDATE, DELETE ON app_user_identities TO plinth_api;
