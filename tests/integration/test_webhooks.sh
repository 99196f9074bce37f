#!/usr/bin/env bash
# Webhooks (executor/daemon/webhook.h) against real PostgreSQL, Redis, runsc, a
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
# Also: the delivery process runs as nobody (65534) with no capabilities
# and no_new_privs; a submission made through the Judge0 API is called
# back with a PUT of Judge0's body (base64, default fields); and a webhook
# whose Redis item is lost (the delay queue deleted while its first attempt
# is in flight) is picked up again from the PostgreSQL outbox and delivered.
#
# Uses GAVEL_DATABASE_URL / GAVEL_<DAEMON>_DATABASE_URL / GAVEL_REDIS_URL
# when set (tests/run.sh), else starts its own services. Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..20"
. tests/lib/tap.sh

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
import base64, http.server, json, sys, threading, time
log = open(sys.argv[1], "a")
seen = {}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        self.do_POST()
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:
            seen[self.path] = seen.get(self.path, 0) + 1
            count = seen[self.path]
            log.write(json.dumps({"path": self.path, "n": count, "method": self.command,
                                  "sig": self.headers.get("X-Gavel-Signature"),
                                  "delivery": self.headers.get("X-Gavel-Delivery"),
                                  "ctype": self.headers.get("Content-Type"),
                                  "body": base64.b64encode(body).decode()}) + "\n")
            log.flush()
        code = 500 if self.path.startswith(("/flaky/", "/slow/")) and count == 1 else 200
        if self.path.startswith("/slow/") and count == 1:
            time.sleep(2)
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
"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/sched.log" 2>&1 </dev/null &
PIDS+=($!)
start_exec() { # allow_loopback
	GAVEL_EXECUTOR_NODE_NAME=whk GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
		GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" GAVEL_EXECUTOR_WEBHOOK_ALLOW_LOOPBACK=$1 \
		GAVEL_EXECUTOR_WEBHOOK_BACKOFF=300ms GAVEL_EXECUTOR_WEBHOOK_MAX_ATTEMPTS=3 \
		GAVEL_EXECUTOR_WEBHOOK_TIMEOUT=3s GAVEL_EXECUTOR_WEBHOOK_RECOVER_AFTER=1s \
		"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" >>"$TMP/exec.log" 2>&1 </dev/null &
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
submit() { # id callback_url [api]
	local id=$1 req
	req=$(printf '{"language":"python3","files":[{"name":"a.py","content":"print(6*7)"}],"return_output":true,"callback_url":"%s"}' "$2")
	sql -c "INSERT INTO submissions (id, tenant_id, language, source, request, api)
		VALUES ('$id', '$TID', 'python3', 'x', '$req'::jsonb, ${3:-NULL})" >/dev/null || bail "insert failed"
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
    if r["method"] != "POST":
        sys.exit("method %r" % r["method"])
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
svc_rows=$(psql "$GAVEL_EXECUTOR_DATABASE_URL" -X -q -t -A -c "SELECT count(*) FROM webhook_deliveries" 2>&1)
check "the executor's role only appends delivery attempts: reading them is refused" \
	grep -q "permission denied" <<<"$svc_rows"
check "the queue is empty once delivered" [ "$(rc ZCARD gavel:webhooks)" = 0 ]

# ---- the delivery process: nobody, no capabilities, no_new_privs ----
WH_PID=
for p in /proc/[0-9]*; do
	[ "$(cat "$p/comm" 2>/dev/null)" = gavel-webhook ] || continue
	[ "$(awk '/^PPid:/ {print $2}' "$p/status" 2>/dev/null)" = "$EXEC_PID" ] && WH_PID=${p#/proc/}
done
whstatus() { awk -v k="$1:" '$1 == k {$1 = ""; print substr($0, 2)}' "/proc/$WH_PID/status" 2>/dev/null; }
zeros=$(printf '0%.0s' $(seq 1 80))
if [ -n "$WH_PID" ] && [ "$(whstatus Uid)" = "65534 65534 65534 65534" ] && [ "$(whstatus Gid)" = "65534 65534 65534 65534" ] &&
	[ -z "$(whstatus Groups)" ] && [ "$(whstatus NoNewPrivs)" = 1 ] &&
	[ "$(whstatus CapInh)$(whstatus CapPrm)$(whstatus CapEff)$(whstatus CapBnd)$(whstatus CapAmb)" = "$zeros" ]; then
	ok "the delivery process runs as 65534:65534, no groups, no capabilities, no_new_privs"
else
	notok "the delivery process runs as 65534:65534, no groups, no capabilities, no_new_privs"
	[ -n "$WH_PID" ] && grep -E '^(Uid|Gid|Groups|NoNewPrivs|Cap)' "/proc/$WH_PID/status" | sed 's/^/# /'
fi

# ---- Judge0: a PUT of Judge0's own body ----
S6=$(sid 6)
submit "$S6" "http://127.0.0.1:$HPORT/j0/6" "'judge0'"
wait_for 120 has_attempts "$S6" 1
cat >"$TMP/j0verify.py" <<'EOF'
import base64, hashlib, hmac, json, sys
reqs = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if r["path"] == sys.argv[3]]
if len(reqs) != 1:
    sys.exit("%d requests" % len(reqs))
r = reqs[0]
body = base64.b64decode(r["body"])
want = "sha256=" + hmac.new(bytes.fromhex(sys.argv[2]), body, hashlib.sha256).hexdigest()
if not hmac.compare_digest(want, r["sig"] or ""):
    sys.exit("bad signature")
if r["method"] != "PUT" or r["ctype"] != "application/json":
    sys.exit("method %r type %r" % (r["method"], r["ctype"]))
b = json.loads(body)
if sorted(b) != ["compile_output", "memory", "message", "status", "stderr", "stdout", "time", "token"]:
    sys.exit("fields %r" % sorted(b))
if b["token"] != sys.argv[4] or b["status"] != {"id": 3, "description": "Accepted"}:
    sys.exit("body %r" % b)
if base64.b64decode(b["stdout"]) != b"42\n" or not isinstance(b["time"], str):
    sys.exit("stdout/time %r" % b)
EOF
check "a Judge0 submission is called back with a signed PUT of Judge0's body (base64, default fields)" \
	python3 "$TMP/j0verify.py" "$TMP/requests.jsonl" "$SECRET" "/j0/6" "$S6"

# ---- the outbox: a webhook Redis lost is delivered from PostgreSQL ----
S7=$(sid 7)
submit "$S7" "http://127.0.0.1:$HPORT/slow/7"
slow_seen() { grep -q '"path": "/slow/7"' "$TMP/requests.jsonl"; }
wait_for 120 slow_seen
# The first attempt is in flight (the receiver holds it 2 s, then answers
# 500), its item leased in Redis. Lose it, as a Redis flush would, or a
# crash between the result's COMMIT and the ZADD.
rc DEL gavel:webhooks >/dev/null
wait_for 60 has_attempts "$S7" 2
check "a webhook whose Redis item was lost is recorded failed (500), then delivered from the outbox" \
	[ "$(sql -c "SELECT string_agg(attempt || ':' || outcome || ':' || coalesce(status_code, 0), ',' ORDER BY attempt) FROM webhook_deliveries WHERE submission_id = '$S7'")" = "1:failed:500,2:delivered:200" ]
check "the executor logged that it rescheduled it from the outbox" \
	grep -q "missing from Redis; scheduled again from the outbox" "$TMP/exec.log"
check "the outbox is empty once every webhook is done with" [ "$(sql -c "SELECT count(*) FROM webhook_outbox")" = 0 ]

# ---- a job the scheduler finishes as IE (attempts exhausted) ----
# Three lost attempts, as an executor killed three times under the job
# leaves them: the scheduler finishes it as IE at the head of the queue,
# without an executor, and its callback goes out like an executor's.
S8=$(sid 8)
rc HSET gavel:attempts "$S8" 3 >/dev/null
submit "$S8" "http://127.0.0.1:$HPORT/ie/8"
S9=$(sid 9)
rc HSET gavel:attempts "$S9" 3 >/dev/null
submit "$S9" "http://127.0.0.1:$HPORT/ie-j0/9" "'judge0'"
wait_for 60 has_attempts "$S8" 1
wait_for 30 has_attempts "$S9" 1
cat >"$TMP/ieverify.py" <<'EOF2'
import base64, hashlib, hmac, json, sys
reqs_file, secret, path, sid, flavour = sys.argv[1:6]
reqs = [r for r in (json.loads(l) for l in open(reqs_file) if l.strip()) if r["path"] == path]
if len(reqs) != 1:
    sys.exit("%d requests on %s" % (len(reqs), path))
r = reqs[0]
body = base64.b64decode(r["body"])
want = "sha256=" + hmac.new(bytes.fromhex(secret), body, hashlib.sha256).hexdigest()
if not hmac.compare_digest(want, r["sig"] or ""):
    sys.exit("bad signature")
b = json.loads(body)
if flavour == "native":
    if r["method"] != "POST" or sorted(b) != ["created_at", "finished_at", "id", "language", "result", "status", "verdict"]:
        sys.exit("method %r fields %r" % (r["method"], sorted(b)))
    if b["id"] != sid or b["status"] != "done" or b["verdict"] != "IE" or "3 attempts" not in b["result"]["message"]:
        sys.exit("body %r" % b)
else:
    if r["method"] != "PUT" or sorted(b) != ["compile_output", "memory", "message", "status", "stderr", "stdout", "time", "token"]:
        sys.exit("method %r fields %r" % (r["method"], sorted(b)))
    if b["token"] != sid or b["status"] != {"id": 13, "description": "Internal Error"}:
        sys.exit("body %r" % b)
EOF2
ie_ok() { python3 "$TMP/ieverify.py" "$TMP/requests.jsonl" "$SECRET" "$@" >>"$TMP/ieverify.log" 2>&1 || { sed 's/^/# /' "$TMP/ieverify.log"; return 1; }; }
check "a job the scheduler finishes as IE (3 attempts) is called back once: signed POST of the native body, verdict IE" \
	ie_ok "/ie/8" "$S8" native
check "... and through the Judge0 API: signed PUT of Judge0's body, status 13 Internal Error" \
	ie_ok "/ie-j0/9" "$S9" judge0
ie_by_scheduler() {
	[ "$(grep -c "finished as IE: the job failed 3 attempts" "$TMP/sched.log")" = 2 ] &&
		[ "$(sql -c "SELECT count(*) FROM audit_log WHERE object IN ('$S8', '$S9') AND action = 'sandbox.finished'")" = 0 ] &&
		[ "$(sql -c "SELECT string_agg(attempt || ':' || outcome, ',') FROM webhook_deliveries WHERE submission_id IN ('$S8', '$S9')")" = "1:delivered,1:delivered" ]
}
check "the scheduler finished both (no sandbox ran them); each delivered at the first attempt" ie_by_scheduler

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
