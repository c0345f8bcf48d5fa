-- Up Migration
-- Field protection for end users (docs/rules.md, "The users collection"): the values of the
-- fields the project's `users` collection declares hidden leave app_users.data for two columns,
-- `private` ("owner": returned to the user themself and the secret key) and `secret` (the
-- secret key only), as documents' do (migrations/040). The publishable role gets no privilege
-- on them (sql/40_auth_policies.sql, re-applied on every start), so raw SQL in a publishable
-- scope, populate, rule lookups and public profiles cannot read them. The trigger
-- app_users_protect_fields (sql/21_field_protection.sql) splits every later write; a change of
-- the users schema splits the project's users again (src/modules/collections/protection-queries.ts).
ALTER TABLE app_users ADD COLUMN private jsonb, ADD COLUMN secret jsonb;

-- Existing users: their hidden values, by each project's users schema, move now (the trigger
-- as it stands before sql/ is re-applied does not move them).
WITH hidden AS (
  SELECT c.project_id,
         coalesce(array_agg(x ->> 'key') FILTER (WHERE x ->> 'hidden' = 'owner'), '{}') AS owner_keys,
         coalesce(array_agg(x ->> 'key') FILTER (WHERE x ->> 'hidden' = 'secret'), '{}') AS secret_keys
    FROM collections c, jsonb_array_elements(c.fields) x
   WHERE lower(c.name) = 'users' AND x ? 'hidden'
   GROUP BY c.project_id
)
UPDATE app_users u
   SET private = (SELECT jsonb_object_agg(k, u.data -> k) FROM unnest(h.owner_keys) k WHERE u.data ? k),
       secret = (SELECT jsonb_object_agg(k, u.data -> k) FROM unnest(h.secret_keys) k WHERE u.data ? k),
       data = u.data - h.owner_keys - h.secret_keys
  FROM hidden h
 WHERE u.project_id = h.project_id AND u.data ?| (h.owner_keys || h.secret_keys);

-- Down Migration
-- The trigger of this version would split the values again (the older sql/ recreates its own).
DROP TRIGGER IF EXISTS app_users_protect_fields ON app_users;
UPDATE app_users SET data = data || coalesce(private, '{}') || coalesce(secret, '{}') WHERE private IS NOT NULL OR secret IS NOT NULL;
ALTER TABLE app_users DROP COLUMN private, DROP COLUMN secret;
