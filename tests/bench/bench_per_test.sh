#!/usr/bin/env bash
# Per-test cost (issue 34): what one more test of a submission costs when
# every test of a `1 2` -> `3` problem is judged in one sandbox, with
# `gavel judge` (no service), each figure beside a bare run of the same
# program on the host and, for Python, beside the same judge without its
# fork server (the languages folder copied with `fork_server` removed),
# all in this one run. Not part of `make test`: timings on a shared machine
# are noisy, so each line carries the load average.
#
#   per test = (median time of 41 tests - median time of 1 test) / 40
#
# Also a program doing real work (a fixed loop of ~0.5 s of CPU on the
# host): the time the judge reports for it with and without the fork
# server, beside its CPU time bare on the host (the fork server must not
# change what a time limit means for such a program).
#
#   sudo BUILD=build tests/bench/bench_per_test.sh
#
# Then, through the service (its own stack, tests/lib/stack.sh: PostgreSQL,
# Redis, gavel-scheduler, one gavel-executor with its default slots,
# gavel-frontend), BENCH_SUBS Python submissions of a stored 20-test
# problem sent at once, with and without the fork server (the executor
# restarted on the other languages folder): the time until the last
# verdict, the median and the slowest from submit to verdict, and that
# every verdict is AC.
#
# Environment: BUILD, BENCH_REPS (5: judges per figure), BENCH_BARE (20:
# bare runs per figure), BENCH_SUBS (40), BENCH_SERVICE (1; 0: the CLI
# part only). About 2 minutes on 2 cores for the CLI part, 4 for the
# service.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
REPS=${BENCH_REPS:-5}
SUBS=${BENCH_SUBS:-40}
SERVICE=${BENCH_SERVICE:-1}
BARE=${BENCH_BARE:-20}

