-- Webhooks (executor/daemon/webhook.h): each tenant's signing secret and a
-- record of every delivery attempt.
--
-- The secret is 32 random bytes from libsodium, made in C: `gavel tenant
-- create` sets it, and for a tenant that has none (one created before this
-- migration) the executor's delivery process makes one the first time it
-- signs for that tenant and stores it through gavel_webhook_secret(), which
-- writes it only while the column is still NULL. No SQL default: PostgreSQL
-- without pgcrypto has no cryptographic generator. `gavel tenant
-- webhook-secret NAME` shows it to the operator (and --rotate replaces it).

ALTER TABLE tenants
	ADD COLUMN webhook_secret bytea
	CHECK (webhook_secret IS NULL OR length(webhook_secret) BETWEEN 16 AND 64);

-- One row per attempt. outcome: delivered (2xx), failed (transport error,
-- timeout or another status: retried while attempts remain), refused (the
-- URL or an address it resolves to is not allowed: never retried).
-- No foreign key to submissions: retention may delete a submission while
-- the record of its deliveries stays.
CREATE TABLE webhook_deliveries (
	id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	submission_id text NOT NULL CHECK (submission_id ~ '^[A-Za-z0-9_-]{16,64}$'),
	attempt       integer NOT NULL CHECK (attempt BETWEEN 1 AND 100),
	at            timestamptz NOT NULL DEFAULT now(),
	outcome       text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'refused')),
	status_code   integer CHECK (status_code IS NULL OR status_code BETWEEN 100 AND 999),
	error         text CHECK (error IS NULL OR length(error) <= 1024)
);
CREATE INDEX webhook_deliveries_submission_idx ON webhook_deliveries (tenant_id, submission_id, attempt);

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_deliveries
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
-- Append-only for the service role, like audit_log.
GRANT SELECT, INSERT ON webhook_deliveries TO gavel_service;

-- The secret of the transaction's tenant (gavel.tenant_id), storing
-- candidate first when the tenant has none. The service role may not
-- UPDATE tenants (0002); this is the one thing it may change there, only
-- for the tenant its transaction is bound to, and only from NULL.
CREATE FUNCTION gavel_webhook_secret(candidate bytea) RETURNS bytea
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
	tid uuid := NULLIF(current_setting('gavel.tenant_id', true), '')::uuid;
	s bytea;
BEGIN
	IF tid IS NULL THEN
		RAISE EXCEPTION 'gavel_webhook_secret: no tenant set for this transaction';
	END IF;
	IF candidate IS NULL OR length(candidate) < 32 THEN
		RAISE EXCEPTION 'gavel_webhook_secret: candidate must be at least 32 bytes';
	END IF;
	UPDATE tenants SET webhook_secret = candidate WHERE id = tid AND webhook_secret IS NULL;
	SELECT t.webhook_secret INTO s FROM tenants t WHERE t.id = tid;
	RETURN s;
END
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_webhook_secret(bytea) SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_webhook_secret(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_webhook_secret(bytea) TO gavel_service;
