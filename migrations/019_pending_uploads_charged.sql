-- Up Migration
-- Uploads are now charged to the storage quota when they are requested, not when they are
-- confirmed (a pending upload's bytes are on disk already: sql/55_storage_functions.sql). The
-- pending uploads of platform storage that exist at this point were not charged; charge them
-- now, so that their confirm (which no longer charges) or their removal (which now refunds)
-- keeps the counters exact.
INSERT INTO usage_counters (subject_id, metric, period, used)
SELECT project_id, 'storage_bytes', '', sum(size)
FROM files WHERE status = 'pending' AND provider = 'internal'
GROUP BY project_id
ON CONFLICT (subject_id, metric, period) DO UPDATE SET used = usage_counters.used + excluded.used;

-- Down Migration
UPDATE usage_counters c SET used = greatest(c.used - p.bytes, 0)
FROM (SELECT project_id, sum(size) AS bytes FROM files WHERE status = 'pending' AND provider = 'internal' GROUP BY project_id) p
WHERE c.subject_id = p.project_id AND c.metric = 'storage_bytes' AND c.period = '';
