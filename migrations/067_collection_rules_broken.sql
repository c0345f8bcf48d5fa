-- Up Migration
-- Access rules marked broken (docs/rules.md, "When a looked-up collection goes"): per action,
-- why the rule can no longer be applied ({"list": "Looks up collection 'members', which no
-- longer exists…"}). A broken action's compiled SQL (rules_sql) is `false`, so its policy denies
-- everything (fail closed) while `rules` keeps the text as written; saving the collection's rules
-- again clears the mark. NULL: nothing broken. Set by a forced deletion of a looked-up
-- collection (src/modules/rules/service.ts) and by the start-up policy sync for rules left
-- naming a dropped partition (plinth_break_stale_rules, sql/20_documents_policies.sql).
ALTER TABLE collections ADD COLUMN rules_broken jsonb;
