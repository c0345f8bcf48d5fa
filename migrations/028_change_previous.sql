-- Up Migration
-- What an update changed, for realtime's `leave` event (docs/realtime.md, "Who receives what"):
-- a subscriber whose filter matched the document before the update and no longer does is told
-- so. The trigger (sql/70_change_stream.sql) records only the difference, not the old row
-- image: the previous values of the top-level fields the update changed, the fields it added
-- (absent before), and the previous updatedAt. The old document is the new one with those put
-- back. Other actions leave them NULL; so does an update of a document over the 64 KB cap
-- (its previous version is unknown: subscribers who do not match the new one get `leave`).
-- Nullable columns without a default: adding them rewrites nothing.
ALTER TABLE changes
  ADD COLUMN prev_fields jsonb,
  ADD COLUMN prev_absent text[],
  ADD COLUMN prev_updated_at timestamptz;

-- Down Migration
ALTER TABLE changes DROP COLUMN prev_fields, DROP COLUMN prev_absent, DROP COLUMN prev_updated_at;
