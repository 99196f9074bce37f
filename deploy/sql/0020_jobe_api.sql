-- Submissions made through Jobe's REST API (frontend/jobe.c: Moodle's
-- CodeRunner) say so, as those of the other APIs do.
ALTER TABLE submissions DROP CONSTRAINT IF EXISTS submissions_api_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_api_check
	CHECK (api IS NULL OR api IN ('native', 'judge0', 'piston', 'jobe'));
