-- Up Migration
-- Foundation: ids, operators, projects and keys, collections, documents, usage counters,
-- and the role every tenant-data query runs as. Row-level-security policies live in sql/.

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'plinth_api') THEN
    CREATE ROLE plinth_api NOLOGIN NOBYPASSRLS;
  END IF;
END $$;
GRANT plinth_api TO CURRENT_USER;

CREATE DOMAIN object_id AS text CHECK (VALUE ~ '^[0-9a-f]{24}$');

-- ObjectId-format id: 4-byte seconds, then 8 random bytes (hex from a v4 UUID).
CREATE FUNCTION new_object_id() RETURNS object_id LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM clock_timestamp()))::bigint), 8, '0')
          || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16))::object_id
$$;

CREATE TABLE operators (
  id             object_id PRIMARY KEY DEFAULT new_object_id(),
  email          text NOT NULL UNIQUE CHECK (email = lower(email)),
  password_hash  text NOT NULL,
  name           text,
  plan           text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro')),
  is_verified    boolean NOT NULL DEFAULT false,
  ai_key         jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
  id                    object_id PRIMARY KEY DEFAULT new_object_id(),
  owner_id              object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  name                  text NOT NULL,
  description           text NOT NULL DEFAULT '',
  site_url              text,
  publishable_key_hash  text NOT NULL UNIQUE,
  secret_key_hash       text NOT NULL UNIQUE,
  jwt_secret            jsonb NOT NULL,
  -- Plain settings (isAuthEnabled, requireEmailVerification, allowedDomains, providerFromEmail, ...)
  settings              jsonb NOT NULL DEFAULT '{}',
  -- AES-256-GCM encrypted secrets by name (mail key, OAuth client secrets, bucket credentials, ...)
  secrets               jsonb NOT NULL DEFAULT '{}',
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_owner_idx ON projects (owner_id);

CREATE TABLE collections (
  id              object_id PRIMARY KEY DEFAULT new_object_id(),
  project_id      object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name            text NOT NULL CHECK (name ~ '^[A-Za-z0-9_-]{1,64}$'),
  fields          jsonb NOT NULL DEFAULT '[]',
  schema_version  integer NOT NULL DEFAULT 1,
  rls             jsonb NOT NULL DEFAULT '{"enabled": false, "mode": "public-read", "ownerField": "userId", "requireAuthForWrite": true}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX collections_project_name_idx ON collections (project_id, lower(name));

CREATE TABLE documents (
  project_id     object_id NOT NULL,
  collection_id  object_id NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  id             object_id NOT NULL,
  owner_id       text,
  data           jsonb NOT NULL,
  size_bytes     integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz,
  PRIMARY KEY (project_id, collection_id, id)
);
CREATE INDEX documents_recent_idx ON documents (project_id, collection_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;

-- Quota counters: storage bytes and database bytes per project (period ''), mail per project per
-- UTC month, AI sessions per operator per UTC month. Reserved with a guarded upsert in the same
-- transaction as the work they pay for.
CREATE TABLE usage_counters (
  subject_id  object_id NOT NULL,
  metric      text NOT NULL,
  period      text NOT NULL DEFAULT '',
  used        bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
  PRIMARY KEY (subject_id, metric, period)
);

GRANT USAGE ON SCHEMA public TO plinth_api;
GRANT SELECT ON projects, collections TO plinth_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON documents, usage_counters TO plinth_api;
