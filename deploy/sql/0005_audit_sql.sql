-- The audit chain's append in SQL, so that every writer computes a
-- record's seq and hash the same way: the C daemons and the CLI
-- (tenant_audit_append calls gavel_audit_append) and the frontend, whose
-- asynchronous pipeline writes `submission.created` in the very
-- transaction of the submission INSERT. tenant_audit_verify (tenants/
-- audit.c) recomputes every hash in C from the stored rows: it stays the
-- independent check of this implementation.
--
-- The chain (tenants/audit.h): records of one tenant are numbered
-- seq = 1, 2, ...; prev_hash = hash of seq - 1 (NULL for seq 1) and
--   hash = sha256(canonical(record))
-- canonical(record) = 'gavel-audit-v1\n' then, for tenant_id, seq, at_us,
-- actor, action, object, node, sandbox, details, prev_hash in this order,
-- a 4-byte big-endian length and that many bytes, or the length
-- 0xFFFFFFFF for NULL. Texts as UTF-8; tenant_id as lowercase uuid text;
-- seq and at_us (microseconds since 1970 of `at`) in decimal; details as
-- jsonb's text output; prev_hash as its 32 raw bytes.
--
-- Concurrency: pg_advisory_xact_lock(1635087460 /* TENANT_AUDIT_LOCK_CLASS,
-- "audi" */, hashtext(tenant::text or '')) before reading the chain head,
-- held to the end of the caller's transaction: appends of one tenant
-- serialise, other tenants' run in parallel. The caller must run at READ
-- COMMITTED (each statement of the function then sees the head committed
-- by the transaction that held the lock before).
--
-- Scope: the function runs as its owner (gavel_owner), which row-level
-- security does not bind, so it checks the caller's scope itself. A caller
-- that is not a member of the owner role (gavel_service) may append only
-- to the tenant its transaction set (gavel.tenant_id, tenants/db.h), never
-- a system record (tenant NULL): exactly what the audit_log policy of 0002
-- allows it with a plain INSERT.

