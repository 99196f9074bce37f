-- What the frontend needs beyond 0001/0002: Judge0's
-- DELETE /submissions/{token} removes a finished submission of the
-- caller's tenant. Row-level security (0002) still confines the service
-- role's DELETE to the tenant set for the transaction, and the frontend's
-- WHERE clause names the tenant as well. Audit records stay append-only
-- (0002 revokes DELETE on audit_log).
GRANT DELETE ON submissions TO gavel_service;
