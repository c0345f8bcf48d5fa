-- Up Migration
-- The request log's page cursor is the last row's time in milliseconds (a JavaScript time) and
-- its id; the next page is the rows before (at, id). Rows were stored with the microseconds of
-- their arrival (the request's start, now minus its duration), so a row arriving within the same
-- millisecond as the cursor's row but before it compared after the cursor and was on neither page.
-- Every time is now whole milliseconds (src/modules/logs/queries.ts), those already stored are
-- truncated, and the table refuses anything else, so the cursor is exact.
UPDATE request_logs SET at = date_trunc('milliseconds', at) WHERE at <> date_trunc('milliseconds', at);
ALTER TABLE request_logs ADD CONSTRAINT request_logs_at_whole_ms CHECK (at = date_trunc('milliseconds', at));

-- Down Migration
ALTER TABLE request_logs DROP CONSTRAINT request_logs_at_whole_ms;
