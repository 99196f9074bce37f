#!/usr/bin/env bash
# Webhooks (executor/webhook.h) against real PostgreSQL, Redis, runsc, a
# scheduler and an executor, with a python3 http.server receiver on
# 127.0.0.1 that records every request.
#
# Loopback is refused by design, so the first executor runs with the
# test-only executor.webhook_allow_loopback; the receiver answers 500 once
# on /flaky/ paths. Checked: the body is the submission's native shape, the
# X-Gavel-Signature verifies with the tenant's secret (`gavel tenant
# webhook-secret`, made by the executor for a tenant that had none), a 500 is
# retried and both attempts are recorded, row-level security hides the
# records from a transaction without a tenant. Then the executor is
# restarted without the flag: callbacks to 127.0.0.1, localhost and the
# metadata address are refused, recorded as refused, never sent.
#
# Uses GAVEL_DATABASE_URL / GAVEL_SERVICE_DATABASE_URL / GAVEL_REDIS_URL
# when set (tests/run.sh), else starts its own services. Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..12"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # description command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else notok "$d"; fi
}
bail() { echo "Bail out! $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli python3; do command -v $c >/dev/null || bail "$c missing"; done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup whk-test

# A tenant made like one from before migration 0006: no secret yet.
TID=$(sql -c "INSERT INTO tenants (name) VALUES ('$TAG') RETURNING id" | head -n1)
[ -n "$TID" ] || bail "could not create the tenant"
check "a tenant inserted without a secret has none yet" \
	[ "$(sql -c "SELECT webhook_secret IS NULL FROM tenants WHERE id = '$TID'")" = t ]
"$BUILD/gavel" tenant create "$TAG-cli" >/dev/null 2>"$TMP/create.log" || { cat "$TMP/create.log" >&2; bail "gavel tenant create failed"; }
check "gavel tenant create makes a 32-byte secret" \
	[ "$(sql -c "SELECT length(webhook_secret) FROM tenants WHERE name = '$TAG-cli'")" = 32 ]

# ---- the receiver ----
cat >"$TMP/receiver.py" <<'EOF'
import base64, http.server, json, sys, threading
log = open(sys.argv[1], "a")
seen = {}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:
            seen[self.path] = seen.get(self.path, 0) + 1
            count = seen[self.path]
            log.write(json.dumps({"path": self.path, "n": count,
                                  "sig": self.headers.get("X-Gavel-Signature"),
                                  "delivery": self.headers.get("X-Gavel-Delivery"),
                                  "ctype": self.headers.get("Content-Type"),
                                  "body": base64.b64encode(body).decode()}) + "\n")
            log.flush()
        code = 500 if self.path.startswith("/flaky/") and count == 1 else 200
        self.send_response(code)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
EOF
: >"$TMP/requests.jsonl"
setsid python3 "$TMP/receiver.py" "$TMP/requests.jsonl" "$TMP/port" >"$TMP/receiver.log" 2>&1 </dev/null &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
HPORT=$(cat "$TMP/port" 2>/dev/null)
[ -n "$HPORT" ] || bail "the receiver did not start"

# ---- the stack ----
export GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_LOG_LEVEL=info GAVEL_SCHEDULER_INSTANCE=whk
setsid "$BUILD/gavel-scheduler" >>"$TMP/sched.log" 2>&1 </dev/null &
PIDS+=($!)
start_exec() { # allow_loopback
	GAVEL_EXECUTOR_NODE_NAME=whk GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
		GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" GAVEL_EXECUTOR_WEBHOOK_ALLOW_LOOPBACK=$1 \
		GAVEL_EXECUTOR_WEBHOOK_BACKOFF=300ms GAVEL_EXECUTOR_WEBHOOK_MAX_ATTEMPTS=3 \
		GAVEL_EXECUTOR_WEBHOOK_TIMEOUT=3s \
		setsid "$BUILD/gavel-executor" >>"$TMP/exec.log" 2>&1 </dev/null &
	EXEC_PID=$!
	PIDS+=($EXEC_PID)
}
wait_for() { # seconds command...
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
registered() {
	kill -0 "$EXEC_PID" 2>/dev/null || { tail -n 20 "$TMP/exec.log" >&2; bail "the executor exited"; }
	[ "$(rc SISMEMBER gavel:executors whk)" = 1 ]
}
start_exec true
wait_for 90 registered || { tail -n 20 "$TMP/exec.log" >&2; bail "the executor did not register"; }

RUNTAG=$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
sid() { printf 'webhook%s%05d' "$RUNTAG" "$1"; }
submit() { # id callback_url
	local id=$1 req
	req=$(printf '{"language":"python3","files":[{"name":"a.py","content":"print(6*7)"}],"return_output":true,"callback_url":"%s"}' "$2")
	sql -c "INSERT INTO submissions (id, tenant_id, language, source, request)
		VALUES ('$id', '$TID', 'python3', 'x', '$req'::jsonb)" >/dev/null || bail "insert failed"
	rc EVAL "redis.call('RPUSH', KEYS[1], ARGV[1]); redis.call('SADD', KEYS[2], ARGV[2])" 2 \
		"gavel:tq:$TID" gavel:backlog "$id" "$TID" >/dev/null
}
attempts() { sql -c "SELECT count(*) FROM webhook_deliveries WHERE submission_id = '$1'"; }
has_attempts() { [ "$(attempts "$1")" -ge "$2" ]; }

S1=$(sid 1)
submit "$S1" "http://127.0.0.1:$HPORT/ok/1"
S2=$(sid 2)
submit "$S2" "http://127.0.0.1:$HPORT/flaky/2"
wait_for 120 has_attempts "$S1" 1
wait_for 60 has_attempts "$S2" 2
SECRET=$("$BUILD/gavel" tenant webhook-secret "$TID" 2>"$TMP/secret.log")

# verify.py REQUESTS SECRET PATH ID: exit 0 when every request on PATH
# carries a valid signature and the body is the finished submission ID.
cat >"$TMP/verify.py" <<'EOF'
import base64, hashlib, hmac, json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
key = bytes.fromhex(sys.argv[2])
mine = [r for r in reqs if r["path"] == sys.argv[3]]
if not mine:
    sys.exit("no request on " + sys.argv[3])
for r in mine:
    body = base64.b64decode(r["body"])
    want = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, r["sig"] or ""):
        sys.exit("bad signature %r" % r["sig"])
    if r["ctype"] != "application/json":
        sys.exit("content type %r" % r["ctype"])
    b = json.loads(body)
    keys = sorted(b)
    if keys != ["created_at", "finished_at", "id", "language", "result", "status", "verdict"]:
        sys.exit("fields %r" % keys)
    if b["id"] != sys.argv[4] or b["status"] != "done" or b["verdict"] != "AC" or b["result"]["stdout"] != "42\n":
        sys.exit("body %r" % b)
print(len(mine))
EOF
check "the executor made the tenant's secret; the CLI shows it (32 bytes)" [ ${#SECRET} -eq 64 ]
check "a callback is POSTed once, with the native body and a valid signature" \
	[ "$(python3 "$TMP/verify.py" "$TMP/requests.jsonl" "$SECRET" "/ok/1" "$S1")" = 1 ]
check "a 500 is retried: two requests, both signed, same body" \
	[ "$(python3 "$TMP/verify.py" "$TMP/requests.jsonl" "$SECRET" "/flaky/2" "$S2")" = 2 ]
check "attempts recorded: 1 delivered (200) for the first" \
	[ "$(sql -c "SELECT string_agg(attempt || ':' || outcome || ':' || coalesce(status_code, 0), ',' ORDER BY attempt) FROM webhook_deliveries WHERE submission_id = '$S1'")" = "1:delivered:200" ]
check "attempts recorded: failed (500) then delivered (200) for the flaky one" \
	[ "$(sql -c "SELECT string_agg(attempt || ':' || outcome || ':' || coalesce(status_code, 0), ',' ORDER BY attempt) FROM webhook_deliveries WHERE submission_id = '$S2'")" = "1:failed:500,2:delivered:200" ]
check "X-Gavel-Delivery names the submission and the attempt" \
	grep -q "\"delivery\": \"$S2.2\"" "$TMP/requests.jsonl"
svc_rows=$(psql "$GAVEL_DATABASE_SERVICE_URL" -X -q -t -A -c "SELECT count(*) FROM webhook_deliveries" 2>&1)
check "row-level security: the service role without a tenant sees no attempts" [ "$svc_rows" = 0 ]
check "the queue is empty once delivered" [ "$(rc ZCARD gavel:webhooks)" = 0 ]

# ---- without the test flag: loopback and the like are refused ----
kill -TERM -- "-$EXEC_PID"
for _ in $(seq 1 100); do kill -0 -- "-$EXEC_PID" 2>/dev/null || break; sleep 0.2; done
start_exec false
wait_for 90 registered || { tail -n 20 "$TMP/exec.log" >&2; bail "the executor did not register again"; }
S3=$(sid 3)
submit "$S3" "http://127.0.0.1:$HPORT/refused/3"
S4=$(sid 4)
submit "$S4" "http://localhost:$HPORT/refused/4"
S5=$(sid 5)
submit "$S5" "http://169.254.169.254/latest/meta-data/"
wait_for 120 has_attempts "$S5" 1
wait_for 30 has_attempts "$S4" 1
wait_for 30 has_attempts "$S3" 1
refused=$(sql -c "SELECT count(*) FROM webhook_deliveries WHERE submission_id IN ('$S3', '$S4', '$S5')
	AND outcome = 'refused' AND attempt = 1 AND status_code IS NULL AND error LIKE 'refused:%'")
reasons=$(sql -c "SELECT string_agg(error, ' | ' ORDER BY submission_id) FROM webhook_deliveries WHERE submission_id IN ('$S3', '$S4', '$S5')")
if [ "$refused" = 3 ] && [ "$(sql -c "SELECT count(*) FROM webhook_deliveries WHERE submission_id IN ('$S3', '$S4', '$S5')")" = 3 ]; then
	ok "loopback, localhost and the metadata address are refused once, recorded as refused"
else
	notok "loopback, localhost and the metadata address are refused once, recorded as refused"
	echo "# $reasons" >&2
fi
check "nothing was sent to a refused callback" bash -c "! grep -q '/refused/' '$TMP/requests.jsonl'"
echo "# reasons: $reasons"
exit 0
