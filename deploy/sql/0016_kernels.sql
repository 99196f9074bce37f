-- Hosted notebook kernels (issue 18; executor/kernels/README.md): a kernel
-- is a job like a submission, so that it goes through the same tenant
-- queue, fair share and executor slots; `kind` tells them apart.
ALTER TABLE submissions
	ADD COLUMN kind text NOT NULL DEFAULT 'submission' CHECK (kind IN ('submission', 'kernel'));
GRANT INSERT (kind) ON submissions TO gavel_frontend;
-- GET /api/kernels lists the tenant's live kernels.
CREATE INDEX submissions_live_kernels_idx ON submissions (tenant_id, created_at)
	WHERE kind = 'kernel' AND status IN ('queued', 'running');

-- Per-tenant kernel budgets, copied into each kernel's request when it is
-- created (the executor never takes limits from a client):
--   max_kernels        kernels queued or running at once (POST over it: 403)
--   kernels_per_minute creations per minute (a token bucket in Redis)
--   kernel_idle_s      culled after this long with no activity and no connection
--   kernel_lifetime_s  ended after this long whatever it does (at most 12 h)
--   kernel_memory_mb   memory of the kernel's sandbox (cgroup)
--   kernel_cpu_pct     CPU quota of the kernel's sandbox, % of one CPU
ALTER TABLE tenant_quotas
	ADD COLUMN max_kernels integer NOT NULL DEFAULT 4 CHECK (max_kernels BETWEEN 0 AND 10000),
	ADD COLUMN kernels_per_minute integer NOT NULL DEFAULT 30 CHECK (kernels_per_minute BETWEEN 1 AND 100000),
	ADD COLUMN kernel_idle_s integer NOT NULL DEFAULT 1200 CHECK (kernel_idle_s BETWEEN 10 AND 43200),
	ADD COLUMN kernel_lifetime_s integer NOT NULL DEFAULT 3600 CHECK (kernel_lifetime_s BETWEEN 10 AND 43200),
	ADD COLUMN kernel_memory_mb integer NOT NULL DEFAULT 1024 CHECK (kernel_memory_mb BETWEEN 64 AND 65536),
	ADD COLUMN kernel_cpu_pct integer NOT NULL DEFAULT 100 CHECK (kernel_cpu_pct BETWEEN 10 AND 6400);
GRANT SELECT (tenant_id, max_kernels, kernels_per_minute, kernel_idle_s, kernel_lifetime_s, kernel_memory_mb,
	      kernel_cpu_pct) ON tenant_quotas TO gavel_frontend;

-- Kernel time and peak memory for billing (executor/kernels/).
ALTER TABLE usage_daily
	ADD COLUMN kernel_ms bigint NOT NULL DEFAULT 0 CHECK (kernel_ms >= 0),
	ADD COLUMN kernel_peak_memory_kb bigint NOT NULL DEFAULT 0 CHECK (kernel_peak_memory_kb >= 0);
GRANT INSERT (kernel_ms, kernel_peak_memory_kb), UPDATE (kernel_ms, kernel_peak_memory_kb) ON usage_daily
	TO gavel_executor;

-- The key and playground lookups return the tenant's whole quota
-- (TENANT_QUOTA_COLUMNS, tenants/quota.h), the kernel budgets included; a
-- function's result type cannot be changed in place.
DROP FUNCTION gavel_key_lookup(bytea);
CREATE FUNCTION gavel_key_lookup(bytea)
RETURNS TABLE (
	tenant_id uuid, tenant_disabled boolean, key_id uuid,
	expires_at_s bigint, revoked_at_s bigint,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer, allow_query_key boolean, cors_origins text, playground boolean,
	token_capability boolean, playground_rps integer, playground_burst integer,
	playground_max_queued integer, max_kernels integer, kernels_per_minute integer,
	kernel_idle_s integer, kernel_lifetime_s integer, kernel_memory_mb integer, kernel_cpu_pct integer)
LANGUAGE sql STABLE SECURITY DEFINER
AS $$
	SELECT k.tenant_id, t.disabled, k.id,
	       floor(extract(epoch FROM k.expires_at))::bigint,
	       floor(extract(epoch FROM k.revoked_at))::bigint,
	       q.requests_per_second, q.burst, q.max_queued, q.max_running,
	       q.max_cpu_ms, q.max_wall_ms, q.max_memory_mb, q.max_output_kb,
	       array_to_string(q.allowed_languages, ','), q.max_gpus, q.egress_policy::text,
	       q.retention_days, q.weight, q.allow_query_key, array_to_string(q.cors_origins, ','),
	       q.playground, q.token_capability, q.playground_rps, q.playground_burst,
	       q.playground_max_queued, q.max_kernels, q.kernels_per_minute, q.kernel_idle_s,
	       q.kernel_lifetime_s, q.kernel_memory_mb, q.kernel_cpu_pct
	  FROM api_keys k
	  JOIN tenants t ON t.id = k.tenant_id
	  LEFT JOIN tenant_quotas q ON q.tenant_id = k.tenant_id
	 WHERE k.key_hash = $1
$$;
REVOKE ALL ON FUNCTION gavel_key_lookup(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_key_lookup(bytea) TO gavel_frontend;
DROP FUNCTION gavel_playground_lookup(text);
CREATE FUNCTION gavel_playground_lookup(name_or_id text)
RETURNS TABLE (
	tenant_id uuid,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer, allow_query_key boolean, cors_origins text, playground boolean,
	token_capability boolean, playground_rps integer, playground_burst integer,
	playground_max_queued integer, max_kernels integer, kernels_per_minute integer,
	kernel_idle_s integer, kernel_lifetime_s integer, kernel_memory_mb integer, kernel_cpu_pct integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
	tid uuid;
BEGIN
	IF name_or_id IS NULL OR length(name_or_id) > 200 THEN
		RETURN;
	END IF;
	IF name_or_id ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$' THEN
		SELECT t.id INTO tid FROM tenants t WHERE t.id = name_or_id::uuid;
	ELSE
		SELECT t.id INTO tid FROM tenants t WHERE t.name = name_or_id;
	END IF;
	IF tid IS NULL THEN
		RETURN;
	END IF;
	RETURN QUERY
	SELECT t.id,
	       q.requests_per_second, q.burst, q.max_queued, q.max_running,
	       q.max_cpu_ms, q.max_wall_ms, q.max_memory_mb, q.max_output_kb,
	       array_to_string(q.allowed_languages, ','), q.max_gpus, q.egress_policy::text,
	       q.retention_days, q.weight, q.allow_query_key, array_to_string(q.cors_origins, ','),
	       q.playground, q.token_capability, q.playground_rps, q.playground_burst,
	       q.playground_max_queued, q.max_kernels, q.kernels_per_minute, q.kernel_idle_s,
	       q.kernel_lifetime_s, q.kernel_memory_mb, q.kernel_cpu_pct
	  FROM tenants t
	  JOIN tenant_quotas q ON q.tenant_id = t.id
	 WHERE t.id = tid AND NOT t.disabled AND (q.playground OR q.token_capability);
END
$$;
REVOKE ALL ON FUNCTION gavel_playground_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_playground_lookup(text) TO gavel_frontend;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_key_lookup(bytea) SET search_path = %I, pg_temp', current_schema());
	EXECUTE format('ALTER FUNCTION gavel_playground_lookup(text) SET search_path = %I, pg_temp', current_schema());
END
$$;
