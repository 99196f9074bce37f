-- Browser origins whose pages may call the API with a tenant's keys (CORS):
-- '{}' = the frontend's frontend.cors_origins default, '{*}' = any origin.
-- Each item is validated by the CLI (tenants/origin.h) before it is stored.
ALTER TABLE tenant_quotas
	ADD COLUMN cors_origins text[] NOT NULL DEFAULT '{}';

-- The key lookup returns the new column too (TENANT_SQL_KEY_LOOKUP in
-- tenants/key.h); a function's result type cannot be changed in place.
DROP FUNCTION gavel_key_lookup(bytea);
CREATE FUNCTION gavel_key_lookup(bytea)
RETURNS TABLE (
	tenant_id uuid, tenant_disabled boolean, key_id uuid,
	expires_at_s bigint, revoked_at_s bigint,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer, allow_query_key boolean, cors_origins text)
LANGUAGE sql STABLE SECURITY DEFINER
AS $$
	SELECT k.tenant_id, t.disabled, k.id,
	       floor(extract(epoch FROM k.expires_at))::bigint,
	       floor(extract(epoch FROM k.revoked_at))::bigint,
	       q.requests_per_second, q.burst, q.max_queued, q.max_running,
	       q.max_cpu_ms, q.max_wall_ms, q.max_memory_mb, q.max_output_kb,
	       array_to_string(q.allowed_languages, ','), q.max_gpus, q.egress_policy::text,
	       q.retention_days, q.weight, q.allow_query_key, array_to_string(q.cors_origins, ',')
	  FROM api_keys k
	  JOIN tenants t ON t.id = k.tenant_id
	  LEFT JOIN tenant_quotas q ON q.tenant_id = k.tenant_id
	 WHERE k.key_hash = $1
$$;
REVOKE ALL ON FUNCTION gavel_key_lookup(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_key_lookup(bytea) TO gavel_frontend;
-- As in 0002: names resolve in this schema only, never the caller's path.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_key_lookup(bytea) SET search_path = %I, pg_temp', current_schema());
END
$$;
