#!/usr/bin/env bash
# Service benchmark: the whole stack (PostgreSQL, Redis, gavel-scheduler,
# one gavel-executor with 4 workers, gavel-frontend) started here in a
# temporary folder, every figure printed against a baseline measured in the
# same run (tests/bench/README.md says what each one means). Not part of
# `make test`: timings on a shared machine are noisy.
#
#   tests/bench/bench_service.sh            (as root; BUILD=build by default)
#
# Environment: BUILD, BENCH_LAT_N (50), BENCH_TPUT_N (100), BENCH_CONC (4),
# BENCH_BACKLOG (2000), BENCH_FAIR_N (50), BENCH_WRK_SECONDS (8),
# BENCH_MIGRATIONS (deploy/sql), GAVEL_CONTROL_NICE (-5: the nice value of
# PostgreSQL, Redis, frontend and scheduler, as deploy/local/gavel-local and
# the systemd units give them).
# About 5 minutes on 2 cores.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LAT_N=${BENCH_LAT_N:-50}
TPUT_N=${BENCH_TPUT_N:-100}
CONC=${BENCH_CONC:-4}
BACKLOG=${BENCH_BACKLOG:-2000}
FAIR_N=${BENCH_FAIR_N:-50}
WRK_S=${BENCH_WRK_SECONDS:-8}

