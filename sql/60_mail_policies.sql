-- Mail: tenant isolation of logs, templates and the dev outbox. Platform rows (project_id
-- NULL: operator mails, global system templates) are never writable through the API role;
-- global templates are readable by every project. Webhook events are platform-only (no
-- grant to the API role, no policy: invisible).

ALTER TABLE mail_logs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS mail_logs_tenant ON mail_logs;
CREATE POLICY mail_logs_tenant ON mail_logs TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

ALTER TABLE mail_outbox ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS mail_outbox_tenant ON mail_outbox;
CREATE POLICY mail_outbox_tenant ON mail_outbox TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

ALTER TABLE mail_events ENABLE ROW LEVEL SECURITY;

ALTER TABLE mail_templates ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS mail_templates_read ON mail_templates;
CREATE POLICY mail_templates_read ON mail_templates FOR SELECT TO plinth_api
  USING (project_id IS NULL OR project_id = plinth_project_id());
DROP POLICY IF EXISTS mail_templates_write ON mail_templates;
CREATE POLICY mail_templates_write ON mail_templates FOR ALL TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());


-- Enqueueing many mail jobs at once (a group commit of /api/mail/send): one call of
-- graphile_worker.add_jobs, so one NOTIFY per transaction instead of one per message. Like
-- plinth_add_job (30_worker_grants.sql) it runs as the owner; it only enqueues `mail.send`
-- jobs whose payload names the caller's project (platform mail: no project on either side).
CREATE OR REPLACE FUNCTION plinth_add_mail_jobs(payloads json, max_attempts integer)
RETURNS TABLE (log_id text, id text) LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT j.payload->>'logId', j.id::text
  FROM graphile_worker.add_jobs(ARRAY(
    SELECT ROW('mail.send', p, NULL, NULL, max_attempts, NULL, NULL, NULL)::graphile_worker.job_spec
    FROM json_array_elements(payloads) AS p
    WHERE (p->>'projectId') IS NOT DISTINCT FROM plinth_project_id()
  )) AS j
$$;
REVOKE ALL ON FUNCTION plinth_add_mail_jobs(json, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plinth_add_mail_jobs(json, integer) TO plinth_api;
