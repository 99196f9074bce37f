-- Public playgrounds (issue 17): anonymous access, under
-- /playground/{tenant}/, to the Judge0, Piston and native routes that run
-- code and read their own result, for a tenant that turns it on; and
-- submission ids as capabilities for GET (Judge0's own model), also per
-- tenant. Both off by default (frontend/playground.h has the policy).
--
-- playground_rps and playground_burst: each client address's token bucket
-- for anonymous requests to this tenant (never above the tenant's own
-- requests_per_second and burst, which bound all of its anonymous traffic
-- together as well); playground_max_queued: anonymous submissions are
-- taken only while the tenant has fewer queued (never above max_queued).
ALTER TABLE tenant_quotas
	ADD COLUMN playground boolean NOT NULL DEFAULT false,
	ADD COLUMN token_capability boolean NOT NULL DEFAULT false,
	ADD COLUMN playground_rps integer NOT NULL DEFAULT 2 CHECK (playground_rps BETWEEN 1 AND 1000000),
	ADD COLUMN playground_burst integer NOT NULL DEFAULT 10 CHECK (playground_burst BETWEEN 1 AND 10000000),
	ADD COLUMN playground_max_queued integer NOT NULL DEFAULT 10
		CHECK (playground_max_queued BETWEEN 0 AND 10000000);

-- Made anonymously, through the tenant's playground: the only submissions
-- an anonymous GET under the prefix may read unless the tenant's
-- token_capability is on.
ALTER TABLE submissions
	ADD COLUMN playground boolean NOT NULL DEFAULT false;
GRANT INSERT (playground) ON submissions TO gavel_frontend;

-- The key lookup returns the new quota columns too (TENANT_SQL_KEY_LOOKUP
-- in tenants/key.h); a function's result type cannot be changed in place.
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
	playground_max_queued integer)
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
	       q.playground_max_queued
	  FROM api_keys k
	  JOIN tenants t ON t.id = k.tenant_id
	  LEFT JOIN tenant_quotas q ON q.tenant_id = k.tenant_id
	 WHERE k.key_hash = $1
$$;
REVOKE ALL ON FUNCTION gavel_key_lookup(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_key_lookup(bytea) TO gavel_frontend;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_key_lookup(bytea) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- The playground's tenant lookup (TENANT_SQL_PLAYGROUND_LOOKUP in
-- tenants/playground.h): the tenant named by $1 (its uuid, or its name,
-- as `gavel tenant` takes them), with its quota, only when it is enabled
-- and has its playground or token_capability on. Any other tenant, and a
-- name that is no tenant's, give no row alike: the frontend cannot tell
-- them apart, nor can whoever asks under the prefix. Definer, like the key
-- lookup: the frontend does not know the tenant before this answers, and
-- reads nothing else of the tenants it does not serve.
CREATE FUNCTION gavel_playground_lookup(name_or_id text)
RETURNS TABLE (
	tenant_id uuid,
	requests_per_second integer, burst integer, max_queued integer, max_running integer,
	max_cpu_ms bigint, max_wall_ms bigint, max_memory_mb integer, max_output_kb integer,
	allowed_languages text, max_gpus integer, egress_policy text, retention_days integer,
	weight integer, allow_query_key boolean, cors_origins text, playground boolean,
	token_capability boolean, playground_rps integer, playground_burst integer,
	playground_max_queued integer)
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
	       q.playground_max_queued
	  FROM tenants t
	  JOIN tenant_quotas q ON q.tenant_id = t.id
	 WHERE t.id = tid AND NOT t.disabled AND (q.playground OR q.token_capability);
