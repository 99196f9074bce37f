-- A course asking ahead for notebook kernels (executor/kernels/README.md,
-- "A class that starts at once"): "30 kernels warm for tenant T from 08:55
-- to 09:20". The operator records it (`gavel tenant kernels-warm`, audited
-- as kernel.warm_requested and kernel.warm_cancelled); during the window
-- each kernel node keeps that many kernels of the tenant's shape started
-- ahead, never more than the tenant's max_kernels. A kernel started ahead
-- is made for that one tenant and serves one kernel, as every one does.
CREATE TABLE kernel_warm_requests (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	kernels    integer NOT NULL CHECK (kernels BETWEEN 1 AND 256),
	starts_at  timestamptz NOT NULL,
	ends_at    timestamptz NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	CHECK (ends_at > starts_at AND ends_at - starts_at <= interval '12 hours')
);
CREATE INDEX kernel_warm_requests_window_idx ON kernel_warm_requests (ends_at, starts_at);

ALTER TABLE kernel_warm_requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON kernel_warm_requests
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

-- What the kernel nodes keep warm now: per tenant whose requests' windows
-- hold this moment (and which is not disabled), the sum of their kernels,
-- capped by its max_kernels, with the budgets its kernels get (the shape
-- a kernel started ahead must match). The executor's role reads every
-- tenant's row through this function and nothing else of the table; the
-- 64 largest only, a bound on what a node holds.
CREATE FUNCTION gavel_kernel_warm_asks()
RETURNS TABLE (tenant_id uuid, kernels integer, memory_mb integer, cpu_pct integer, lifetime_s integer,
	       idle_s integer)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
	SELECT r.tenant_id, least(sum(r.kernels), q.max_kernels)::integer, q.kernel_memory_mb, q.kernel_cpu_pct,
	       q.kernel_lifetime_s, q.kernel_idle_s
	  FROM kernel_warm_requests r
	  JOIN tenant_quotas q ON q.tenant_id = r.tenant_id
	  JOIN tenants t ON t.id = r.tenant_id
	 WHERE r.starts_at <= now() AND now() < r.ends_at AND NOT t.disabled AND q.max_kernels > 0
	 GROUP BY r.tenant_id, q.max_kernels, q.kernel_memory_mb, q.kernel_cpu_pct, q.kernel_lifetime_s,
		  q.kernel_idle_s
	 ORDER BY 2 DESC, 1
	 LIMIT 64
$$;
REVOKE ALL ON FUNCTION gavel_kernel_warm_asks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_kernel_warm_asks() TO gavel_executor;
-- As in 0002: names resolve in this schema only, never the caller's path.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_kernel_warm_asks() SET search_path = %I, pg_temp', current_schema());
END
$$;
