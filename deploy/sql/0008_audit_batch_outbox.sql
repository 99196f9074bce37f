-- Two things of the write path: appending many audit records under one
-- lock, and the webhook outbox.
--
-- 1. gavel_audit_append_many. A group commit of the frontend stores many
-- submissions of one tenant in one transaction, each with its
-- `submission.created` record. One call per record took the tenant's lock,
-- read the chain head and hashed through helper functions that PostgreSQL
-- could not inline (a function with SET search_path is called through the
-- GUC save/restore machinery every time: eleven such calls per record).
-- The batch variant validates every record, takes the lock once, reads the
-- head once, chains the records in array order and inserts them with one
-- statement. The chain is the one of 0005, byte for byte (tenant_audit_verify
-- recomputes it in C), and gavel_audit_append becomes a one-record call of
-- it, so there is still one implementation of seq and hash.
--
-- The helpers lose their pinned search_path so that they inline: they are
-- not definer functions, so a caller resolves names in them with its own
-- path (only harming itself); called from the definer functions below,
-- whose search_path is pinned, they resolve in that pinned path.

DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_field(bytea) RESET search_path', current_schema());
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_hash(uuid, bigint, bigint, text, text, text, text, text, jsonb, bytea) '
		       'RESET search_path', current_schema());
END
$$;

-- Appends records i = 1..cardinality(actions) of the tenant, in order, in
-- the caller's transaction and returns the seq of the last one (NULL when
-- actions is NULL or empty: nothing appended). actors, objects, nodes,
-- sandboxes and details are NULL (every record's field NULL) or as long as
-- actions. Refuses exactly what gavel_audit_append refuses (0005): any bad
-- record refuses the whole call, before anything is written.
CREATE FUNCTION gavel_audit_append_many(tenant uuid, actors text[], actions text[], objects text[],
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

-- The one-record form of 0005, now a call of the batch form.
CREATE OR REPLACE FUNCTION gavel_audit_append(tenant uuid, actor text, action text, object text, node text,
					      sandbox text, details jsonb)
RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER AS $$
	SELECT gavel_audit_append_many(tenant, ARRAY[actor], ARRAY[action], ARRAY[object], ARRAY[node],
				       ARRAY[sandbox], ARRAY[details])
$$;

DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[]) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
	EXECUTE format('ALTER FUNCTION %I.gavel_audit_append(uuid, text, text, text, text, text, jsonb) '
		       'SET search_path = %I, pg_temp', current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_audit_append_many(uuid, text[], text[], text[], text[], text[], jsonb[])
	TO gavel_service;

-- 2. The number of each tenant's queued submissions, kept by triggers.
-- Every submission INSERT checks the tenant's max_queued. Counting the
-- queued rows (0007's index) costs a visit of every queued row, so a POST
-- got slower the longer the queue, and a burst of POSTs (the very thing
-- max_queued is for) quadratic. The count is kept here instead, in the
-- transaction that changes a row's status, so it is exact and committed
-- or rolled back with that change. Row triggers with a WHEN clause: an
-- UPDATE that does not move a row into or out of 'queued' (a result being
-- written) costs a comparison, not a function call.
--
-- Locking: the counter row is locked from the statement that changes the
-- tenant's queued rows to the end of that transaction. Every writer takes
-- it before the tenant's audit lock (its submission statement comes before
-- its audit records), so the two locks never wait on each other in a cycle.
CREATE TABLE tenant_queue_counts (
	tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
	queued    bigint NOT NULL DEFAULT 0 CHECK (queued >= 0)
);
ALTER TABLE tenant_queue_counts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_queue_counts
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
-- Written only by the triggers (as the owner): the service role reads.
GRANT SELECT ON tenant_queue_counts TO gavel_service;

INSERT INTO tenant_queue_counts (tenant_id, queued)
SELECT t.id, (SELECT count(*) FROM submissions s WHERE s.tenant_id = t.id AND s.status = 'queued')
  FROM tenants t;

-- One row entering or leaving 'queued'. Increments upsert (a new tenant
-- has no row yet); decrements only update (a tenant being deleted cascades
-- to its submissions after its counter row may be gone).
CREATE FUNCTION gavel_queue_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'queued' THEN
		UPDATE tenant_queue_counts SET queued = queued - 1 WHERE tenant_id = OLD.tenant_id;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'queued' THEN
		INSERT INTO tenant_queue_counts AS c (tenant_id, queued) VALUES (NEW.tenant_id, 1)
		ON CONFLICT (tenant_id) DO UPDATE SET queued = c.queued + 1;
	END IF;
	RETURN NULL;
END
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_queue_count() SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_queue_count() FROM PUBLIC;
CREATE TRIGGER submissions_queue_count_ins AFTER INSERT ON submissions
	FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION gavel_queue_count();
CREATE TRIGGER submissions_queue_count_upd AFTER UPDATE OF status, tenant_id ON submissions
	FOR EACH ROW WHEN ((OLD.status = 'queued' OR NEW.status = 'queued')
			   AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id))
	EXECUTE FUNCTION gavel_queue_count();
CREATE TRIGGER submissions_queue_count_del AFTER DELETE ON submissions
	FOR EACH ROW WHEN (OLD.status = 'queued') EXECUTE FUNCTION gavel_queue_count();

-- 3. The webhook outbox (executor/daemon/webhook.h). The executor inserts a row
-- in the transaction that commits a result whose request named a
-- callback_url, then schedules the delivery in Redis (gavel:webhooks). The
-- row says which attempt is next and when it is due; the delivery process
-- keeps it in step with Redis in the transaction that records each attempt,
-- and deletes it when the webhook is done with (delivered, refused, out of
-- attempts, submission gone). A row long past due is one Redis lost (the
-- executor died between COMMIT and ZADD, or Redis was flushed): the
-- delivery process schedules it again (gavel_webhook_outbox_due).
CREATE TABLE webhook_outbox (
	tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	submission_id text NOT NULL CHECK (submission_id ~ '^[A-Za-z0-9_-]{16,64}$'),
	attempt       integer NOT NULL DEFAULT 1 CHECK (attempt BETWEEN 1 AND 100),
	due_at        timestamptz NOT NULL DEFAULT now(),
	created_at    timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (tenant_id, submission_id)
);
CREATE INDEX webhook_outbox_due_idx ON webhook_outbox (due_at);
ALTER TABLE webhook_outbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_outbox
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_outbox TO gavel_service;

-- Outbox rows due more than older_than_ms ago, oldest first, at most lim,
-- across tenants: the delivery process runs as gavel_service, which
-- row-level security shows no tenant until one is set. Ids and the attempt
-- only (as gavel_unfinished_submissions shows ids).
CREATE FUNCTION gavel_webhook_outbox_due(older_than_ms integer, lim integer)
RETURNS TABLE (tenant_id uuid, submission_id text, attempt integer)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
	SELECT o.tenant_id, o.submission_id, o.attempt FROM webhook_outbox o
	 WHERE o.due_at < now() - make_interval(secs => greatest(older_than_ms, 0) / 1000.0)
	 ORDER BY o.due_at LIMIT least(greatest(lim, 0), 1000)
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_webhook_outbox_due(integer, integer) SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_webhook_outbox_due(integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_webhook_outbox_due(integer, integer) TO gavel_service;

-- Which API made a submission: a webhook has the shape of that API's
-- submission (Judge0's callbacks are Judge0 submissions). NULL: native.
ALTER TABLE submissions ADD COLUMN api text CHECK (api IS NULL OR api IN ('native', 'judge0', 'piston'));
