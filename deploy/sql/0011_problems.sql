-- Problems as a service (issue 6): problem packages a tenant uploads, their
-- versions, their files stored once by content hash, and the problem and
-- version a submission was judged against.
--
-- The flow: the frontend stores the uploaded archive as a new version with
-- status 'pending' (the archive is attacker bytes: the frontend never
-- unpacks it). An executor claims the version through
-- gavel_problem_import_claim (a lease, so that a node that dies mid-import
-- leaves it to another one after the lease), unpacks and validates it in a
-- sandbox (executor/problems/problem_import.h), stores its files by hash and
-- marks the version 'ready' or 'rejected' with the message. PostgreSQL is the
-- queue: nothing about an import lives only in Redis.
--
-- Deduplication is per tenant: a file is stored once per (tenant, sha256).
-- Two problems of one tenant sharing a file store it once; two tenants
-- never share a row, so no upload or timing can tell a tenant whether
-- another tenant holds some content, and row-level security covers the
-- blobs like every other tenant table.

CREATE TABLE problems (
	id              text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{16,64}$'),
	tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	created_at      timestamptz NOT NULL DEFAULT now(),
	updated_at      timestamptz NOT NULL DEFAULT now(),
	-- DELETE hides a problem: its versions, files and the submissions
	-- judged against it stay.
	deleted_at      timestamptz,
	latest_version  integer NOT NULL DEFAULT 0 CHECK (latest_version >= 0),
	-- The newest version that is 'ready'; what a submission without an
	-- explicit version is judged against. NULL until one is ready.
	current_version integer CHECK (current_version IS NULL OR current_version >= 1),
	-- Which tests a submitter may see (frontend/api_problems.c):
	-- {"sample": [...], "secret": [...]} with items of input, expected,
	-- output, diff.
	feedback        jsonb NOT NULL
	                DEFAULT '{"sample": ["input", "expected", "output", "diff"], "secret": []}'
	                CHECK (jsonb_typeof(feedback) = 'object' AND length(feedback::text) <= 1024),
	UNIQUE (tenant_id, id)
);
CREATE INDEX problems_tenant_created_idx ON problems (tenant_id, created_at DESC);

