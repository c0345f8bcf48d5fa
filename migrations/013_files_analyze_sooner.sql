-- Up Migration
-- The upload statements (plinth_confirm_uploads, sql/55_storage_functions.sql) are planned once
-- per connection from the statistics of that moment. Until `files` has been analysed, or while
-- its statistics are far behind its size, the planner guesses that a project holds a handful of
-- files and reads the project through files_recent_idx to find the ones being confirmed: every
-- confirm then reads every file of the project (25 million index entries read in a 60 s
-- benchmark; 2 400–3 700 pairs/s falling to 700). After the first analysis it looks them up by
-- path and key (6 300–7 300 pairs/s, flat). Analysing after 2 % of changes plus 500 rows
-- (defaults: 10 % plus 50) keeps the estimates close as the table grows; each analysis also
-- invalidates the cached plans.
ALTER TABLE files SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 500);

-- Down Migration
ALTER TABLE files RESET (autovacuum_analyze_scale_factor, autovacuum_analyze_threshold);
