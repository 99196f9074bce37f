-- One database role per daemon, each granted what that daemon's code runs
-- and nothing else, in place of the one gavel_service role all three
-- shared; and operator records in the audit log only from the owner.
--
-- Why: gavel_service could set gavel.tenant_id to any tenant (the daemons
-- serve every tenant, so they must) and then append, through the definer
-- function gavel_audit_append, a record with the actor "operator:root" that
-- `gavel audit verify` reports as intact: the chain proves a record was not
-- changed, not who wrote it. It could also read every table any daemon
-- needs: the scheduler's role could read API key hashes, the executor's
-- could rewrite submissions it never runs.
--
-- The roles: gavel_frontend, gavel_scheduler, gavel_executor (the
-- executor's webhook deliverer, a child of gavel-executor, uses the
-- executor's connection settings and so its role). LOGIN, NOSUPERUSER,
-- NOBYPASSRLS, NOCREATEDB, NOCREATEROLE, members of nothing. Migrations run
-- as gavel_owner, which cannot create roles (NOCREATEROLE, on purpose), so
-- whoever sets up the cluster creates them, with gavel_service, which the
-- migrations before this one grant to (deploy/local/gavel-local does it as
-- the local cluster's superuser; README.md, "Production", lists the
-- commands). This migration stops with a message naming what is missing
-- rather than grant to nobody, and refuses roles that could step around
-- row-level security or the audit check below.
--
-- gavel_service stays (the owner cannot drop a role, and migrations 0001
-- to 0011 grant to it on a fresh install), stripped of every privilege in
-- this schema here; the cluster administrator may make it NOLOGIN or drop
-- it afterwards (gavel-local makes it NOLOGIN).
--
-- What each role is granted is read off the SQL its binary runs (every
-- binary links every library; what counts is which code each daemon
-- calls):
--   frontend: frontend/, tenants/key.h (gavel_key_lookup), tenants/usage.h
--     (GET /v1/usage), the audit append and page;
--   scheduler: scheduler/sched.c, tenants/retention.c,
--     common/webhook_outbox.c (a submission finished as IE);
--   executor: executor/daemon/daemon.c, executor/problems/problem_store.c,
--     executor/daemon/webhook.c (the deliverer), tenants/usage.c (the usage
--     upsert), common/webhook_outbox.c, the audit append.
-- INSERT and UPDATE are granted per column: the columns the statements
-- name, so that, for example, the frontend cannot insert a submission that
-- is already 'done' and the executor cannot change a submission's source.
-- SELECT is per table where the daemon reads rows of it, per column where
-- the table holds what it must not see (tenants: name, webhook secret).
-- No sequence: the one identity column (webhook_deliveries.id) draws its
-- values without a privilege check. No role reads api_keys or writes
-- audit_log directly: the key lookup and the appends are definer functions.

DO $$
DECLARE
	missing text;
	unsafe text;
BEGIN
	SELECT string_agg(r, ', ' ORDER BY r) INTO missing
	  FROM unnest(ARRAY['gavel_frontend', 'gavel_scheduler', 'gavel_executor']) r
	 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r);
	IF missing IS NOT NULL THEN
		RAISE EXCEPTION 'gavel: the database roles % do not exist', missing
			USING HINT = 'Create them as a superuser (or a role with CREATEROLE) before migrating, e.g. '
				     'CREATE ROLE gavel_frontend LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE '
				     'PASSWORD ''...''; and the same for gavel_scheduler and gavel_executor, then '
				     'GRANT CONNECT ON DATABASE gavel TO them (README.md, "Production").';
	END IF;
	SELECT string_agg(r.rolname, ', ' ORDER BY r.rolname) INTO unsafe
	  FROM pg_roles r
	 WHERE r.rolname IN ('gavel_frontend', 'gavel_scheduler', 'gavel_executor')
	   AND (r.rolsuper OR r.rolbypassrls OR r.rolcreaterole OR pg_has_role(r.oid, current_user, 'MEMBER'));
	IF unsafe IS NOT NULL THEN
		RAISE EXCEPTION 'gavel: the daemon roles % must be NOSUPERUSER NOBYPASSRLS NOCREATEROLE and not members of %',
			unsafe, current_user
			USING HINT = 'Row-level security and the audit log''s operator check rely on it.';
	END IF;
END
$$;

-- The shared role loses everything in this schema.
DO $$
BEGIN
	EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM gavel_service', current_schema());
	EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %I FROM gavel_service', current_schema());
	EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA %I FROM gavel_service', current_schema());
	EXECUTE format('REVOKE ALL ON SCHEMA %I FROM gavel_service', current_schema());
	EXECUTE format('GRANT USAGE ON SCHEMA %I TO gavel_frontend, gavel_scheduler, gavel_executor',
		       current_schema());
END
$$;

-- gavel-frontend: authenticates keys (gavel_key_lookup), stores and reads
-- its tenants' submissions and problems, answers GET /v1/audit and
-- /v1/usage, appends `submission.created`, `quota.refused`, problem
-- records. The queued count is read for max_queued (0008).
GRANT SELECT, DELETE ON submissions TO gavel_frontend;
GRANT INSERT (id, tenant_id, language, source, request, api, problem_id, problem_version)
	ON submissions TO gavel_frontend;
