-- Up Migration
-- Teams (docs/teams.md): a project is shared by operators, each with one role. The owner is a
-- member too (exactly one per project); projects.owner_id stays in step with it (the owner's
-- plan is the project's, and the projects list of a plan counts owned projects). Written by
-- the owner connection (src/modules/members); the API role reads its project's rows only
-- (sql/88_member_policies.sql).
CREATE TABLE project_members (
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  operator_id  object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  added_by     object_id REFERENCES operators (id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, operator_id)
);
-- One owner per project.
CREATE UNIQUE INDEX project_members_one_owner ON project_members (project_id) WHERE role = 'owner';
-- "The projects I am a member of".
CREATE INDEX project_members_operator ON project_members (operator_id);

-- Every existing project: its current owner becomes its owner member, unchanged otherwise.
INSERT INTO project_members (project_id, operator_id, role, added_by, created_at, updated_at)
  SELECT id, owner_id, 'owner', NULL, created_at, created_at FROM projects
  ON CONFLICT DO NOTHING;

-- Invitations by email: single use, valid 7 days, the token stored as its SHA-256 only.
CREATE TABLE project_invitations (
  id           object_id PRIMARY KEY DEFAULT new_object_id(),
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email        text NOT NULL CHECK (email = lower(email)),
  role         text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
  token_hash   text NOT NULL UNIQUE,
  invited_by   object_id REFERENCES operators (id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  accepted_at  timestamptz,
  accepted_by  object_id REFERENCES operators (id) ON DELETE SET NULL,
  revoked_at   timestamptz
);
-- At most one open invitation per address and project (a new one replaces it).
CREATE UNIQUE INDEX project_invitations_open ON project_invitations (project_id, email)
  WHERE accepted_at IS NULL AND revoked_at IS NULL;
-- The per-operator hourly limit counts an inviter's recent invitations.
CREATE INDEX project_invitations_inviter ON project_invitations (invited_by, created_at);

-- A pending ownership transfer: offered by the owner to an admin, done when the admin accepts.
CREATE TABLE project_transfers (
  project_id   object_id PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  from_id      object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  to_id        object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);

-- Down Migration
DROP TABLE project_transfers;
DROP TABLE project_invitations;
DROP TABLE project_members;
