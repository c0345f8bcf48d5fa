-- Tenant transactions enqueue jobs (graphile_worker.add_job) atomically with their rows, so
-- the API role may call the queue's functions.
GRANT USAGE ON SCHEMA graphile_worker TO plinth_api;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA graphile_worker TO plinth_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA graphile_worker TO plinth_api;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA graphile_worker TO plinth_api;