-- A length-prefixed field of the canonical form.
CREATE FUNCTION gavel_audit_field(b bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE WHEN b IS NULL THEN '\xffffffff'::bytea ELSE int4send(length(b)) || b END
$$;

-- hash = sha256(canonical(record)); pure, so that an auditor can recompute
-- any stored row with SQL alone.
CREATE FUNCTION gavel_audit_hash(tenant uuid, seq bigint, at_us bigint, actor text, action text,
				 object text, node text, sandbox text, details jsonb, prev_hash bytea)
RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE AS $$
	SELECT sha256(convert_to(E'gavel-audit-v1\n', 'UTF8')
		|| gavel_audit_field(convert_to(tenant::text, 'UTF8'))
		|| gavel_audit_field(convert_to(seq::text, 'UTF8'))
		|| gavel_audit_field(convert_to(at_us::text, 'UTF8'))
		|| gavel_audit_field(convert_to(actor, 'UTF8'))
		|| gavel_audit_field(convert_to(action, 'UTF8'))
		|| gavel_audit_field(convert_to(object, 'UTF8'))
		|| gavel_audit_field(convert_to(node, 'UTF8'))
		|| gavel_audit_field(convert_to(sandbox, 'UTF8'))
		|| gavel_audit_field(convert_to(details::text, 'UTF8'))
		|| gavel_audit_field(prev_hash))
$$;

-- Appends one record in the caller's transaction and returns its seq.
-- details NULL = '{}'. Refuses (SQLSTATE 22023) an empty actor or action,
-- texts over 512 bytes, details that are not an object or are over 16 KiB
-- of text, and details whose top-level keys would carry source code,
-- input or output (the list of TENANT_AUDIT_FORBIDDEN_KEYS in C); refuses
-- (42501) a record outside the caller's tenant.
CREATE FUNCTION gavel_audit_append(tenant uuid, actor text, action text, object text, node text,
				   sandbox text, details jsonb)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
	d jsonb := coalesce(details, '{}'::jsonb);
	scoped uuid;
	head_seq bigint;
	head_hash bytea;
	new_seq bigint;
	at_ts timestamptz := now();
	h bytea;
BEGIN
	IF NOT pg_has_role(session_user, current_user, 'MEMBER') THEN
		scoped := NULLIF(current_setting('gavel.tenant_id', true), '')::uuid;
		IF tenant IS NULL OR scoped IS NULL OR scoped <> tenant THEN
			RAISE EXCEPTION 'audit: the record''s tenant is not the tenant of this transaction'
				USING ERRCODE = '42501';
		END IF;
	END IF;
	IF coalesce(actor, '') = '' OR coalesce(action, '') = '' THEN
		RAISE EXCEPTION 'audit: actor and action are required' USING ERRCODE = '22023';
	END IF;
	IF octet_length(actor) > 512 OR octet_length(action) > 512 OR coalesce(octet_length(object), 0) > 512
	   OR coalesce(octet_length(node), 0) > 512 OR coalesce(octet_length(sandbox), 0) > 512 THEN
		RAISE EXCEPTION 'audit: a text field is longer than 512 bytes' USING ERRCODE = '22023';
	END IF;
	IF jsonb_typeof(d) <> 'object' OR octet_length(d::text) > 16384 THEN
		RAISE EXCEPTION 'audit: details must be a JSON object of at most 16384 bytes' USING ERRCODE = '22023';
	END IF;
	IF d ?| ARRAY['source', 'source_code', 'sources', 'files', 'stdin', 'input', 'stdout', 'stderr',
		       'output', 'compile_output', 'expected_output', 'expected'] THEN
		RAISE EXCEPTION 'audit: details must not hold source code, input or output' USING ERRCODE = '22023';
	END IF;

	PERFORM pg_advisory_xact_lock(1635087460, hashtext(coalesce(tenant::text, '')));
	IF tenant IS NULL THEN
		SELECT a.seq, a.hash INTO head_seq, head_hash FROM audit_log a
		 WHERE a.tenant_id IS NULL ORDER BY a.seq DESC LIMIT 1;
	ELSE
		SELECT a.seq, a.hash INTO head_seq, head_hash FROM audit_log a
		 WHERE a.tenant_id = tenant ORDER BY a.seq DESC LIMIT 1;
	END IF;
	new_seq := coalesce(head_seq, 0) + 1;
	h := gavel_audit_hash(tenant, new_seq, (extract(epoch FROM at_ts) * 1000000)::bigint, actor, action,
			      object, node, sandbox, d, head_hash);
	INSERT INTO audit_log (tenant_id, seq, at, actor, action, object, node, sandbox, details, prev_hash, hash)
	VALUES (tenant, new_seq, at_ts, actor, action, object, node, sandbox, d, head_hash, h);
	RETURN new_seq;
END
$$;

-- Definer functions must not resolve names through the caller's
-- search_path; the helpers are pinned too, as the definer calls them.
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_field(bytea) SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_hash(uuid, bigint, bigint, text, text, text, text, text, jsonb, bytea) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_append(uuid, text, text, text, text, text, jsonb) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
END
$$;
-- The function is the only way the service role appends: a direct INSERT
-- could put a record with a made-up hash into a chain.
REVOKE INSERT ON audit_log FROM gavel_service;
REVOKE ALL ON FUNCTION gavel_audit_append(uuid, text, text, text, text, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_audit_append(uuid, text, text, text, text, text, jsonb) TO gavel_service;
GRANT EXECUTE ON FUNCTION gavel_audit_hash(uuid, bigint, bigint, text, text, text, text, text, jsonb, bytea),
	gavel_audit_field(bytea) TO gavel_service;

-- GET /v1/audit filters a tenant's records by time: (tenant, at).
CREATE INDEX IF NOT EXISTS audit_log_tenant_at_idx ON audit_log (tenant_id, at);

-- Retention as a periodic job of the scheduler, which runs as
-- gavel_service: row-level security hides every tenant until one is set,
-- so the job learns which tenants exist from this definer function (ids
-- only; the reconciler's gavel_unfinished_submissions exposes as much),
-- then works on each in a transaction scoped to it (tenant_retention_run).
CREATE FUNCTION gavel_tenant_ids() RETURNS SETOF uuid
LANGUAGE sql STABLE SECURITY DEFINER AS $$
	SELECT id FROM tenants ORDER BY id
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_tenant_ids() SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_tenant_ids() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_tenant_ids() TO gavel_service;
