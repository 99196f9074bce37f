-- Tenants, part two: quotas, usage accounting, the key lookup the frontend
-- needs before it knows the tenant, audit columns for where a record was
-- made, and row-level security on every table a tenant owns.
--
-- Row-level security. Every tenant table carries a policy
--     tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid
-- The service role (gavel_service, NOBYPASSRLS, not the owner) is subject
-- to it and sets the tenant per transaction with
--     SELECT set_config('gavel.tenant_id', $1, true)
-- so a query that forgets its WHERE still sees only that tenant's rows, and
-- a transaction that set nothing sees none. NULLIF: once a transaction-local
-- setting has ended, the placeholder reads as '' (not NULL) for the rest of
-- the session, and ''::uuid would be an error rather than "no rows".
-- The owner role (migrations, the operator CLI) is not subject to the
-- policies: RLS is ENABLEd, not FORCEd, so table owners bypass it.
--
-- The frontend authenticates with gavel_key_lookup(hash), a SECURITY
-- DEFINER function owned by gavel_owner that returns the one key row (and
-- its tenant's state and quota) matching a hash, and nothing else.

-- Where an audit record was made (executor node, sandbox id).
ALTER TABLE audit_log
	ADD COLUMN node    text CHECK (node IS NULL OR length(node) <= 512),
	ADD COLUMN sandbox text CHECK (sandbox IS NULL OR length(sandbox) <= 512);

-- One row per tenant, created with the tenant (trigger below). Defaults
-- are the defaults of a new tenant (tenant_quota_defaults in C).
CREATE TABLE tenant_quotas (
	tenant_id           uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
	requests_per_second integer NOT NULL DEFAULT 20 CHECK (requests_per_second BETWEEN 0 AND 1000000),
	burst               integer NOT NULL DEFAULT 40 CHECK (burst BETWEEN 1 AND 10000000),
	max_queued          integer NOT NULL DEFAULT 1000 CHECK (max_queued BETWEEN 0 AND 10000000),
	max_running         integer NOT NULL DEFAULT 4 CHECK (max_running BETWEEN 0 AND 100000),
	max_cpu_ms          bigint  NOT NULL DEFAULT 10000 CHECK (max_cpu_ms BETWEEN 1 AND 86400000),
	max_wall_ms         bigint  NOT NULL DEFAULT 20000 CHECK (max_wall_ms BETWEEN 1 AND 86400000),
	max_memory_mb       integer NOT NULL DEFAULT 512 CHECK (max_memory_mb BETWEEN 1 AND 1048576),
	max_output_kb       integer NOT NULL DEFAULT 1024 CHECK (max_output_kb BETWEEN 1 AND 1048576),
	-- Empty: every language.
	allowed_languages   text[]  NOT NULL DEFAULT '{}'
	                    CHECK (cardinality(allowed_languages) <= 64
	                           AND array_to_string(allowed_languages, ',') ~ '^([A-Za-z0-9_.+-]{1,32}(,[A-Za-z0-9_.+-]{1,32})*)?$'),
	max_gpus            integer NOT NULL DEFAULT 0 CHECK (max_gpus BETWEEN 0 AND 1024),
	egress_policy       jsonb   NOT NULL DEFAULT '{"mode": "none"}'
	                    CHECK (jsonb_typeof(egress_policy) = 'object' AND length(egress_policy::text) <= 4096),
	retention_days      integer NOT NULL DEFAULT 30 CHECK (retention_days BETWEEN 1 AND 36500),
	weight              integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 10000),
	updated_at          timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tenant_quotas (tenant_id) SELECT id FROM tenants ON CONFLICT DO NOTHING;

CREATE FUNCTION gavel_tenant_quota_init() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO tenant_quotas (tenant_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
	RETURN NEW;
END
$$;
CREATE TRIGGER tenants_quota_init AFTER INSERT ON tenants
	FOR EACH ROW EXECUTE FUNCTION gavel_tenant_quota_init();

-- Usage per tenant and UTC day; the executor adds to it in its result
-- transaction (tenant_usage_add).
CREATE TABLE usage_daily (
	tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	day            date NOT NULL,
	submissions    bigint NOT NULL DEFAULT 0 CHECK (submissions >= 0),
	sandbox_cpu_ms bigint NOT NULL DEFAULT 0 CHECK (sandbox_cpu_ms >= 0),
	gpu_ms         bigint NOT NULL DEFAULT 0 CHECK (gpu_ms >= 0),
	egress_bytes   bigint NOT NULL DEFAULT 0 CHECK (egress_bytes >= 0),
	PRIMARY KEY (tenant_id, day)
);

-- The key lookup (TENANT_SQL_KEY_LOOKUP in tenants/key.h). Epoch columns
-- are whole seconds; allowed_languages comes comma-joined.
CREATE FUNCTION gavel_key_lookup(bytea)
RETURNS TABLE (
	tenant_id uuid, tenant_disabled boolean, key_id uuid,
	expires_at_s bigint, revoked_at_s bigint,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer)
LANGUAGE sql STABLE SECURITY DEFINER
AS $$
	SELECT k.tenant_id, t.disabled, k.id,
	       floor(extract(epoch FROM k.expires_at))::bigint,
	       floor(extract(epoch FROM k.revoked_at))::bigint,
	       q.requests_per_second, q.burst, q.max_queued, q.max_running,
	       q.max_cpu_ms, q.max_wall_ms, q.max_memory_mb, q.max_output_kb,
	       array_to_string(q.allowed_languages, ','), q.max_gpus, q.egress_policy::text,
	       q.retention_days, q.weight
	  FROM api_keys k
	  JOIN tenants t ON t.id = k.tenant_id
	  LEFT JOIN tenant_quotas q ON q.tenant_id = k.tenant_id
	 WHERE k.key_hash = $1
$$;
REVOKE ALL ON FUNCTION gavel_key_lookup(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_key_lookup(bytea) TO gavel_service;

-- A SECURITY DEFINER function must not resolve names through a
-- search_path its caller controls: pin it to this schema.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_key_lookup(bytea) SET search_path = %I, pg_temp',
	               current_schema());
END
$$;

-- Row-level security on every tenant table.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
	USING (id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

ALTER TABLE submissions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON submissions
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_log
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

ALTER TABLE tenant_quotas ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_quotas
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

ALTER TABLE usage_daily ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_daily
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

-- The service role reads tenants and keys (through the policies) but
-- creating and changing them is the operator's, as the owner.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON tenants, api_keys FROM gavel_service;
-- Append-only, stated again so that no later grant widens it by accident.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM gavel_service;
GRANT SELECT ON tenant_quotas TO gavel_service;
GRANT SELECT, INSERT, UPDATE ON usage_daily TO gavel_service;
