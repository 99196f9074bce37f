#!/usr/bin/env bash
# Stored-problem benchmark (issue 6), on its own stack (tests/lib/stack.sh:
# PostgreSQL, Redis, gavel-scheduler, one gavel-executor with one worker,
# gavel-frontend), everything stopped and removed on exit. Not part of
# `make test`: timings on a shared machine are noisy, so each figure is
# printed with the load average.
#
#   1. judging a generated 100-test problem (BENCH_TEST_KB of input per
#      test) when its data is cached on the executor versus when it is not
#      (the cache folder emptied before each uncached run): median of
#      BENCH_REPS submissions each, POST ?wait=true to the answer;
#   2. the upload of a ~50 MB package (incompressible data): the POST
#      (bytes stored in PostgreSQL, 202) and the import to 'ready' (unpack
#      and validation in a sandbox, files stored by hash).
#
#   sudo BUILD=build tests/bench/bench_problems.sh
#
# Environment: BUILD, BENCH_REPS (3), BENCH_TEST_KB (200), BENCH_UPLOAD_MB (50).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
REPS=${BENCH_REPS:-3}
TEST_KB=${BENCH_TEST_KB:-200}
UPLOAD_MB=${BENCH_UPLOAD_MB:-50}

bail() { echo "bench_problems: $*" >&2; exit 1; }
say() { printf '%s\n' "$*"; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in curl psql redis-cli python3 setsid; do command -v $c >/dev/null || bail "$c missing"; done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup bench-problems
"$BUILD/gavel" tenant create "${TAG}_a" >/dev/null 2>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
KEY=$("$BUILD/gavel" key create --tenant "${TAG}_a" 2>>"$TMP/cli.log") || bail "key create"
CACHE=$WORK_ROOT/testdata

GAVEL_LOG_LEVEL=info GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_LOG_LEVEL=info GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=1 \
	GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
	GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
	GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" GAVEL_EXECUTOR_TESTDATA_CACHE_DIR="$CACHE" \
	GAVEL_EXECUTOR_IMPORT_POLL_INTERVAL=200ms \
	"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" >>"$TMP/executor.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_LOG_LEVEL=info GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=600s GAVEL_FRONTEND_MAX_PROBLEM_SIZE=96m \
	GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	"${STACK_AS_FRONTEND[@]}" setsid "$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$TMP/port" >>"$TMP/frontend.log" 2>&1 </dev/null &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
B=http://127.0.0.1:$(head -n1 "$TMP/port")
for _ in $(seq 300); do
	curl -s "$B/v1/health" | grep -q '"status":"ok"' && break
	sleep 0.2
done

# --- 1. a 100-test problem, cached versus not --------------------------------
PKG=$TMP/hundred
mkdir -p "$PKG/data/sample" "$PKG/data/secret"
printf 'name: Hundred sums\ntype: pass-fail\nlimits:\n  time_limit: 5\n' >"$PKG/problem.yaml"
python3 - "$PKG" "$TEST_KB" <<'PY'
import os, random, sys
root, kb = sys.argv[1], int(sys.argv[2])
rnd = random.Random(6)
for i in range(100):
    folder = "sample" if i == 0 else "secret"
    nums = []
    size = 0
    while size < kb * 1024:
        x = rnd.randint(-10**9, 10**9)
        nums.append(x)
        size += len(str(x)) + 1
    with open(os.path.join(root, "data", folder, "%03d.in" % i), "w") as f:
        f.write("%d\n%s\n" % (len(nums), " ".join(map(str, nums))))
    with open(os.path.join(root, "data", folder, "%03d.ans" % i), "w") as f:
        f.write("%d\n" % sum(nums))
PY
SRC='import sys
d = sys.stdin.buffer.read().split()
print(sum(map(int, d[1:])))'
out=$(GAVEL_URL=$B GAVEL_API_KEY=$KEY "$BUILD/gavel" problem push --wait "$PKG" 2>&1) || bail "push: $out"
PID=${out%% *}
BODY=$(python3 -c 'import json,sys; print(json.dumps({"language":"python3","source":sys.argv[1],"problem_id":sys.argv[2]}))' "$SRC" "$PID")
judge_once() { # -> seconds
	local t v
	t=$(curl -s -o "$TMP/ans" -w '%{time_total}' -m 600 -X POST "$B/v1/submissions?wait=true" \
		-H "X-Auth-Token: $KEY" -H 'Content-Type: application/json' -d "$BODY")
	v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$TMP/ans" 2>/dev/null)
	[ "$v" = AC ] || bail "judge: $(head -c 300 "$TMP/ans")"
	printf '%s' "$t"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
judge_once >/dev/null # warm the toolchain image and page cache
cold=()
warm=()
for _ in $(seq "$REPS"); do
	rm -rf "${CACHE:?}"/*
	cold+=("$(judge_once)")
	warm+=("$(judge_once)")
done
say "100-test problem, $((TEST_KB * 100 / 1024)) MiB of input: judge (POST ?wait=true -> answer), median of $REPS"
say "  data not cached on the executor: $(median "${cold[@]}") s   (runs: ${cold[*]})"
say "  data cached on the executor:     $(median "${warm[@]}") s   (runs: ${warm[*]})"
ms_of() { grep -E "problem $PID v1: .*$1" "$TMP/executor.log" | sed -E 's/.* in ([0-9]+) ms$/\1/' | sort -n | tr '\n' ' '; }
say "  building the package folder on the executor (its log), ms:"
say "    fetched from PostgreSQL: $(ms_of ' [1-9][0-9]* fetched')"
say "    from the cache:          $(ms_of ' 0 fetched')"
say "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 2. upload of a ~50 MB package ------------------------------------------
BIG=$TMP/big
mkdir -p "$BIG/data/sample" "$BIG/data/secret"
printf 'name: Big\ntype: pass-fail\n' >"$BIG/problem.yaml"
printf '1\n' >"$BIG/data/sample/1.in"
printf '1\n' >"$BIG/data/sample/1.ans"
for i in $(seq "$UPLOAD_MB"); do
	head -c 1048576 /dev/urandom >"$BIG/data/secret/$i.in"
	printf '0\n' >"$BIG/data/secret/$i.ans"
done
tar -C "$BIG" -czf "$TMP/big.tar.gz" . || bail "tar"
bytes=$(stat -c %s "$TMP/big.tar.gz")
t0=$(date +%s.%N)
resp=$(curl -s -m 600 -w '\n%{http_code} %{time_total}' -X POST "$B/v1/problems" -H "X-Auth-Token: $KEY" \
	-H 'Content-Type: application/gzip' --data-binary @"$TMP/big.tar.gz")
code=$(tail -n1 <<<"$resp" | cut -d' ' -f1)
tpost=$(tail -n1 <<<"$resp" | cut -d' ' -f2)
[ "$code" = 202 ] || bail "upload: $resp"
BIGID=$(head -n1 <<<"$resp" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
status=pending
for _ in $(seq 3000); do
	status=$(curl -s "$B/v1/problems/$BIGID" -H "X-Auth-Token: $KEY" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
	[ "$status" = pending ] || break
	sleep 0.2
done
t1=$(date +%s.%N)
say "upload of a $((bytes / 1048576)) MiB package ($UPLOAD_MB MiB of incompressible test data):"
say "  POST /v1/problems (stored in PostgreSQL, 202): $tpost s"
say "  POST to '$status' (sandboxed unpack, validation, files stored by hash): $(python3 -c "print(round($t1 - $t0, 2))") s"
say "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
