#!/usr/bin/env bash
# The queue → scheduler → executor flow against real PostgreSQL, Redis and
# runsc, without the frontend: submissions are inserted into PostgreSQL and
# enqueued with redis-cli exactly as common/queue.h says the frontend does.
# Two tenants, two schedulers (leader + standby), two executors.
#
#   1. 30 mixed submissions (python3/c; AC, WA, RE, CE, TLE, plain runs)
#      reach their verdicts; none lost, none recorded twice.
#   2. kill -9 of an executor in the middle of jobs: every job still ends
#      with exactly one result; the node comes back and hands back what it
#      held.
#   3. kill -9 of the leader scheduler: the standby takes the lock and work
#      keeps flowing.
#   Between 1 and 2: a token for a finished and for a missing submission in
#   a node queue (a late duplicate) is acknowledged without running
#   anything or touching the finished row.
#
# Uses GAVEL_DATABASE_URL / GAVEL_<DAEMON>_DATABASE_URL / GAVEL_REDIS_URL from
# tests/lib/services.sh when set (tests/run.sh), else starts its own. Needs
# root (runsc, cgroups). Prints TAP. Every process it starts is stopped on
# exit.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..14"
. tests/lib/tap.sh

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
command -v psql >/dev/null || bail "psql missing"
command -v redis-cli >/dev/null || bail "redis-cli missing"

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup svc-flow

TA=$(sql -c "INSERT INTO tenants (name) VALUES ('svc-flow-a-$$') RETURNING id" | head -n1)
TB=$(sql -c "INSERT INTO tenants (name) VALUES ('svc-flow-b-$$') RETURNING id" | head -n1)
[ -n "$TA" ] && [ -n "$TB" ] || bail "could not create tenants"
rc HSET "gavel:tenantcfg:$TA" weight 2 max_running 4 >/dev/null

export GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=4s GAVEL_SCHEDULER_LEADER_LOCK_TTL=3s \
	GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_SCHEDULER_RECONCILE_INTERVAL=3s \
	GAVEL_SCHEDULER_RECONCILE_MIN_AGE=2s GAVEL_LOG_LEVEL=info

