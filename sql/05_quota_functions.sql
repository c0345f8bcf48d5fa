-- Quota reservations made ahead of the work they pay for, as their own autocommit statement.
-- The counter row is the one hot row of a project (every create touches it); committing it
-- asynchronously releases its lock without waiting for the WAL flush, so writers of one
-- project are not serialised behind each other's disk syncs.
-- Safe because WAL is sequential: when the write that follows commits durably, this earlier
-- reservation is durable too. A crash between the two can only leave a reservation without
-- its write (usage over-counted, conservative), never the reverse.

CREATE OR REPLACE FUNCTION plinth_reserve_ahead(p_subject text, p_metric text, p_period text, p_amount bigint, p_cap bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  result bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO usage_counters AS c (subject_id, metric, period, used)
  VALUES (p_subject, p_metric, p_period, p_amount)
  ON CONFLICT (subject_id, metric, period)
  DO UPDATE SET used = c.used + excluded.used
  WHERE c.used + excluded.used <= p_cap
  RETURNING c.used INTO result;
  RETURN result; -- NULL when the guard refused (callers reject amounts above the cap first)
END $$;

CREATE OR REPLACE FUNCTION plinth_refund_ahead(p_subject text, p_metric text, p_period text, p_amount bigint)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE usage_counters SET used = greatest(used - p_amount, 0)
  WHERE subject_id = p_subject AND metric = p_metric AND period = p_period;
END $$;