die() { echo "bench_service: $*" >&2; exit 1; }
say() { printf '%s\n' "$*"; }
[ "$(id -u)" -eq 0 ] || die "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || die "$BUILD/$b is not built (make BUILD=${BUILD#"$ROOT"/})"
done
for c in curl psql redis-cli python3; do command -v $c >/dev/null || die "$c missing"; done
if ! command -v wrk >/dev/null; then
	say "installing wrk (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1; }
fi
HAVE_WRK=1
command -v wrk >/dev/null || { HAVE_WRK=0; say "wrk unavailable: the HTTP rate figures are skipped"; }
make --no-print-directory -s BUILD="$BUILD" "$BUILD/tests/bench/engine_parallel" >/dev/null ||
	die "could not build $BUILD/tests/bench/engine_parallel"

TMP=$(mktemp -d /tmp/gavel-bench-svc.XXXXXX)
chmod 0755 "$TMP"
TAG=gavel-bench-svc-$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	for _ in $(seq 1 100); do
		local alive=0
		for p in "${PIDS[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.2
	done
	for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
	services_stop "$TMP/services" >/dev/null 2>&1
	rm -rf "$TMP" "/run/$TAG" "/var/tmp/$TAG" "/run/gavel/$TAG-par" "/var/tmp/gavel-$TAG-par"
	local cg
	for cg in /sys/fs/cgroup/$TAG /sys/fs/cgroup/*/$TAG /sys/fs/cgroup/gavel-$TAG-par /sys/fs/cgroup/*/gavel-$TAG-par; do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the stack ----
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
mkdir -p "$TMP/services"
# Durable: fsync on, so that "durable POST" means what it says.
GAVEL_SERVICES_FAST=0 services_start "$TMP/services" || die "could not start PostgreSQL and Redis"
# shellcheck disable=SC1091
. "$TMP/services/env"
# Each daemon connects as its own role (database.service_url), as in
# production: set where each one is started.
export GAVEL_REDIS_URL
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh
rc() { redis_cli "$GAVEL_REDIS_URL" "$@"; }
sql() { psql "$GAVEL_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
"$BUILD/gavel" migrate --dir "${BENCH_MIGRATIONS:-$ROOT/deploy/sql}" >"$TMP/migrate.log" 2>&1 || die "gavel migrate failed"
for t in a b; do
	"$BUILD/gavel" tenant create "bench-$t" >/dev/null || die "tenant create"
	"$BUILD/gavel" tenant update "bench-$t" --quota requests_per_second=1000000 --quota burst=10000000 \
		--quota max_queued=10000000 --quota max_running=$CONC >/dev/null || die "tenant update"
done
KA=$("$BUILD/gavel" key create --tenant bench-a) || die "key create"
KB=$("$BUILD/gavel" key create --tenant bench-b) || die "key create"
TA=$(sql -c "SELECT id FROM tenants WHERE name = 'bench-a'")
TB=$(sql -c "SELECT id FROM tenants WHERE name = 'bench-b'")
API_PORT=$(_services_free_port "$GAVEL_PG_PORT") || die "no free port"
API=http://127.0.0.1:$API_PORT

CONTROL_NICE=${GAVEL_CONTROL_NICE:--5}
export GAVEL_LOG_LEVEL=warn GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_SCHEDULER_INSTANCE=bench
start_sched() {
	GAVEL_DATABASE_SERVICE_URL=$GAVEL_SCHEDULER_DATABASE_URL GAVEL_REDIS_URL=$GAVEL_REDIS_URL_SCHEDULER \
		setsid nice -n "$CONTROL_NICE" "$BUILD/gavel-scheduler" >>"$TMP/sched.log" 2>&1 </dev/null &
	SCHED_PID=$!
	PIDS+=($SCHED_PID)
}
start_sched
GAVEL_EXECUTOR_NODE_NAME=bench GAVEL_EXECUTOR_MAX_PARALLEL=$CONC GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	GAVEL_EXECUTOR_RUNSC_ROOT=/run/$TAG GAVEL_EXECUTOR_WORK_ROOT=/var/tmp/$TAG GAVEL_EXECUTOR_CGROUP_PARENT=$TAG \
	GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
	GAVEL_DATABASE_SERVICE_URL=$GAVEL_EXECUTOR_DATABASE_URL GAVEL_REDIS_URL=$GAVEL_REDIS_URL_EXECUTOR setsid "$BUILD/gavel-executor" >>"$TMP/exec.log" 2>&1 </dev/null &
EXEC_PID=$!
PIDS+=($!)
GAVEL_FRONTEND_PORT=$API_PORT GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	GAVEL_DATABASE_SERVICE_URL=$GAVEL_FRONTEND_DATABASE_URL GAVEL_REDIS_URL=$GAVEL_REDIS_URL_FRONTEND setsid nice -n "$CONTROL_NICE" "$BUILD/gavel-frontend" >>"$TMP/frontend.log" 2>&1 </dev/null &
FE_PID=$!
PIDS+=($!)
for i in $(seq 1 450); do
	[ "$(rc SISMEMBER gavel:executors bench)" = 1 ] &&
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/v1/languages")" = 200 ] && break
	[ "$i" = 450 ] && { tail -n 5 "$TMP"/*.log >&2; die "the stack did not come up"; }
	sleep 0.2
done
say "stack up: frontend $API, executor 'bench' with $CONC workers, $(nproc) CPUs"

HELLO='print("hello")'
BODY=$(printf '{"language":"python3","source":"%s"}' "${HELLO//\"/\\\"}")
post_wait() { # key -> prints "seconds verdict"
	local f=$TMP/resp.$BASHPID
	curl -s -o "$f" -w '%{time_total}' -X POST "$API/v1/submissions?wait=true" \
		-H "X-Auth-Token: $1" -H 'Content-Type: application/json' -d "$BODY"
	printf ' %s\n' "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$f" 2>/dev/null)"
	rm -f "$f"
}
export -f post_wait
export API BODY TMP
stats() { # file of numbers (seconds) -> "p50 p99 n" in ms
	python3 - "$1" <<-'EOF'
		import math, sys
		v = sorted(float(l.split()[0]) * 1000 for l in open(sys.argv[1]) if l.strip())
		rank = lambda p: v[max(0, math.ceil(p * len(v)) - 1)]
		print("%.0f %.0f %d" % (rank(0.5), rank(0.99), len(v)))
	EOF
}
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

# ---- 1. end-to-end latency against `gavel run` ----
printf '%s\n' "$HELLO" >"$TMP/hello.py"
for _ in 1 2 3; do
	case "$(post_wait "$KA")" in
	*" AC") ;;
	*)
		cat "$TMP"/resp.* >&2
		tail -n 5 "$TMP/frontend.log" "$TMP/exec.log" >&2
		die "a hello world submission did not end AC"
		;;
	esac
done
: >"$TMP/run.txt"
for _ in $(seq 1 10); do
	t0=$(date +%s%N)
	GAVEL_INIT=$BUILD/gavel-init "$BUILD/gavel" run "$TMP/hello.py" >/dev/null 2>&1 || die "gavel run failed"
	echo "$(( ($(date +%s%N) - t0) / 1000 ))e-6" >>"$TMP/run.txt"
done
read -r RUN_P50 _ _ < <(stats "$TMP/run.txt")
: >"$TMP/lat.txt"
for _ in $(seq 1 "$LAT_N"); do post_wait "$KA" >>"$TMP/lat.txt"; done
LAT_BAD=$(grep -vc ' AC$' "$TMP/lat.txt")
read -r LAT_P50 LAT_P99 LAT_N_DONE < <(stats "$TMP/lat.txt")

# ---- 2. sustained throughput against the engine alone ----
# CPU seconds used so far by each part of the stack (live processes and the
# children they reaped: sandboxes and runsc calls count in their worker,
# PostgreSQL backends in the postmaster), to say where a job's CPU goes.
PG_MASTER=$(head -n 1 "$(find "$TMP/services" -name postmaster.pid | head -n 1)" 2>/dev/null)
REDIS_PID=$(rc INFO server | tr -d '\r' | sed -n 's/^process_id://p')
cpu_snap() {
	python3 - "${PG_MASTER:-0}" "${REDIS_PID:-0}" "$FE_PID" "$SCHED_PID" "$EXEC_PID" <<-'EOF'
		import os, sys
		hz = os.sysconf('SC_CLK_TCK')
		pgm, rpid, fe, sch, ex = (int(x) for x in sys.argv[1:6])
		tot = dict(frontend=0, scheduler=0, executor=0, sandboxes=0, postgres=0, redis=0)
		for p in os.listdir('/proc'):
		    if not p.isdigit():
		        continue
		    try:
		        st = open('/proc/%s/stat' % p).read()
		    except OSError:
		        continue
		    comm = st[st.index('(') + 1:st.rindex(')')]
		    f = st[st.rindex(')') + 2:].split()
		    ppid, sid, pid = int(f[1]), int(f[3]), int(p)
		    own, kids = int(f[11]) + int(f[12]), int(f[13]) + int(f[14])
		    if pid == pgm or ppid == pgm:
		        tot['postgres'] += own + kids
		    elif pid == rpid:
		        tot['redis'] += own + kids
		    elif sid == fe:
		        tot['frontend'] += own + kids
		    elif sid == sch:
		        tot['scheduler'] += own + kids
		    elif sid == ex and comm.startswith('gavel-exec'):
		        tot['executor'] += own
		        tot['sandboxes'] += kids
		    elif sid == ex:
		        tot['sandboxes'] += own + kids
		print(' '.join('%s %.2f' % (k, v / hz) for k, v in tot.items()))
	EOF
}
# The engine alone, measured right before and right after the service and
# averaged: on a shared machine the load drifts over a minute, and one
# baseline on one side would carry that drift into the ratio.
REQ_JSON=$(printf '{"language":"python3","files":[{"name":"a.py","content":"%s"}]}' "${HELLO//\"/\\\"}")
engine_rate() {
	BENCH_PAR_TAG=$TAG-par "$BUILD/tests/bench/engine_parallel" "$BUILD/gavel-init" "$ROOT/languages" "$CONC" \
		"$TPUT_N" "$REQ_JSON"
}
ENG_BEFORE=$(engine_rate) || die "engine_parallel failed: $ENG_BEFORE"
CPU0=$(cpu_snap)
t0=$(date +%s%N)
# Lean clients: CONC loops of curl, each response saved and judged after
# the clock stops, so that no per-request bash or python3 start-up (tens
# of ms of CPU each on this machine) competes with the service for the
# CPUs it is measured on; the engine baseline has no client at all.
mkdir -p "$TMP/tput"
CLIENTS=()
for c in $(seq 1 "$CONC"); do
	(
		i=$c
		while [ "$i" -le "$TPUT_N" ]; do
			curl -s -o "$TMP/tput/$i.json" -X POST "$API/v1/submissions?wait=true" \
				-H "X-Auth-Token: $KA" -H 'Content-Type: application/json' -d "$BODY"
			i=$((i + CONC))
		done
	) &
	CLIENTS+=($!)
done
wait "${CLIENTS[@]}"
TPUT_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
CPU_PER_JOB=$(python3 -c '
import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
n = int(sys.argv[3])
print("  ".join("%s %.0f" % (a[i], (float(b[i + 1]) - float(a[i + 1])) * 1000 / n) for i in range(0, len(a), 2)))
' "$CPU0" "$(cpu_snap)" "$TPUT_N")
TPUT_BAD=$(python3 - "$TMP/tput" "$TPUT_N" <<-'EOF'
	import json, os, sys
	ok = 0
	for f in os.listdir(sys.argv[1]):
	    try:
	        ok += json.load(open(os.path.join(sys.argv[1], f))).get("verdict") == "AC"
	    except (OSError, ValueError):
	        pass
	print(int(sys.argv[2]) - ok)
EOF
)
SVC_RATE=$(python3 -c "print('%.2f' % ($TPUT_N / ($TPUT_MS / 1000)))")
ENG_AFTER=$(engine_rate) || die "engine_parallel failed: $ENG_AFTER"
ENG=$ENG_AFTER
ENG_RATE=$(python3 -c "import sys; print('%.3f' % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))" \
	"$(printf '%s' "$ENG_BEFORE" | awk '{print $NF}')" "$(printf '%s' "$ENG_AFTER" | awk '{print $NF}')")

# ---- 3. fairness: B's queue wait with A backlogged, against B alone ----
qwait_b() { # since (SQL timestamp) -> median queue wait of B's jobs, ms
	sql -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at) * 1000)::numeric, 1)
		FROM submissions WHERE tenant_id = '$TB' AND created_at > '$1'"
}
since=$(sql -c "SELECT now()")
for _ in $(seq 1 "$FAIR_N"); do post_wait "$KB" >/dev/null; done
B_ALONE=$(qwait_b "$since")
seq 1 "$BACKLOG" | xargs -P 8 -I{} curl -s -o /dev/null -X POST "$API/v1/submissions" -H "X-Auth-Token: $KA" \
	-H 'Content-Type: application/json' -d "$BODY"
since=$(sql -c "SELECT now()")
for _ in $(seq 1 "$FAIR_N"); do post_wait "$KB" >/dev/null; done
B_BUSY=$(qwait_b "$since")
# B's jobs that started while A held every regular slot: they got a burst
# slot (executor.burst_slots, scheduler/fairshare.h).
B_BURST=$(sql -c "SELECT count(*) FROM submissions b WHERE b.tenant_id = '$TB' AND b.created_at > '$since'
	AND (SELECT count(*) FROM submissions a WHERE a.tenant_id = '$TA' AND a.started_at <= b.started_at
	     AND (a.finished_at IS NULL OR a.finished_at > b.started_at)) >= $CONC")
A_LEFT=$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TA' AND status = 'queued'")
# Drop what is left of A's backlog: it has served its purpose.
sql -c "UPDATE submissions SET status = 'cancelled' WHERE tenant_id = '$TA' AND status = 'queued'" >/dev/null
rc DEL "gavel:tq:$TA" >/dev/null
for _ in $(seq 1 300); do
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE status = 'running'")" = 0 ] && break
	sleep 0.2
done

# ---- 4. HTTP rates with wrk ----
wrk_rate() { awk '/^Requests\/sec/ {print $2}' "$1"; }
wrk_errors() { awk '/Non-2xx/ {n += $NF} /Socket errors/ {n += 1} END {print n + 0}' "$1"; }
if [ $HAVE_WRK = 1 ]; then
	SID=$(sql -c "SELECT id FROM submissions WHERE tenant_id = '$TA' AND status = 'done' LIMIT 1")
	wrk -t2 -c32 -d"${WRK_S}s" -H "X-Auth-Token: $KA" "$API/v1/languages" >"$TMP/wrk-lang.txt" 2>&1
	wrk -t2 -c32 -d"${WRK_S}s" -H "X-Auth-Token: $KA" "$API/v1/submissions/$SID" >"$TMP/wrk-get.txt" 2>&1
	# Durable POST with the scheduler stopped: INSERT committed (fsync on)
	# and enqueued in Redis before the 201.
	kill -TERM -- "-$SCHED_PID" 2>/dev/null
	for _ in $(seq 1 50); do kill -0 "$SCHED_PID" 2>/dev/null || break; sleep 0.2; done
	cat >"$TMP/post.lua" <<-EOF
		wrk.method = "POST"
		wrk.body = [==[$BODY]==]
		wrk.headers["Content-Type"] = "application/json"
		wrk.headers["X-Auth-Token"] = "$KA"
	EOF
	before=$(sql -c "SELECT count(*) FROM submissions")
	wrk -t2 -c32 -d"${WRK_S}s" -s "$TMP/post.lua" "$API/v1/submissions" >"$TMP/wrk-post.txt" 2>&1
	after=$(sql -c "SELECT count(*) FROM submissions")
	LANG_RATE=$(wrk_rate "$TMP/wrk-lang.txt")
	GET_RATE=$(wrk_rate "$TMP/wrk-get.txt")
	POST_RATE=$(wrk_rate "$TMP/wrk-post.txt")
	GET_ERR=$(wrk_errors "$TMP/wrk-get.txt")
	POST_ERR=$(wrk_errors "$TMP/wrk-post.txt")
	POST_ROWS=$((after - before))
fi

# ---- figures ----
say ""
say "== Gavel service benchmark ($(nproc) CPUs, executor $CONC workers, python3 hello world)"
say "1. end-to-end latency, POST /v1/submissions?wait=true -> result, $LAT_N_DONE sequential ($LAT_BAD not AC)"
say "   baseline: gavel run, median of 10           ${RUN_P50} ms"
say "   p50 ${LAT_P50} ms  -> ratio $(ratio "$LAT_P50" "$RUN_P50")   (target <= 1.0)"
say "   p99 ${LAT_P99} ms  -> ratio $(ratio "$LAT_P99" "$RUN_P50")   (target <= 2.0)"
say "2. sustained throughput, $TPUT_N submissions from $CONC concurrent clients ($TPUT_BAD not AC)"
say "   service ${SVC_RATE}/s; engine alone, $CONC processes x exec_inline_run: ${ENG_RATE}/s"
say "   (engine alone before the service $(printf '%s' "$ENG_BEFORE" | awk '{print $NF}')/s, after $(printf '%s' "$ENG_AFTER" | awk '{print $NF}')/s)"
say "   ratio $(ratio "$SVC_RATE" "$ENG_RATE")   (target >= 0.9)"
say "   CPU ms per job: $CPU_PER_JOB; engine alone $(printf '%s' "$ENG" | awk '{print $(NF-2)}')"
say "3. fairness: tenant B's median queue wait (started_at - created_at), $FAIR_N sequential jobs"
say "   alone ${B_ALONE} ms; with A backlogged by $BACKLOG jobs (still queued after: $A_LEFT) ${B_BUSY} ms"
say "   ratio $(ratio "$B_BUSY" "$(python3 -c "print(max(1, $B_ALONE))")")   (target <= 1.5; issue's backlog 2000, here $BACKLOG)"
say "   B's jobs started while A ran $CONC (in a burst slot): $B_BURST of $FAIR_N"
if [ $HAVE_WRK = 1 ]; then
	say "4. HTTP rates, wrk -t2 -c32 ${WRK_S}s each; baseline GET /v1/languages (no database): ${LANG_RATE}/s"
	say "   GET /v1/submissions/{id}: ${GET_RATE}/s ($GET_ERR errors) -> ratio $(ratio "$GET_RATE" "$LANG_RATE")   (target >= 10000/s)"
	say "   durable POST /v1/submissions, scheduler stopped, fsync on: ${POST_RATE}/s ($POST_ERR errors, $POST_ROWS rows)"
	say "      -> ratio $(ratio "$POST_RATE" "$LANG_RATE")   (target >= 2000/s)"
fi
