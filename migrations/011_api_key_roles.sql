-- Up Migration
-- Two login-less roles under plinth_api, one per kind of access, so the documents policies
-- need no per-row test of the key kind (sql/20_documents_policies.sql):
--   plinth_api_full         secret key, operator and system scopes: every row of the project;
--   plinth_api_publishable  publishable key: the end-user rules of RLS-enabled collections.
-- Both inherit plinth_api's grants and every policy written TO plinth_api (tenant isolation).
-- The pool switches a connection between them with the scope (src/db/pool.ts).
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'plinth_api_full') THEN
    CREATE ROLE plinth_api_full NOLOGIN NOBYPASSRLS INHERIT;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'plinth_api_publishable') THEN
    CREATE ROLE plinth_api_publishable NOLOGIN NOBYPASSRLS INHERIT;
  END IF;
END $$;
GRANT plinth_api TO plinth_api_full, plinth_api_publishable;
GRANT plinth_api_full, plinth_api_publishable TO CURRENT_USER;
