-- Up Migration
-- Operators' own sign-in (issue 49 item 5, docs/operators-and-projects.md "Your sessions"). Number
-- 073: may need renumbering when merged after other branches' migrations.
--
-- operator_sessions: the address and User-Agent of the sign-in or refresh that issued each row,
-- so an operator's live sessions can be told apart in the console.
ALTER TABLE operator_sessions ADD COLUMN ip text, ADD COLUMN user_agent text;

-- Down Migration
ALTER TABLE operator_sessions DROP COLUMN ip, DROP COLUMN user_agent;
