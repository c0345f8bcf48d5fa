-- Up Migration
-- The SHA-256 of each migration file as it was when the database applied it (or, for migrations
-- applied before this table existed, at the first start of a version that has it): `plinth
-- migrate --status` and the dashboard's Database screen (docs/dashboard.md, "Database") compare
-- them with the files of the running version to report drift: a file changed after it was
-- applied, an applied migration whose file is gone, one whose checksum was never recorded.
-- Written by src/db/migrate.ts after every run (never by the API roles: no grants).
CREATE TABLE plinth_migration_checksums (
  name text PRIMARY KEY,
  checksum text NOT NULL CHECK (checksum ~ '^[0-9a-f]{64}$'),
  recorded_at timestamptz NOT NULL DEFAULT now()
);