GRANT SELECT ON tenant_queue_counts, audit_log, usage_daily, problems, problem_versions TO gavel_frontend;
GRANT INSERT (id, tenant_id, latest_version, feedback) ON problems TO gavel_frontend;
GRANT UPDATE (latest_version, updated_at, feedback, deleted_at) ON problems TO gavel_frontend;
GRANT INSERT (tenant_id, problem_id, version, archive, archive_bytes, archive_sha256)
	ON problem_versions TO gavel_frontend;
GRANT EXECUTE ON FUNCTION gavel_key_lookup(bytea),
	gavel_audit_append(uuid, text, text, text, text, text, jsonb),
	gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[])
	TO gavel_frontend;

-- gavel-scheduler: reads a job's submission and its tenant's state and
-- quota (a lost gavel:tenantcfg hash is published again), finishes a job
-- as IE with its webhook outbox row, re-enqueues after a Redis flush
-- (gavel_unfinished_submissions), runs retention (gavel_tenant_ids, the
-- DELETE, `retention.purged`).
GRANT SELECT (id, disabled) ON tenants TO gavel_scheduler;
GRANT SELECT ON tenant_quotas TO gavel_scheduler;
GRANT SELECT, DELETE ON submissions TO gavel_scheduler;
GRANT UPDATE (status, verdict, result, finished_at) ON submissions TO gavel_scheduler;
GRANT INSERT (tenant_id, submission_id) ON webhook_outbox TO gavel_scheduler;
GRANT EXECUTE ON FUNCTION gavel_unfinished_submissions(integer, integer), gavel_tenant_ids(),
	gavel_audit_append(uuid, text, text, text, text, text, jsonb)
	TO gavel_scheduler;

-- gavel-executor: claims and finishes submissions, reads the tenant's
-- egress policy, adds usage, appends `sandbox.started` and
-- `sandbox.finished`, imports problem packages (the claim, the archive,
-- the blobs and files) and reads them to judge; its webhook deliverer
-- reads finished submissions, the outbox and the tenant's signing secret
-- (gavel_webhook_secret) and records each attempt.
GRANT SELECT (tenant_id, egress_policy) ON tenant_quotas TO gavel_executor;
GRANT SELECT ON submissions TO gavel_executor;
GRANT UPDATE (status, started_at, node, attempts, verdict, result, finished_at) ON submissions TO gavel_executor;
GRANT SELECT ON usage_daily TO gavel_executor;
GRANT INSERT (tenant_id, day, submissions, sandbox_cpu_ms, gpu_ms, egress_bytes),
	UPDATE (submissions, sandbox_cpu_ms, gpu_ms, egress_bytes) ON usage_daily TO gavel_executor;
GRANT SELECT, DELETE ON webhook_outbox TO gavel_executor;
GRANT INSERT (tenant_id, submission_id), UPDATE (attempt, due_at) ON webhook_outbox TO gavel_executor;
GRANT INSERT (tenant_id, submission_id, attempt, outcome, status_code, error)
	ON webhook_deliveries TO gavel_executor;
GRANT SELECT ON problems, problem_versions, problem_blobs, problem_files TO gavel_executor;
GRANT UPDATE (current_version, updated_at) ON problems TO gavel_executor;
GRANT UPDATE (status, message, archive, imported_at, claimed_until, name, type, interactive, custom_validation,
	      time_limit_ms, memory_mb, output_mb, summary) ON problem_versions TO gavel_executor;
GRANT INSERT (tenant_id, sha256, size, content) ON problem_blobs TO gavel_executor;
GRANT INSERT (tenant_id, problem_id, version, path, sha256, size) ON problem_files TO gavel_executor;
GRANT EXECUTE ON FUNCTION gavel_audit_append(uuid, text, text, text, text, text, jsonb),
	gavel_webhook_outbox_due(integer, integer), gavel_webhook_secret(bytea),
	gavel_problem_import_claim(text, integer)
	TO gavel_executor;

-- The audit append, as in 0008, with one more check for callers that are
-- not the owner: a record's actor must be a daemon's, "key:<key id>" (the
-- frontend, for the tenant's API key) or "system:<component>" (the
-- scheduler and the executor). "operator:<user>" (tenant_operator_actor,
-- the CLI) and anything else is the owner's alone. An allow-list rather
-- than a refusal of "operator:": a look-alike ("Operator:", a homoglyph)
-- would read as an operator's to a person.
--
-- Who is calling: inside a SECURITY DEFINER function current_user is the
-- function's owner, always; session_user is the role that logged in, which
-- only a superuser can change (SET SESSION AUTHORIZATION). A daemon role
-- is a member of no other role (checked above), so SET ROLE cannot lend it
-- the owner's membership either.
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
		IF EXISTS (SELECT 1 FROM unnest(actors) a WHERE a IS NOT NULL AND a !~ '^(key|system):') THEN
			RAISE EXCEPTION 'audit: role % may write only records of actor key:... or system:...; '
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
-- again (0008). Its grants stay (those of this file above).
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[]) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
END
$$;
