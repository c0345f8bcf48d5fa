-- Up Migration
-- A per-document version for optimistic concurrency: an update reads the row, merges in the
-- application, and writes only if nobody wrote in between (version unchanged), else retries.
-- Cheaper than holding a row lock across round trips. Adding a column with a constant
-- default is instant, whatever the table size.
ALTER TABLE documents ADD COLUMN version integer NOT NULL DEFAULT 0;
