-- What the queue, scheduler and executor need of a submission row: the
-- normalized request (common/jobspec.h) that the executor runs, where and
-- when it ran, and how many times it was handed out. IF NOT EXISTS keeps
-- this safe next to 0003 (frontend), which may add `request` too.

ALTER TABLE submissions ADD COLUMN IF NOT EXISTS request jsonb;
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS started_at timestamptz;
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS node text CHECK (node IS NULL OR length(node) <= 64);
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0;

-- The reconciler (gavel-scheduler) runs as gavel_service, which row-level
-- security confines to one tenant per transaction; after a Redis flush it
-- must find unfinished submissions of every tenant. This definer function
-- (owned by gavel_owner, which RLS does not bind) exposes exactly that and
-- nothing more: ids, tenant ids and statuses of submissions still queued or
-- running and older than min_age_ms (so that a submission whose frontend is
-- between its INSERT and its enqueue is not picked up), oldest first.
CREATE FUNCTION gavel_unfinished_submissions(min_age_ms integer, max_rows integer)
RETURNS TABLE (id text, tenant_id uuid, status text)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
	SELECT s.id, s.tenant_id, s.status
	  FROM submissions s
	 WHERE s.status IN ('queued', 'running')
	   AND s.created_at < now() - make_interval(secs => min_age_ms / 1000.0)
	 ORDER BY s.created_at
	 LIMIT least(greatest(max_rows, 0), 100000)
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_unfinished_submissions(integer, integer) SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_unfinished_submissions(integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_unfinished_submissions(integer, integer) TO gavel_service;
CREATE INDEX IF NOT EXISTS submissions_unfinished_idx ON submissions (created_at)
	WHERE status IN ('queued', 'running');
