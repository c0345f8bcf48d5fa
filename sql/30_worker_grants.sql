-- Tenant transactions enqueue jobs atomically with their rows. graphile-worker keeps its
-- tables under row-level security, and the API role should not read or edit the queue
-- anyway: it may only call this wrapper, which runs as the owner.
REVOKE ALL ON SCHEMA graphile_worker FROM plinth_api;
REVOKE ALL ON ALL TABLES IN SCHEMA graphile_worker FROM plinth_api;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA graphile_worker FROM plinth_api;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA graphile_worker FROM plinth_api;

CREATE OR REPLACE FUNCTION plinth_add_job(
  task text, payload json, queue_name text, run_at timestamptz, max_attempts integer, job_key text
) RETURNS text LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT (graphile_worker.add_job(
    task, payload, queue_name => queue_name, run_at => run_at,
    max_attempts => coalesce(max_attempts, 25), job_key => job_key
  )).id::text
$$;
REVOKE ALL ON FUNCTION plinth_add_job(text, json, text, timestamptz, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plinth_add_job(text, json, text, timestamptz, integer, text) TO plinth_api;