start_sched() { # instance
	GAVEL_SCHEDULER_INSTANCE=$1 "${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/$1.log" 2>&1 </dev/null &
	PIDS+=($!)
	eval "PID_$1=$!"
}
start_exec() { # node
	GAVEL_EXECUTOR_NODE_NAME=$1 GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
		GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
		"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" >>"$TMP/$1.log" 2>&1 </dev/null &
	PIDS+=($!)
	eval "PID_$1=$!"
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
registered() { # node: registered; bails out when the daemon exited
	local pid_var=PID_$1
	if ! kill -0 "${!pid_var}" 2>/dev/null; then
		tail -n 20 "$TMP/$1.log" >&2
		bail "$1 exited"
	fi
	[ "$(rc SISMEMBER gavel:executors "$1")" = 1 ]
}

start_sched schedA
sleep 0.5
start_sched schedB
start_exec n1
start_exec n2
if ! wait_for 90 registered n1 || ! wait_for 30 registered n2; then
	tail -n 20 "$TMP"/n1.log "$TMP"/n2.log >&2
	bail "executors did not register"
fi
leader_of() { rc GET gavel:sched:lock | cut -d: -f1; }
check "one scheduler leads, the other stands by" wait_for 10 bash -c "[ -n \"\$(redis_cli \"\$GAVEL_REDIS_URL\" GET gavel:sched:lock)\" ]"

# ---- submissions ----
SEQ=0
declare -A WANT TENANT
RUNTAG=$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
# submit TENANT LANGUAGE WANT REQUEST_JSON
submit() {
	local tid=$1 lang=$2 want=$3 req=$4 id
	SEQ=$((SEQ + 1))
	id=$(printf 'svcflow%s%05d' "$RUNTAG" "$SEQ")
	WANT[$id]=$want
	TENANT[$id]=$tid
	# COPY's text format reads backslashes as escapes: double them.
	printf '%s\t%s\t%s\t%s\n' "$id" "$tid" "$lang" "${req//\\/\\\\}" >>"$TMP/batch.tsv"
}
flush_batch() { # insert the batch in one transaction, then enqueue each
	[ -s "$TMP/batch.tsv" ] || return 0
	sql >/dev/null <<-EOF || bail "insert failed"
		CREATE TEMP TABLE b (id text, tid uuid, lang text, req jsonb);
		\\copy b FROM '$TMP/batch.tsv'
		INSERT INTO submissions (id, tenant_id, language, source, request)
		SELECT id, tid, lang, convert_to(req->'files'->0->>'content', 'UTF8'), req FROM b;
	EOF
	local id tid lang req
	while IFS=$'\t' read -r id tid lang req; do
		rc EVAL "redis.call('RPUSH', KEYS[1], ARGV[1]); redis.call('SADD', KEYS[2], ARGV[2])" 2 \
			"gavel:tq:$tid" gavel:backlog "$id" "$tid" >/dev/null
	done <"$TMP/batch.tsv"
	: >"$TMP/batch.tsv"
}
TESTS='[{"input":"1 2\n","expected":"3\n"},{"input":"5 5\n","expected":"10"}]'
py_sum='import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)'
req_tests() { printf '{"language":"%s","files":[{"name":"%s","content":"%s"}],"tests":%s%s}' "$1" "$2" "$3" "$TESTS" "${4:-}"; }
req_run() { printf '{"language":"%s","files":[{"name":"%s","content":"%s"}],"stdin":"%s","return_output":true}' "$1" "$2" "$3" "$4"; }

make_mix() { # count
	local i t
	for ((i = 0; i < $1; i++)); do
		t=$TA
		[ $((i % 2)) -eq 1 ] && t=$TB
		case $((i % 10)) in
		0 | 1 | 2) submit "$t" python3 AC "$(req_tests python3 a.py "$py_sum")" ;;
		3) submit "$t" python3 WA "$(req_tests python3 a.py 'print(0)')" ;;
		4) submit "$t" python3 RE "$(req_tests python3 a.py 'raise SystemExit(3)')" ;;
		5) submit "$t" c CE "$(req_tests c a.c 'int main( {')" ;;
		6) submit "$t" c AC "$(req_tests c a.c '#include <stdio.h>\nint main(void){int a,b;if(scanf(\"%d %d\",&a,&b)!=2)return 1;printf(\"%d\\n\",a+b);return 0;}')" ;;
		7) submit "$t" python3 AC "$(req_run python3 a.py 'print(input()[::-1])' 'abc\n')" ;;
		8) submit "$t" python3 TLE "$(req_tests python3 a.py 'while True: pass' ',"limits":{"time_ms":300}')" ;;
		9) submit "$t" c AC "$(req_run c a.c '#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}' '')" ;;
		esac
	done
}

