-- Up Migration
-- Access rules per collection (docs/rules.md): `rules` holds what the developer wrote,
-- {list, view, create, update, delete}, each an expression or null (today's behaviour for that
-- action); `rules_sql` holds what the server compiled them to (src/modules/rules/compile.ts), the
-- policy expressions sql/20_documents_policies.sql puts on the collection's partition. NULL in
-- both: the collection has no rules, and keeps its RLS mode's policies exactly.
ALTER TABLE collections ADD COLUMN rules jsonb;
ALTER TABLE collections ADD COLUMN rules_sql jsonb;
