-- Up Migration
-- Unlinking and linking GitHub from the Account screen (docs/operators-and-projects.md "GitHub
-- sign-in").
--
-- operators.github_link_by_email: whether a GitHub sign-in whose verified email is this
-- account's may link the two by itself. An operator who unlinked GitHub turned that off: otherwise
-- the next GitHub sign-in with the same address would link it again. Linking from the Account
-- screen (signed in) turns it back on.
ALTER TABLE operators ADD COLUMN github_link_by_email boolean NOT NULL DEFAULT true;

-- A GitHub flow started from the Account screen links the GitHub account to this operator
-- instead of signing in; the state carries who asked.
ALTER TABLE operator_oauth_states ADD COLUMN link_operator_id object_id REFERENCES operators (id) ON DELETE CASCADE;

-- Down Migration
ALTER TABLE operator_oauth_states DROP COLUMN link_operator_id;
ALTER TABLE operators DROP COLUMN github_link_by_email;
