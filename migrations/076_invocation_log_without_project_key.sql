-- The invocation log is written in batches of up to 200 rows from every node (src/modules/
-- functions/invocation-log.ts). The foreign key to projects checked each row (about 4 µs of the
-- server's time per invocation), and one buffered row of a project deleted in the meantime failed
-- the whole batch, other projects' rows with it. Project deletion removes the project's rows
-- itself (src/modules/projects/queries.ts); a row that arrives later ages out with the retention.
ALTER TABLE function_invocations DROP CONSTRAINT IF EXISTS function_invocations_project_id_fkey;
