-- Clients that cannot be given a key header, working unchanged (issue 31):
-- Judge0's own pages and npm clients put the key in the URL
-- (?X-Auth-Token=) and poll a submission by its token alone.
--
-- browser_clients (off by default; a reviewed choice, audited as every
-- quota change is): the tenant's keys are taken in the query string
-- (?X-Auth-Token=, ?api_key=) on every route, reads and writes; and GET of
-- one of its submissions at the root paths (Judge0 GET /submissions/{token},
-- native GET /v1/submissions/{id} and its events) works without a key, the
-- submission's id being the capability (128 random bits, fe_new_id).
--
-- playground_read_rps: one client address's anonymous reads of a
-- submission per second (a playground's or a token read), counted apart
-- from its submissions (playground_rps): Judge0 IDE polls every 100 ms.
ALTER TABLE tenant_quotas
	ADD COLUMN browser_clients boolean NOT NULL DEFAULT false,
	ADD COLUMN playground_read_rps integer NOT NULL DEFAULT 20 CHECK (playground_read_rps BETWEEN 1 AND 1000000);

-- The key and playground lookups return the whole quota
-- (TENANT_QUOTA_COLUMNS, tenants/quota.h); a function's result type cannot
-- be changed in place.
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
	kernel_idle_s integer, kernel_lifetime_s integer, kernel_memory_mb integer, kernel_cpu_pct integer,
	browser_clients boolean, playground_read_rps integer)
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
	       q.kernel_lifetime_s, q.kernel_memory_mb, q.kernel_cpu_pct,
	       q.browser_clients, q.playground_read_rps
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
	kernel_idle_s integer, kernel_lifetime_s integer, kernel_memory_mb integer, kernel_cpu_pct integer,
	browser_clients boolean, playground_read_rps integer)
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
	       q.kernel_lifetime_s, q.kernel_memory_mb, q.kernel_cpu_pct,
	       q.browser_clients, q.playground_read_rps
	  FROM tenants t
	  JOIN tenant_quotas q ON q.tenant_id = t.id
	 WHERE t.id = tid AND NOT t.disabled AND (q.playground OR q.token_capability);
END
$$;
REVOKE ALL ON FUNCTION gavel_playground_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_playground_lookup(text) TO gavel_frontend;

-- The tenant of a submission read by its id alone, at the root paths: a
-- row only when the submission exists, is a submission (kernels have their
-- own authentication), and its tenant is enabled with browser_clients on.
-- Anything else (no such id, another kind, the setting off, a disabled
-- tenant) gives no row alike, so an id's existence is not told either.
-- Columns as gavel_playground_lookup's.
CREATE FUNCTION gavel_token_lookup(token text)
RETURNS TABLE (
	tenant_id uuid,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer, allow_query_key boolean, cors_origins text, playground boolean,
	token_capability boolean, playground_rps integer, playground_burst integer,
	playground_max_queued integer, max_kernels integer, kernels_per_minute integer,
	kernel_idle_s integer, kernel_lifetime_s integer, kernel_memory_mb integer, kernel_cpu_pct integer,
	browser_clients boolean, playground_read_rps integer)
LANGUAGE sql STABLE SECURITY DEFINER
AS $$
	SELECT t.id,
	       q.requests_per_second, q.burst, q.max_queued, q.max_running,
	       q.max_cpu_ms, q.max_wall_ms, q.max_memory_mb, q.max_output_kb,
	       array_to_string(q.allowed_languages, ','), q.max_gpus, q.egress_policy::text,
	       q.retention_days, q.weight, q.allow_query_key, array_to_string(q.cors_origins, ','),
	       q.playground, q.token_capability, q.playground_rps, q.playground_burst,
	       q.playground_max_queued, q.max_kernels, q.kernels_per_minute, q.kernel_idle_s,
	       q.kernel_lifetime_s, q.kernel_memory_mb, q.kernel_cpu_pct,
	       q.browser_clients, q.playground_read_rps
	  FROM submissions s
	  JOIN tenants t ON t.id = s.tenant_id
	  JOIN tenant_quotas q ON q.tenant_id = t.id
	 WHERE s.id = $1 AND length($1) <= 64 AND s.kind = 'submission'
	   AND NOT t.disabled AND q.browser_clients
$$;
REVOKE ALL ON FUNCTION gavel_token_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_token_lookup(text) TO gavel_frontend;

DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_key_lookup(bytea) SET search_path = %I, pg_temp', current_schema());
	EXECUTE format('ALTER FUNCTION gavel_playground_lookup(text) SET search_path = %I, pg_temp', current_schema());
	EXECUTE format('ALTER FUNCTION gavel_token_lookup(text) SET search_path = %I, pg_temp', current_schema());
END
$$;