die() { echo "bench_per_test: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (runsc and cgroups)"
[ -x "$BUILD/gavel" ] && [ -x "$BUILD/gavel-init" ] || die "$BUILD/gavel is not built"
for c in python3 gcc g++; do command -v $c >/dev/null || die "$c missing"; done
WORK=$(mktemp -d /tmp/bench-per-test.XXXXXX) || die "mktemp"
trap 'rm -rf "$WORK"' EXIT

# The problems: 1 and 41 tests of "1 2" -> "3".
for n in 1 41; do
	mkdir -p "$WORK/p$n/data/secret"
	printf 'name: sum\nlimits:\n  time_limit: 2\n' >"$WORK/p$n/problem.yaml"
	for i in $(seq -w 1 $n); do
		echo "1 2" >"$WORK/p$n/data/secret/$i.in"
		echo 3 >"$WORK/p$n/data/secret/$i.ans"
	done
done
echo 'print(sum(map(int, input().split())))' >"$WORK/sum.py"
cat >"$WORK/sum.c" <<'EOF'
#include <stdio.h>
int main(void)
{
	long a, b;
	if (scanf("%ld %ld", &a, &b) != 2)
		return 1;
	printf("%ld\n", a + b);
	return 0;
}
EOF
gcc -O2 -o "$WORK/sum" "$WORK/sum.c" || die "gcc"
printf '#include <iostream>\nint main()\n{\n\tlong a, b;\n\tif (!(std::cin >> a >> b))\n\t\treturn 1;\n\tstd::cout << a + b << "\\n";\n}\n' >"$WORK/sum.cpp"
g++ -O2 -o "$WORK/sumpp" "$WORK/sum.cpp" || die "g++"
echo 'const [a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\s+/).map(Number); console.log(a + b);' >"$WORK/sum.js"
# Real work: a loop of fixed length, ~0.5 s of CPU bare on this host.
# The host's runs use /usr/bin/python3, the interpreter the sandbox has
# (a python3 earlier on PATH may be another build).
ITERS=$(/usr/bin/python3 - <<'EOF'
import time
n, t = 200000, 0.0
while t < 0.05:
    n *= 2
    s = time.process_time(); x = 0
    for i in range(n): x += i
    t = time.process_time() - s
print(int(n * 0.5 / t))
EOF
)
printf 'x = 0\nfor i in range(%s):\n    x += i\nprint(x)\n' "$ITERS" >"$WORK/loop.py"
mkdir -p "$WORK/ploop/data/secret"
printf 'name: loop\nlimits:\n  time_limit: 4\n' >"$WORK/ploop/problem.yaml"
for i in 1 2; do
	echo >"$WORK/ploop/data/secret/$i.in"
	echo $((ITERS * (ITERS - 1) / 2)) >"$WORK/ploop/data/secret/$i.ans"
done

# The languages without Python's fork server: the execve baseline.
mkdir -p "$WORK/langs-exec"
cp "$ROOT"/languages/*.yaml "$WORK/langs-exec/"
sed -i '/^fork_server:/d' "$WORK/langs-exec/python3.yaml"
grep -q '^fork_server:' "$ROOT/languages/python3.yaml" || die "languages/python3.yaml has no fork_server"

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }

# Median wall seconds of REPS `gavel judge` of problem $1 with source $2
# (languages folder $3, "" for the tree's); fails on anything but AC.
judge_time() {
	local i t0 t1 out
	for i in $(seq "$REPS"); do
		t0=$(now)
		out=$(GAVEL_LANGUAGES_DIR=$3 "$BUILD/gavel" judge --json "$1" "$2" 2>&1) ||
			die "judge $2 on $1: $(echo "$out" | tail -c 300)"
		t1=$(now)
		echo "$out" | grep -q '^{"verdict":"AC"' || die "judge $2 on $1: not AC: $(echo "$out" | head -c 300)"
		echo "$t1 - $t0" | bc -l
	done | median
}

# Median wall milliseconds of BARE runs of a command on the host, stdin "1 2".
bare_ms() {
	local i t0 t1
	for i in $(seq "$BARE"); do
		t0=$(now)
		echo "1 2" | "$@" >/dev/null || die "bare $*"
		t1=$(now)
		echo "($t1 - $t0) * 1000" | bc -l
	done | median
}

# The time the judge reports for loop.py (ms): `gavel judge` of a 2-test
# problem (a single run never uses the fork server), every test's time_ms,
# median over REPS judges.
loop_judged_ms() {
	local i out
	for i in $(seq "$REPS"); do
		out=$(GAVEL_LANGUAGES_DIR=$1 "$BUILD/gavel" judge --json "$WORK/ploop" "$WORK/loop.py" 2>"$WORK/err") ||
			die "judge loop.py: $(tail -c 300 "$WORK/err")"
		echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["verdict"] == "AC", d
for t in d["tests"]:
    print(t["time_ms"])'
	done | median
}

loop_bare_ms() {
	python3 - "$WORK/loop.py" "$BARE" <<'EOF'
import os, resource, statistics, subprocess, sys
ts = []
for _ in range(int(sys.argv[2]) // 4 or 1):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["/usr/bin/python3", sys.argv[1]], stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ts.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
print(statistics.median(ts))
EOF
}

printf 'per-test cost, %s judges per figure, medians (load at start %s)\n\n' "$REPS" "$(load)"
printf '%-8s %-12s %9s %9s %9s %12s %7s %6s\n' language mode "1 test" "41 tests" "per test" "bare host run" target load
line() { # language mode one forty target bare
	local per
	per=$(echo "($4 - $3) * 1000 / 40" | bc -l)
	printf '%-8s %-12s %8.2fs %8.2fs %7.1fms %11.1fms %7s %6s\n' "$1" "$2" "$3" "$4" "$per" "$6" "$5" "$(load)"
}
py_bare=$(bare_ms /usr/bin/python3 "$WORK/sum.py")
c_bare=$(bare_ms "$WORK/sum")
# Interleaved: the two Python modes see the same load.
fs1=$(judge_time "$WORK/p1" "$WORK/sum.py" "$ROOT/languages")
ex1=$(judge_time "$WORK/p1" "$WORK/sum.py" "$WORK/langs-exec")
fs41=$(judge_time "$WORK/p41" "$WORK/sum.py" "$ROOT/languages")
ex41=$(judge_time "$WORK/p41" "$WORK/sum.py" "$WORK/langs-exec")
line python3 "fork server" "$fs1" "$fs41" "<=25ms" "$py_bare"
line python3 "execve" "$ex1" "$ex41" "-" "$py_bare"
c1=$(judge_time "$WORK/p1" "$WORK/sum.c" "$ROOT/languages")
c41=$(judge_time "$WORK/p41" "$WORK/sum.c" "$ROOT/languages")
line c "execve" "$c1" "$c41" "<=5ms" "$c_bare"
cpp1=$(judge_time "$WORK/p1" "$WORK/sum.cpp" "$ROOT/languages")
cpp41=$(judge_time "$WORK/p41" "$WORK/sum.cpp" "$ROOT/languages")
line cpp "execve" "$cpp1" "$cpp41" "<=5ms" "$(bare_ms "$WORK/sumpp")"
# JavaScript keeps the execve path (V8's threads cannot be forked).
if command -v node >/dev/null; then
	js1=$(judge_time "$WORK/p1" "$WORK/sum.js" "$ROOT/languages")
	js41=$(judge_time "$WORK/p41" "$WORK/sum.js" "$ROOT/languages")
	line js "execve" "$js1" "$js41" "<=40ms" "$(bare_ms node "$WORK/sum.js")"
fi

printf '\nreal work: loop.py, %s iterations (CPU ms; judged: the reported time_ms)\n' "$ITERS"
printf '  bare on the host %8.0f ms\n' "$(loop_bare_ms)"
printf '  fork server      %8.0f ms\n' "$(loop_judged_ms "$ROOT/languages")"
printf '  execve           %8.0f ms   (load %s)\n' "$(loop_judged_ms "$WORK/langs-exec")" "$(load)"

[ "$SERVICE" = 1 ] || exit 0

# --- through the service ------------------------------------------------
for b in gavel-scheduler gavel-executor gavel-frontend; do [ -x "$BUILD/$b" ] || die "$BUILD/$b is not built"; done
for c in curl psql redis-cli setsid; do command -v $c >/dev/null || die "$c missing"; done
bail() { die "$@"; }
# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup bench-per-test
trap 'stack_cleanup; rm -rf "$WORK"' EXIT
stack_tenant "${TAG}_a" --quota burst=200 --quota requests_per_second=200 # sets KEY
"${STACK_AS_SCHEDULER[@]}" GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
start_executor() { # languages folder
	GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
		GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
		GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$1" GAVEL_EXECUTOR_TESTDATA_CACHE_DIR="$WORK_ROOT/testdata" \
		"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" >>"$TMP/executor.log" 2>&1 </dev/null &
	PID_EXEC=$!
	PIDS+=("$PID_EXEC")
}
stop_executor() {
	kill -TERM -- "-$PID_EXEC" 2>/dev/null
	for _ in $(seq 150); do kill -0 "$PID_EXEC" 2>/dev/null || return 0; sleep 0.2; done
	die "gavel-executor did not stop"
}
start_executor "$ROOT/languages"
GAVEL_FRONTEND_WAIT_TIMEOUT=600s stack_start_frontend
stack_wait_healthy 60 "$PID_EXEC" "$PID_FE"

PKG=$WORK/p20
mkdir -p "$PKG/data/sample" "$PKG/data/secret"
printf 'name: Sum\ntype: pass-fail\nlimits:\n  time_limit: 2\n' >"$PKG/problem.yaml"
echo "1 2" >"$PKG/data/sample/00.in"
echo 3 >"$PKG/data/sample/00.ans"
for i in $(seq -w 1 19); do
	echo "1 2" >"$PKG/data/secret/$i.in"
	echo 3 >"$PKG/data/secret/$i.ans"
done
out=$(GAVEL_URL=$B GAVEL_API_KEY=$KEY "$BUILD/gavel" problem push --wait "$PKG" 2>&1) || die "push: $out"
PROB=${out%% *}
BODY=$(python3 -c 'import json,sys; print(json.dumps({"language":"python3","source":open(sys.argv[1]).read(),"problem_id":sys.argv[2]}))' \
	"$WORK/sum.py" "$PROB")

# SUBS submissions at once, each POST ?wait=true; prints "total p50 max
# verdicts" (seconds; the verdicts that were not AC, "" when all were).
burst() {
	local i t0 t1
	rm -f "$WORK"/sub.*
	t0=$(now)
	for i in $(seq "$SUBS"); do
		curl -s -o "$WORK/sub.$i.json" -w '%{time_total}\n' -m 900 -X POST "$B/v1/submissions?wait=true" \
			-H "X-Auth-Token: $KEY" -H 'Content-Type: application/json' -d "$BODY" >"$WORK/sub.$i.t" &
	done
	wait
	t1=$(now)
	python3 - "$WORK" "$SUBS" "$(echo "$t1 - $t0" | bc -l)" <<'PY'
import json, statistics, sys
d, n, total = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ts, bad = [], []
for i in range(1, n + 1):
    ts.append(float(open("%s/sub.%d.t" % (d, i)).read() or 0))
    try:
        v = json.load(open("%s/sub.%d.json" % (d, i))).get("verdict")
    except ValueError:
        v = "no answer"
    if v != "AC":
        bad.append(str(v))
print("%.1f %.1f %.1f %s" % (total, statistics.median(ts), max(ts), ",".join(bad)))
PY
}
printf '\nthrough the service: %s Python submissions of a 20-test problem at once (POST ?wait=true)\n' "$SUBS"
printf '%-12s %11s %9s %9s %s\n' mode "last verdict" p50 slowest "not AC (load)"
read -r total p50 max bad <<<"$(burst)"
printf '%-12s %10.1fs %8.1fs %8.1fs %s (%s)\n' "fork server" "$total" "$p50" "$max" "${bad:-none}" "$(load)"
stop_executor
start_executor "$WORK/langs-exec"
stack_wait_healthy 60 "$PID_EXEC" "$PID_FE"
read -r total p50 max bad <<<"$(burst)"
printf '%-12s %10.1fs %8.1fs %8.1fs %s (%s)\n' execve "$total" "$p50" "$max" "${bad:-none}" "$(load)"
