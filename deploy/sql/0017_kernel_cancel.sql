-- DELETE /api/kernels/{id} of a kernel still queued (frontend/kernels.c,
-- executor/kernels/README.md): the frontend finishes the row at once, with
-- result reason `client`. The frontend's role may not UPDATE submissions
-- (0012), and should not be able to finish a submission: this function
-- finishes exactly one queued kernel row of the caller's own tenant (the
-- transaction's gavel.tenant_id, set as for row-level security), nothing
-- else. true when it did; false when there was no such row (gone, another
-- tenant's, or claimed by an executor meanwhile: then it is stopped as a
-- running one).
CREATE FUNCTION gavel_kernel_cancel_queued(p_tenant uuid, p_id text) RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER
AS $$
	WITH u AS (
		UPDATE submissions
		   SET status = 'done', finished_at = now(),
		       result = jsonb_build_object('kernel', jsonb_build_object('reason', 'client', 'kernel_ms', 0,
			       'peak_memory_kb', 0, 'restarts', 0, 'message', 'deleted while queued'))
		 WHERE tenant_id = p_tenant AND id = p_id AND kind = 'kernel' AND status = 'queued'
		   AND p_tenant = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid
		RETURNING 1)
	SELECT EXISTS (SELECT 1 FROM u)
$$;
REVOKE ALL ON FUNCTION gavel_kernel_cancel_queued(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_kernel_cancel_queued(uuid, text) TO gavel_frontend;
-- As in 0002: names resolve in this schema only, never the caller's path.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_kernel_cancel_queued(uuid, text) SET search_path = %I, pg_temp',
		       current_schema());
END
$$;
