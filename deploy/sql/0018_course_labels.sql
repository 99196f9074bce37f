-- Course labels of a submission (classroom autograding): who submitted
-- (student) for which assignment, opaque strings of the tenant's own (at
-- most 128 bytes, no control characters: checked by the frontend, bounded
-- here), taken from the stored request by the frontend's INSERT and read
-- back by GET /v1/assignments/{name}/grades (frontend/api_grades.c). The
-- rows keep their row-level security: a tenant sees only its own labels.
ALTER TABLE submissions
	ADD COLUMN student text CHECK (octet_length(student) BETWEEN 1 AND 128),
	ADD COLUMN assignment text CHECK (octet_length(assignment) BETWEEN 1 AND 128);
CREATE INDEX submissions_assignment_idx ON submissions (tenant_id, assignment, student, created_at)
	WHERE assignment IS NOT NULL;
GRANT INSERT (student, assignment) ON submissions TO gavel_frontend;
