-- Hosted notebook kernels (issue 18; executor/kernels/README.md): a kernel
-- is a job like a submission, so that it goes through the same tenant
-- queue, fair share and executor slots; `kind` tells them apart.
ALTER TABLE submissions
	ADD COLUMN kind text NOT NULL DEFAULT 'submission' CHECK (kind IN ('submission', 'kernel'));
GRANT INSERT (kind) ON submissions TO gavel_frontend;
-- GET /api/kernels lists the tenant's live kernels.
CREATE INDEX submissions_live_kernels_idx ON submissions (tenant_id, created_at)
	WHERE kind = 'kernel' AND status IN ('queued', 'running');

-- Per-tenant kernel budgets, copied into each kernel's request when it is
-- created (the executor never takes limits from a client):
--   max_kernels        kernels queued or running at once (POST over it: 403)
--   kernels_per_minute creations per minute (a token bucket in Redis)
--   kernel_idle_s      culled after this long with no activity and no connection
--   kernel_lifetime_s  ended after this long whatever it does (at most 12 h)
--   kernel_memory_mb   memory of the kernel's sandbox (cgroup)
--   kernel_cpu_pct     CPU quota of the kernel's sandbox, % of one CPU
ALTER TABLE tenant_quotas
	ADD COLUMN max_kernels integer NOT NULL DEFAULT 4 CHECK (max_kernels BETWEEN 0 AND 10000),
	ADD COLUMN kernels_per_minute integer NOT NULL DEFAULT 30 CHECK (kernels_per_minute BETWEEN 1 AND 100000),
	ADD COLUMN kernel_idle_s integer NOT NULL DEFAULT 1200 CHECK (kernel_idle_s BETWEEN 10 AND 43200),
	ADD COLUMN kernel_lifetime_s integer NOT NULL DEFAULT 3600 CHECK (kernel_lifetime_s BETWEEN 10 AND 43200),
	ADD COLUMN kernel_memory_mb integer NOT NULL DEFAULT 1024 CHECK (kernel_memory_mb BETWEEN 64 AND 65536),
	ADD COLUMN kernel_cpu_pct integer NOT NULL DEFAULT 100 CHECK (kernel_cpu_pct BETWEEN 10 AND 6400);
GRANT SELECT (tenant_id, max_kernels, kernels_per_minute, kernel_idle_s, kernel_lifetime_s, kernel_memory_mb,
	      kernel_cpu_pct) ON tenant_quotas TO gavel_frontend;

-- Kernel time and peak memory for billing (executor/kernels/).
ALTER TABLE usage_daily
	ADD COLUMN kernel_ms bigint NOT NULL DEFAULT 0 CHECK (kernel_ms >= 0),
	ADD COLUMN kernel_peak_memory_kb bigint NOT NULL DEFAULT 0 CHECK (kernel_peak_memory_kb >= 0);
GRANT INSERT (kernel_ms, kernel_peak_memory_kb), UPDATE (kernel_ms, kernel_peak_memory_kb) ON usage_daily
	TO gavel_executor;
