-- The frontend checks a tenant's max_queued inside every INSERT by counting
-- the tenant's queued submissions; without an index on exactly that, the
-- count scans the tenant's rows and grows with the queue.
CREATE INDEX IF NOT EXISTS submissions_tenant_queued_idx ON submissions (tenant_id) WHERE status = 'queued';