CREATE TABLE problem_versions (
	tenant_id      uuid NOT NULL,
	problem_id     text NOT NULL,
	version        integer NOT NULL CHECK (version >= 1),
	status         text NOT NULL DEFAULT 'pending'
	               CHECK (status IN ('pending', 'ready', 'rejected', 'failed')),
	-- rejected: what is wrong with the package (the entry or the field);
	-- failed: what went wrong on our side after the last attempt.
	message        text CHECK (message IS NULL OR length(message) <= 16384),
	created_at     timestamptz NOT NULL DEFAULT now(),
	imported_at    timestamptz,
	-- The upload while it waits for its import; cleared afterwards.
	archive        bytea,
	archive_bytes  bigint NOT NULL CHECK (archive_bytes >= 0),
	archive_sha256 bytea NOT NULL CHECK (length(archive_sha256) = 32),
	-- The import lease (gavel_problem_import_claim).
	attempts       integer NOT NULL DEFAULT 0,
	claimed_by     text CHECK (claimed_by IS NULL OR length(claimed_by) <= 64),
	claimed_until  timestamptz,
	-- What the package says, once imported.
	name           text CHECK (name IS NULL OR length(name) <= 1024),
	type           text CHECK (type IS NULL OR type IN ('pass-fail', 'scoring')),
	interactive    boolean,
	custom_validation boolean,
	time_limit_ms  integer CHECK (time_limit_ms IS NULL OR time_limit_ms > 0),
	memory_mb      integer CHECK (memory_mb IS NULL OR memory_mb > 0),
	output_mb      integer CHECK (output_mb IS NULL OR output_mb > 0),
	-- {"samples": n, "secret": n, "files": n, "bytes": n, "warnings": [...]}
	summary        jsonb CHECK (summary IS NULL OR length(summary::text) <= 65536),
	PRIMARY KEY (tenant_id, problem_id, version),
	FOREIGN KEY (tenant_id, problem_id) REFERENCES problems (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX problem_versions_pending_idx ON problem_versions (created_at) WHERE status = 'pending';

-- Content by hash, once per tenant.
CREATE TABLE problem_blobs (
	tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	sha256     bytea NOT NULL CHECK (length(sha256) = 32),
	size       bigint NOT NULL CHECK (size >= 0),
	content    bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (tenant_id, sha256),
	CHECK (length(content) = size)
);

-- A version's files: package-relative path -> content hash.
CREATE TABLE problem_files (
	tenant_id  uuid NOT NULL,
	problem_id text NOT NULL,
	version    integer NOT NULL,
	path       text NOT NULL CHECK (length(path) BETWEEN 1 AND 4096 AND path !~ '(^/|(^|/)\.\.?(/|$))'),
	sha256     bytea NOT NULL,
	size       bigint NOT NULL CHECK (size >= 0),
	PRIMARY KEY (tenant_id, problem_id, version, path),
	FOREIGN KEY (tenant_id, problem_id, version)
		REFERENCES problem_versions (tenant_id, problem_id, version) ON DELETE CASCADE,
	FOREIGN KEY (tenant_id, sha256) REFERENCES problem_blobs (tenant_id, sha256)
);

-- The problem and version a submission was judged against. The foreign
-- key names the tenant too: a submission can only point at its own
-- tenant's problem.
ALTER TABLE submissions
	ADD COLUMN problem_id text,
	ADD COLUMN problem_version integer,
	ADD CONSTRAINT submissions_problem_fk FOREIGN KEY (tenant_id, problem_id, problem_version)
		REFERENCES problem_versions (tenant_id, problem_id, version),
	ADD CONSTRAINT submissions_problem_both CHECK ((problem_id IS NULL) = (problem_version IS NULL));
CREATE INDEX submissions_problem_idx ON submissions (tenant_id, problem_id) WHERE problem_id IS NOT NULL;

ALTER TABLE problems ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON problems
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
ALTER TABLE problem_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON problem_versions
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
ALTER TABLE problem_blobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON problem_blobs
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);
ALTER TABLE problem_files ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON problem_files
	USING (tenant_id = NULLIF(current_setting('gavel.tenant_id', true), '')::uuid);

-- Nothing is ever deleted by the service: hiding is an UPDATE, and blobs
-- stay while any version refers to them.
GRANT SELECT, INSERT, UPDATE ON problems, problem_versions TO gavel_service;
GRANT SELECT, INSERT ON problem_blobs, problem_files TO gavel_service;

-- The import queue. The executor runs as gavel_service, which row-level
-- security confines to one tenant per transaction, and must find pending
-- imports of every tenant: this definer function claims the oldest pending
-- version whose lease is free (SKIP LOCKED: executors never wait on each
-- other), takes a lease of lease_ms for node, and returns only its keys and
-- attempt count. The worker then reads the archive in a transaction scoped
-- to that tenant.
CREATE FUNCTION gavel_problem_import_claim(node text, lease_ms integer)
RETURNS TABLE (tenant_id uuid, problem_id text, version integer, attempts integer)
LANGUAGE sql VOLATILE SECURITY DEFINER AS $$
	UPDATE problem_versions v
	   SET claimed_by = left(node, 64),
	       claimed_until = now() + make_interval(secs => greatest(lease_ms, 1000) / 1000.0),
	       attempts = v.attempts + 1
	  FROM (SELECT p.tenant_id, p.problem_id, p.version FROM problem_versions p
		 WHERE p.status = 'pending' AND (p.claimed_until IS NULL OR p.claimed_until < now())
		 ORDER BY p.created_at LIMIT 1 FOR UPDATE SKIP LOCKED) c
	 WHERE v.tenant_id = c.tenant_id AND v.problem_id = c.problem_id AND v.version = c.version
	RETURNING v.tenant_id, v.problem_id, v.version, v.attempts
$$;
DO $$
BEGIN
	EXECUTE format('ALTER FUNCTION %I.gavel_problem_import_claim(text, integer) SET search_path = %I, pg_temp',
		       current_schema(), current_schema());
END
$$;
REVOKE ALL ON FUNCTION gavel_problem_import_claim(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gavel_problem_import_claim(text, integer) TO gavel_service;
