-- Up Migration
-- Developer-declared compound indexes per collection: [{ "fields": ["category", "price"] }, ...].
-- Each becomes one B-tree on the collection's partition over the fields' accessor expressions
-- (src/modules/collections/indexes.ts). A condition on several fields (equality on one, a range
-- or sort on the next) and its exact count are then answered from one index, without evaluating
-- the fields row by row.
ALTER TABLE collections ADD COLUMN indexes jsonb NOT NULL DEFAULT '[]';