END
$$;
REVOKE ALL ON FUNCTION gavel_playground_lookup(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_playground_lookup(text) TO gavel_frontend;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION gavel_playground_lookup(text) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- The audit append of 0012, with one more actor a daemon role may write:
-- "anonymous:<client address>", the frontend's actor for a playground's
-- anonymous requests (submission.created, quota.refused). Still an
-- allow-list; "operator:" and anything else stay the owner's alone.
CREATE OR REPLACE FUNCTION gavel_audit_append_many(tenant uuid, actors text[], actions text[], objects text[],
						   nodes text[], sandboxes text[], details jsonb[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
	n integer := coalesce(cardinality(actions), 0);
	scoped uuid;
	d jsonb;
	ds jsonb[] := '{}';
	head_seq bigint;
	head_hash bytea;
	seqs bigint[] := '{}';
	prevs bytea[] := '{}';
	hashes bytea[] := '{}';
	at_ts timestamptz := now();
	at_us bigint := (extract(epoch FROM now()) * 1000000)::bigint;
BEGIN
	IF NOT pg_has_role(session_user, current_user, 'MEMBER') THEN
		scoped := NULLIF(current_setting('gavel.tenant_id', true), '')::uuid;
		IF tenant IS NULL OR scoped IS NULL OR scoped <> tenant THEN
			RAISE EXCEPTION 'audit: the record''s tenant is not the tenant of this transaction'
				USING ERRCODE = '42501';
		END IF;
		IF EXISTS (SELECT 1 FROM unnest(actors) a WHERE a IS NOT NULL AND a !~ '^(key|system|anonymous):') THEN
			RAISE EXCEPTION 'audit: role % may write only records of actor key:..., system:... or anonymous:...; '
					'operator records are the owner''s', session_user
				USING ERRCODE = '42501';
		END IF;
	END IF;
	IF n = 0 THEN
		RETURN NULL;
	END IF;
	IF n > 100000 OR array_ndims(actions) <> 1 OR array_lower(actions, 1) <> 1
	   OR coalesce(cardinality(actors), -1) <> n
	   OR coalesce(cardinality(objects), n) <> n OR coalesce(cardinality(nodes), n) <> n
	   OR coalesce(cardinality(sandboxes), n) <> n OR coalesce(cardinality(details), n) <> n
	   OR array_lower(actors, 1) <> 1 OR coalesce(array_lower(objects, 1), 1) <> 1
	   OR coalesce(array_lower(nodes, 1), 1) <> 1 OR coalesce(array_lower(sandboxes, 1), 1) <> 1
	   OR coalesce(array_lower(details, 1), 1) <> 1 THEN
		RAISE EXCEPTION 'audit: the record arrays must be one-dimensional, of one length, from 1'
			USING ERRCODE = '22023';
	END IF;
	FOR i IN 1 .. n LOOP
		IF coalesce(actors[i], '') = '' OR coalesce(actions[i], '') = '' THEN
			RAISE EXCEPTION 'audit: actor and action are required' USING ERRCODE = '22023';
		END IF;
		IF octet_length(actors[i]) > 512 OR octet_length(actions[i]) > 512
		   OR coalesce(octet_length(objects[i]), 0) > 512 OR coalesce(octet_length(nodes[i]), 0) > 512
		   OR coalesce(octet_length(sandboxes[i]), 0) > 512 THEN
			RAISE EXCEPTION 'audit: a text field is longer than 512 bytes' USING ERRCODE = '22023';
		END IF;
		d := coalesce(details[i], '{}'::jsonb);
		IF jsonb_typeof(d) <> 'object' OR octet_length(d::text) > 16384 THEN
			RAISE EXCEPTION 'audit: details must be a JSON object of at most 16384 bytes' USING ERRCODE = '22023';
		END IF;
		IF d ?| ARRAY['source', 'source_code', 'sources', 'files', 'stdin', 'input', 'stdout', 'stderr',
			       'output', 'compile_output', 'expected_output', 'expected'] THEN
			RAISE EXCEPTION 'audit: details must not hold source code, input or output' USING ERRCODE = '22023';
		END IF;
		ds := ds || d;
	END LOOP;

	PERFORM pg_advisory_xact_lock(1635087460, hashtext(coalesce(tenant::text, '')));
	IF tenant IS NULL THEN
		SELECT a.seq, a.hash INTO head_seq, head_hash FROM audit_log a
		 WHERE a.tenant_id IS NULL ORDER BY a.seq DESC LIMIT 1;
	ELSE
		SELECT a.seq, a.hash INTO head_seq, head_hash FROM audit_log a
		 WHERE a.tenant_id = tenant ORDER BY a.seq DESC LIMIT 1;
	END IF;
	head_seq := coalesce(head_seq, 0);
	FOR i IN 1 .. n LOOP
		prevs := prevs || head_hash;
		head_seq := head_seq + 1;
		head_hash := gavel_audit_hash(tenant, head_seq, at_us, actors[i], actions[i], objects[i], nodes[i],
					      sandboxes[i], ds[i], head_hash);
		seqs := seqs || head_seq;
		hashes := hashes || head_hash;
	END LOOP;
	INSERT INTO audit_log (tenant_id, seq, at, actor, action, object, node, sandbox, details, prev_hash, hash)
	SELECT tenant, r.seq, at_ts, actors[r.i], actions[r.i], objects[r.i], nodes[r.i], sandboxes[r.i], ds[r.i],
	       r.prev, r.hash
	  FROM unnest(seqs, prevs, hashes) WITH ORDINALITY AS r(seq, prev, hash, i);
	RETURN head_seq;
END
$$;

-- CREATE OR REPLACE resets the function's settings: pin its search_path
-- again (0008). Its grants stay (those of 0012).
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[]) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
END
$$;
