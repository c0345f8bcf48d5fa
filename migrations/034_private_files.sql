-- Up Migration
-- Private files (docs/storage.md "Private files"): per file `private` true/false, or null to
-- follow the project's default (projects.settings.files.private). A private file is served
-- only on a signed download URL, to the secret key, or to its owner's Bearer token. No index
-- mentions the column, so confirms stay HOT (008_files_hot_confirm.sql).
ALTER TABLE files ADD COLUMN private boolean;

-- Down Migration
ALTER TABLE files DROP COLUMN private;