all_done() { # ids...
	local list
	list=$(printf "'%s'," "$@")
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE id IN (${list%,}) AND status <> 'done'")" = 0 ]
}
# Verdicts as expected, results present, exactly one sandbox.finished audit
# record per submission (the audit record is written only by the write that
# recorded the result, so two means two results).
verify() { # ids...
	local list bad
	list=$(printf "'%s'," "$@")
	sql -c "SELECT s.id, s.verdict, s.result IS NOT NULL, s.finished_at IS NOT NULL,
		(SELECT count(*) FROM audit_log a WHERE a.object = s.id AND a.action = 'sandbox.finished')
		FROM submissions s WHERE s.id IN (${list%,})" >"$TMP/verify.txt"
	bad=0
	local id v res fin audits
	while IFS='|' read -r id v res fin audits; do
		if [ "$v" != "${WANT[$id]}" ] || [ "$res" != t ] || [ "$fin" != t ] || [ "$audits" != 1 ]; then
			echo "# $id: verdict $v (want ${WANT[$id]}), result $res, finished $fin, audit records $audits" >&2
			sql -c "SELECT left(result::text, 400) FROM submissions WHERE id = '$id'" | sed 's/^/#   /' >&2
			bad=1
		fi
	done <"$TMP/verify.txt"
	[ "$(wc -l <"$TMP/verify.txt")" -eq $# ] || { echo "# rows: $(wc -l <"$TMP/verify.txt") of $#" >&2; bad=1; }
	return $bad
}

: >"$TMP/batch.tsv"
make_mix 30
PHASE1=("${!WANT[@]}")
t0=$(date +%s)
flush_batch
if wait_for 150 all_done "${PHASE1[@]}"; then
	ok "30 submissions of 2 tenants finished in $(($(date +%s) - t0)) s"
else
	notok "30 submissions of 2 tenants finished (timed out)"
	tail -n 15 "$TMP"/n1.log "$TMP"/n2.log "$TMP"/schedA.log >&2
fi
check "every verdict as expected, one result and one audit record each" verify "${PHASE1[@]}"
stdout=$(sql -c "SELECT result->>'stdout' FROM submissions WHERE request->>'stdin' = 'abc
' LIMIT 1")
check "plain run returns its output" [ "$stdout" = "cba" ]
nodes=$(sql -c "SELECT count(DISTINCT node) FROM submissions WHERE node IN ('n1', 'n2')")
check "both executors took work" [ "$nodes" = 2 ]
# The result commits before the executor acknowledges the job in Redis, so
# the last acknowledgements may trail the last result by a moment.
drained() {
	[ "$(redis_cli "$GAVEL_REDIS_URL" EVAL "return #redis.call('KEYS','gavel:tq:*') + redis.call('LLEN','gavel:inflight:n1') + redis.call('LLEN','gavel:inflight:n2') + redis.call('HLEN','gavel:attempts')" 0)" = 0 ]
}
check "queues drained, nothing in flight" wait_for 10 drained

# ---- a late duplicate token: nothing runs, the finished row stays ----
SID0=${PHASE1[0]}
row0() { sql -c "SELECT status, verdict, attempts, finished_at, node FROM submissions WHERE id = '$SID0'"; }
before=$(row0)
T0=$(sql -c "SELECT tenant_id FROM submissions WHERE id = '$SID0'")
rc RPUSH gavel:nq:n2 "$T0:$SID0:0" "$T0:missingsubmission0001:0" >/dev/null
stale_acked() {
	[ "$(redis_cli "$GAVEL_REDIS_URL" EVAL "return redis.call('LLEN','gavel:nq:n2') + redis.call('LLEN','gavel:inflight:n2')" 0)" = 0 ] &&
		grep -q 'nothing to run (status done)' "$TMP/n2.log" && grep -q 'nothing to run (status missing)' "$TMP/n2.log"
}
check_detail() { printf 'before: %s / after: %s / %s' "$before" "$(row0)" "$(tail -n 3 "$TMP/n2.log" | tr '\n' ' ')"; }
check "stale tokens acknowledged without a run; the finished row unchanged" \
	eval 'wait_for 15 stale_acked && [ "$(row0)" = "$before" ]'
unset -f check_detail

# ---- kill -9 an executor in the middle of jobs ----
for ((i = 0; i < 10; i++)); do
	t=$TA
	[ $((i % 2)) -eq 1 ] && t=$TB
	submit "$t" python3 AC "$(req_tests python3 a.py 'import time\ntime.sleep(0.5)\nimport sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)')"
done
mapfile -t PHASE2 < <(cut -f1 "$TMP/batch.tsv")
flush_batch
if wait_for 60 bash -c "[ \"\$(redis_cli \"\$GAVEL_REDIS_URL\" LLEN gavel:inflight:n1)\" -ge 1 ]"; then
	sleep 0.5
	kill -KILL -- "-$PID_n1" 2>/dev/null
	ok "executor n1 killed with -9 while running a job"
else
	notok "executor n1 never had a job in flight"
fi
if wait_for 120 all_done "${PHASE2[@]}"; then ok "all 10 jobs finished after the kill"; else notok "all 10 jobs finished after the kill"; fi
check "exactly one result and audit record per job after the kill" verify "${PHASE2[@]}"
check "the scheduler noticed the dead node" grep -q "stopped heartbeating" "$TMP/schedA.log" "$TMP/schedB.log"
start_exec n1
check "n1 comes back and registers" wait_for 90 registered n1

# ---- kill -9 the leader scheduler ----
old=$(leader_of)
if [ "$old" = schedA ]; then kill -KILL -- "-$PID_schedA"; else kill -KILL -- "-$PID_schedB"; fi
check "the standby took the lock after the leader died" wait_for 10 bash -c "l=\$(redis_cli \"\$GAVEL_REDIS_URL\" GET gavel:sched:lock); [ -n \"\$l\" ] && [ \"\${l%%:*}\" != '$old' ]"
make_mix 6
mapfile -t PHASE3 < <(cut -f1 "$TMP/batch.tsv")
flush_batch
if wait_for 90 all_done "${PHASE3[@]}" && verify "${PHASE3[@]}"; then
	ok "work flows under the new leader"
else
	notok "work flows under the new leader"
fi
exit 0
