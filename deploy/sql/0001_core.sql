-- The first schema of Gavel: tenants, their API keys, submissions and the
-- audit log. Later migrations refine it (row-level security, quotas,
-- per-test results). Runs as gavel_owner inside one transaction (gavel
-- migrate); objects land in the first schema of the search_path.
--
-- gavel_service, the daemons' role, may read and write the normal tables
-- but may only INSERT and SELECT audit records: it can neither UPDATE nor
-- DELETE them, which is half of what makes the log append-only (the other
-- half is the per-tenant hash chain, prev_hash -> hash).

CREATE TABLE tenants (
	id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	name        text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
	created_at  timestamptz NOT NULL DEFAULT now(),
	disabled    boolean NOT NULL DEFAULT false
);

-- Keys are random (>= 256 bits) and shown once; only a hash is stored.
CREATE TABLE api_keys (
	id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	label       text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
	key_hash    bytea NOT NULL UNIQUE CHECK (length(key_hash) BETWEEN 16 AND 128),
	created_at  timestamptz NOT NULL DEFAULT now(),
	expires_at  timestamptz,
	revoked_at  timestamptz
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);

-- id is an unguessable token made by the frontend (not a sequence), so a
-- submission's id reveals nothing about other tenants' traffic.
CREATE TABLE submissions (
	id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{16,64}$'),
	tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	language    text NOT NULL CHECK (length(language) BETWEEN 1 AND 64),
	status      text NOT NULL DEFAULT 'queued'
	            CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	verdict     text CHECK (verdict IS NULL OR verdict IN
	            ('AC', 'WA', 'TLE', 'MLE', 'OLE', 'RE', 'CE', 'PE', 'IE')),
	created_at  timestamptz NOT NULL DEFAULT now(),
	finished_at timestamptz,
	source      bytea NOT NULL,
	result      jsonb
);
CREATE INDEX submissions_tenant_created_idx ON submissions (tenant_id, created_at DESC);
-- What the reconciler re-enqueues after a Redis flush.
CREATE INDEX submissions_queued_idx ON submissions (created_at) WHERE status = 'queued';

-- Append-only, hash-chained per tenant: seq counts 1, 2, ... per tenant;
-- hash = H(prev_hash || record). tenant_id is NULL for system records.
CREATE TABLE audit_log (
	tenant_id   uuid REFERENCES tenants (id) ON DELETE RESTRICT,
	seq         bigint NOT NULL CHECK (seq > 0),
	at          timestamptz NOT NULL DEFAULT now(),
	actor       text NOT NULL,
	action      text NOT NULL,
	object      text,
	details     jsonb NOT NULL DEFAULT '{}'::jsonb,
	prev_hash   bytea,
	hash        bytea NOT NULL
);
CREATE UNIQUE INDEX audit_log_tenant_seq_idx ON audit_log (tenant_id, seq) NULLS NOT DISTINCT;
CREATE INDEX audit_log_at_idx ON audit_log (at);

-- Grants for the service role, in whatever schema this runs in.
DO $$
BEGIN
	EXECUTE format('GRANT USAGE ON SCHEMA %I TO gavel_service', current_schema());
END
$$;
GRANT SELECT, INSERT, UPDATE ON tenants, api_keys, submissions TO gavel_service;
GRANT SELECT, INSERT ON audit_log TO gavel_service;
GRANT SELECT ON schema_migrations TO gavel_service;
