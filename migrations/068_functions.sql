-- Up Migration
-- Server-side functions (docs/functions.md): a project's own code, run in the sandbox
-- (src/modules/functions/sandbox). A function has a kind (what calls it) and a trigger (when),
-- and immutable versions; the active one is what runs, and a rollback points back to an older
-- one. Secrets are the project's, given to every function as `plinth.env`, encrypted with
-- ENCRYPTION_KEY and never read back by any API. Invocations keep their outcome and logs.
CREATE TABLE functions (
  id             object_id PRIMARY KEY,
  project_id     object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name           text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  kind           text NOT NULL CHECK (kind IN ('http', 'before', 'after', 'auth', 'schedule')),
  -- before/after: {"collection", "events"}; after on auth: {"auth": [...]}; auth:
  -- {"event"}; schedule: {"cron", "timezone"}; http: {}
  trigger        jsonb NOT NULL DEFAULT '{}',
  enabled        boolean NOT NULL DEFAULT true,
  active_version integer NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
CREATE INDEX functions_by_kind ON functions (project_id, kind) WHERE enabled;

CREATE TABLE function_versions (
  function_id  object_id NOT NULL REFERENCES functions (id) ON DELETE CASCADE,
  version      integer NOT NULL CHECK (version > 0),
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  language     text NOT NULL CHECK (language IN ('js', 'ts')),
  -- what was deployed, and what runs (esbuild's bundle of it)
  source       text NOT NULL,
  compiled     text NOT NULL,
  -- sha256 of `compiled`: the sandbox's unit name, so every node runs the same bytes
  hash         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (function_id, version)
);

CREATE TABLE function_secrets (
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name         text NOT NULL CHECK (name ~ '^[A-Z_][A-Z0-9_]{0,63}$'),
  value        jsonb NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, name)
);

CREATE TABLE function_invocations (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  function_id  object_id NOT NULL,
  version      integer NOT NULL,
  -- what called it: 'http', 'before.create', 'after.update', 'auth.before-sign-up', 'schedule', 'run'
  trigger      text NOT NULL,
  ok           boolean NOT NULL,
  -- the error code the caller saw (function_cpu_limit, …, or the function's own code)
  error_code   text,
  error        text,
  duration_ms  real NOT NULL,
  cpu_ms       real NOT NULL,
  logs         jsonb NOT NULL DEFAULT '[]',
  logs_dropped integer NOT NULL DEFAULT 0,
  at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX function_invocations_by_function ON function_invocations (project_id, function_id, id DESC);
CREATE INDEX function_invocations_at ON function_invocations (at);
