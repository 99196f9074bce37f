#!/usr/bin/env bash
# Notebook kernel benchmark on the whole stack (PostgreSQL, Redis,
# gavel-scheduler, one gavel-executor, gavel-frontend, started here):
# tests/bench/kernels.py against Gavel, with its baseline (ipykernel on this
# host without a sandbox, behind a plain jupyter_server) measured in the
# same run. A kernel's memory and CPU are read from its sandbox's cgroup
# (the sandbox id from its kernel.started audit record). Figures only; not
# part of `make test`.
#
#   tests/bench/bench_kernels.sh      (as root; BUILD=build by default)
#
# Environment: BUILD, GAVEL_EXECUTOR_KERNEL_POOL, and kernels.py's
# BENCH_KERNEL_STARTS, BENCH_KERNEL_GAP_S, BENCH_CELL_N, BENCH_BIG_N,
# BENCH_IDLE_S, BENCH_FRAMING.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
bail() { echo "bench_kernels: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init gavel-kernel-bridge.py; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
# shellcheck source=tests/lib/jupyter.sh
. tests/lib/jupyter.sh
jupyter_clients_ready || bail "the baseline's jupyter_server is missing"
stack_setup bench-kernels
export GAVEL_LOG_LEVEL=warn
"$BUILD/gavel" tenant create "${TAG}_k" >/dev/null 2>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
"$BUILD/gavel" tenant update "${TAG}_k" --quota requests_per_second=1000 --quota burst=1000 \
	--quota max_kernels=4 --quota kernels_per_minute=1000 >/dev/null 2>>"$TMP/cli.log" || bail "tenant update"
KEY=$("$BUILD/gavel" key create --tenant "${TAG}_k" 2>>"$TMP/cli.log")
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
echo "# executor.kernel_pool ${GAVEL_EXECUTOR_KERNEL_POOL:-2 (default)}"
GAVEL_EXECUTOR_NODE_NAME=b-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=3 stack_start_executor executor.log
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_EXEC" "$PID_FE"

# The kernel's sandbox cgroup (v2, or v1's memory and cpuacct hierarchies).
cat >"$TMP/cg.sh" <<HOOK
#!/usr/bin/env bash
sb=\$(psql "$GAVEL_DATABASE_URL" -XAtq -c "SELECT sandbox FROM audit_log WHERE object = '\$1' AND action = 'kernel.started' ORDER BY at DESC LIMIT 1")
[ -n "\$sb" ] || exit 1
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	d=\$(find /sys/fs/cgroup -maxdepth 5 -type d -name "\$sb" | head -n1)
	case "\$2" in mem) echo \$((\$(cat "\$d/memory.current") / 1024)) ;;
	cpu) awk '/^usage_usec/ { print \$2 }' "\$d/cpu.stat" ;; esac
else
	case "\$2" in
	mem) d=\$(find /sys/fs/cgroup/memory -maxdepth 5 -type d -name "\$sb" | head -n1); echo \$((\$(cat "\$d/memory.usage_in_bytes") / 1024)) ;;
	cpu) d=\$(find /sys/fs/cgroup/cpuacct -maxdepth 5 -type d -name "\$sb" | head -n1); echo \$((\$(cat "\$d/cpuacct.usage") / 1000)) ;;
	esac
fi
HOOK
chmod +x "$TMP/cg.sh"
# Before each cold start: a kernel memory this tenant never had, so that no
# kernel started ahead (executor.kernel_pool) fits it.
cat >"$TMP/cold.sh" <<HOOK
#!/usr/bin/env bash
n=\$((\$(cat "$TMP/cold.n" 2>/dev/null || echo 0) + 1))
echo \$n >"$TMP/cold.n"
exec "$BUILD/gavel" tenant update "${TAG}_k" --quota kernel_memory_mb=\$((1024 + n))
HOOK
chmod +x "$TMP/cold.sh"
BENCH_KERNEL_COLD_CMD="$TMP/cold.sh" BENCH_KERNEL_MEM_CMD="$TMP/cg.sh \$1 mem" BENCH_KERNEL_CPU_CMD="$TMP/cg.sh \$1 cpu" \
	/usr/bin/python3 tests/bench/kernels.py "$B" "$KEY"
