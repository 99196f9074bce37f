#!/usr/bin/env bash
# Notebook kernels for a whole class, on the whole stack (PostgreSQL, Redis,
# gavel-scheduler, a judging gavel-executor, a kernel node and
# gavel-frontend, started here, all on this machine): tests/bench/
# kernel_class.py's figures, with their baselines measured in the same run
# (judging with no kernel, a bare ipykernel on the host, a class started on
# judging slots as every kernel was before kernel nodes), and the class
# again with a course's request for kernels warm ahead. Figures only; not
# part of `make test`.
#
#   tests/bench/bench_kernel_class.sh      (as root; BUILD=build by default)
#
# Environment: BUILD; BENCH_CLASS_IDLE (100), BENCH_CLASS_SPIN (20),
# BENCH_CLASS_STARTS (30), BENCH_BEFORE_STARTS (10), BENCH_IDLE_S (30);
# BENCH_KERNEL_MB, each kernel's memory budget (192), the kernel node's
# memory being that times the idle kernels or the class, whichever is more; BENCH_KERNEL_CPU_PCT, the
# kernel node's CPU ceiling (100: one of the CPUs). For work on start
# latency: BENCH_CLASS_ONLY=1 (the class phase only), BENCH_CLASS_COLD=0
# (not the class without a request), BENCH_LOG_LEVEL (warn) with
# BENCH_KEEP_LOGS=DIR (the daemons' logs kept there).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
bail() { echo "bench_kernel_class: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init gavel-kernel-bridge.py; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
IDLE=${BENCH_CLASS_IDLE:-100}
STARTS=${BENCH_CLASS_STARTS:-30}
KMB=${BENCH_KERNEL_MB:-192}
# One worker per kernel: the idle ones, or the class, whichever is more.
WORKERS=$((IDLE > STARTS ? IDLE : STARTS))
[ "$WORKERS" -le 256 ] || bail "at most 256 kernels on one node"

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
# shellcheck source=tests/lib/jupyter.sh
. tests/lib/jupyter.sh
# shellcheck source=tests/lib/npm.sh
. tests/lib/npm.sh
jupyter_clients_ready || bail "the Jupyter clients are missing"
npm_clients_ready || bail "the npm clients of tests/js could not be installed"
stack_setup bench-class "${BENCH_KEEP_LOGS:-}"
export GAVEL_LOG_LEVEL=${BENCH_LOG_LEVEL:-warn}
stack_tenant "${TAG}_class" --quota requests_per_second=1000 --quota burst=1000 --quota max_running=6 \
	--quota max_kernels=$((WORKERS + 10)) --quota kernels_per_minute=1000 --quota kernel_memory_mb="$KMB"

GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
# Judging as `make run` has it on 2 CPUs: two slots and one burst slot.
GAVEL_EXECUTOR_NODE_NAME=j-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_BURST_SLOTS=1 \
	stack_start_executor executor.log
PID_JUDGE=$PID_EXEC
KNODE=k-$TAG
GAVEL_EXECUTOR_NODE_NAME=$KNODE GAVEL_EXECUTOR_MAX_PARALLEL=$WORKERS GAVEL_EXECUTOR_BURST_SLOTS=0 \
	GAVEL_EXECUTOR_KERNEL_MEMORY_MB=$((WORKERS * KMB)) GAVEL_EXECUTOR_KERNEL_CPU_CEILING_PCT="${BENCH_KERNEL_CPU_PCT:-100}" \
	GAVEL_EXECUTOR_KERNEL_POOL=0 GAVEL_EXECUTOR_PCH_DIR= GAVEL_EXECUTOR_EGRESS_IFPREFIX=gbk \
	stack_start_executor kernel-node.log
PID_KNODE=$PID_EXEC
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 180 "$PID_JUDGE" "$PID_KNODE" "$PID_FE"

BENCH_WARM_CMD="$(printf '%q ' "$BUILD/gavel" tenant kernels-warm "${TAG}_class" --kernels "$STARTS" --until "$(date -u -d '+60 min' '+%F %T+00')")" \
BENCH_KNODE_CG="$CG_PARENT/$KNODE" BENCH_STOP_KNODE_CMD="kill -TERM $PID_KNODE" \
	/usr/bin/python3 tests/bench/kernel_class.py "$B/" "$KEY"
