#!/usr/bin/env bash
# The first C++ submission on a node that has just registered (issue 31,
# "first contact"), against baselines measured in the same run: a Judge0
# POST ?wait=true of a <bits/stdc++.h> hello, sent as soon as the node is
# in the registry, its round trip timed, in three rounds each:
#   prepared  the node's precompiled headers built ahead (gavel-executor
#             --prepare, what make run does): the compile finds them;
#   warming   an empty folder: the node takes jobs at once while its
#             warm-up process builds them (executor/daemon/warm.c), so the
#             compile parses the header itself, beside that build;
#   none      executor.pch_dir empty: no headers at all (the same compile
#             with a quiet CPU: what the warm-up's competition costs).
# Prints the median of each with the load average, and warming / none and
# prepared / none. Needs root and runsc. BENCH_REPS [3].
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
REPS=${BENCH_REPS:-3}
bail() { echo "bench_node_warm: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup benchwarm
export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_tenant "${TAG}_t" --quota requests_per_second=1000 --quota burst=1000
PREPARED=$TMP/pch-prepared
GAVEL_EXECUTOR_PCH_DIR=$PREPARED GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
	"$BUILD/gavel-executor" --prepare >"$TMP/prepare.log" 2>&1 </dev/null || bail "--prepare: $(tail -n 3 "$TMP/prepare.log")"

BODY='{"language_id":54,"source_code":"#include <bits/stdc++.h>\nint main(){std::cout<<\"hello\"<<std::endl;}\n"}'
# One round: a node on folder $2 (kind $1); appends the seconds of the
# first submission to times[kind], or bails.
round() { # kind pch_dir
	local node=bw-$TAG-$1-$RANDOM out t
	GAVEL_EXECUTOR_NODE_NAME=$node GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_BURST_SLOTS=0 \
		GAVEL_EXECUTOR_KERNEL_POOL=0 GAVEL_EXECUTOR_PCH_DIR=$2 stack_start_executor "executor-$1.log"
	local pid=$PID_EXEC
	wait_for 120 registered "$node" || bail "node $node did not register: $(tail -n 3 "$TMP/executor-$1.log")"
	t=$(curl -s -o "$TMP/out.json" -w '%{time_total}' --max-time 120 -X POST -H "X-Auth-Token: $KEY" \
		-H 'Content-Type: application/json' --data "$BODY" "$B/submissions?base64_encoded=false&wait=true")
	out=$(cat "$TMP/out.json")
	[[ $out == *'"stdout":"hello\n"'* ]] || bail "$1: not judged: ${out:0:300}"
	kill -TERM "$pid"
	wait_for 60 bash -c "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid"
	times[$1]+="$t "
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
declare -A times=()
for ((i = 1; i <= REPS; i++)); do
	round prepared "$PREPARED"
	rm -rf "$TMP/pch-empty"
	round warming "$TMP/pch-empty"
	round none ""
done
declare -A med=()
for k in prepared warming none; do
	med[$k]=$(tr ' ' '\n' <<<"${times[$k]}" | grep . | median)
	printf '%-9s first C++ submission after the node registers: median %s s (%s)\n' "$k" "${med[$k]}" "${times[$k]% }"
done
awk -v p="${med[prepared]}" -v w="${med[warming]}" -v n="${med[none]}" \
	'BEGIN { printf "warming / none %.2f; prepared / none %.2f\n", w / n, p / n }'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
