-- What the queue, scheduler and executor need of a submission row: the
-- normalized request (common/jobspec.h) that the executor runs, where and
-- when it ran, and how many times it was handed out. IF NOT EXISTS keeps
-- this safe next to 0003 (frontend), which may add `request` too.

ALTER TABLE submissions ADD COLUMN IF NOT EXISTS request jsonb;
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS started_at timestamptz;
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS node text CHECK (node IS NULL OR length(node) <= 64);
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0;
