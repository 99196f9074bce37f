#!/usr/bin/env bash
# Hosted notebook kernels end to end (executor/kernels/README.md), against
# real PostgreSQL, Redis and runsc, with Jupyter's own clients unchanged:
#
#   1. @jupyterlab/services (tests/kernels/run_services.sh): kernel specs,
#      start, streamed output, an error, a matplotlib PNG, interrupt,
#      restart, shutdown; with and without the v1 WebSocket subprotocol;
#   2. Debian's jupyter_server 1.23.3 with --gateway-url pointing at Gavel
#      (tests/kernels/jupyter_server_gateway.py);
#   3. Debian's classic notebook 6.4 with its gateway option, in headless
#      Chromium: a cell's output appears on the page; the screenshot is kept
#      (tests/kernels/notebook_page.py);
#   3b. Debian's nbconvert --execute (nbclient) through a local
#      jupyter_server pointed at Gavel: a notebook with a matplotlib cell,
#      no stderr (tests/kernels/nbconvert_gateway.py);
#   4. probes from inside a kernel (tests/kernels/probes.py): no network,
#      no host files, nothing left after delete, kernels apart, hostile
#      output;
#   5. what the service keeps: audit records of each kernel's start and
#      stop, kernel time in usage, no kernel left running, no Redis state
#      left behind;
#   6. budgets: a second kernel over max_kernels is 403, an unconnected
#      idle kernel is culled after kernel_idle_s (result reason idle);
#   7. kernels started ahead (executor.kernel_pool) serve the tenant's
#      later kernels, each sandbox once; the other ends: memory (over
#      kernel_memory_mb), lifetime, node lost (its worker killed); the
#      tenant's CPU quota on the sandbox's cgroup, throttling a busy loop.
#
# Needs root. TAP. GAVEL_KERNELS_SCREENSHOT keeps the notebook page's
# screenshot there (default: $TMP, removed).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..18"
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init gavel-kernel-bridge.py; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl /usr/bin/python3 node; do command -v $c >/dev/null || bail "$c missing"; done
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null || bail "python3-ipykernel missing (deploy/deps.sh)"
# shellcheck source=tests/lib/jupyter.sh
. tests/lib/jupyter.sh
jupyter_clients_ready || bail "the Jupyter clients of tests/kernels/ cannot be installed"
# shellcheck source=tests/lib/chromium.sh
. tests/lib/chromium.sh
chromium_ready || bail "Chromium (for the notebook page) cannot be installed"

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup kernels
export GAVEL_LOG_LEVEL=info

mk_tenant() { # name quota... -> "id key"
	local n=$1
	shift
	"$BUILD/gavel" tenant create "$n" >"$TMP/t.$n" 2>>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
	local q=(--quota requests_per_second=1000 --quota burst=1000)
	for a in "$@"; do q+=(--quota "$a"); done
	"$BUILD/gavel" tenant update "$n" "${q[@]}" >/dev/null 2>>"$TMP/cli.log" ||
		bail "tenant update: $(cat "$TMP/cli.log")"
	echo "$(cut -f1 "$TMP/t.$n") $("$BUILD/gavel" key create --tenant "$n" 2>>"$TMP/cli.log")"
}
read -r TA KA < <(mk_tenant "${TAG}_a" max_kernels=3 max_running=4)
read -r TB KB < <(mk_tenant "${TAG}_b" max_kernels=1 kernel_idle_s=10)
[ -n "$KA" ] && [ -n "$KB" ] || bail "tenants: $(cat "$TMP/cli.log")"

GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=k-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=4 stack_start_executor executor.log
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_EXEC" "$PID_FE"

run_client() { # title script args...
	local title=$1 t0=$SECONDS
	shift
	"$@" >"$TMP/client.out" 2>&1
	local st=$?
	# Each check, and the reason a failed one gives (kclient's "# <Error>: ...").
	grep -E '^(ok|FAIL|not ok)|^# [A-Za-z_.]*(Error|Exception)\b' "$TMP/client.out" | sed 's/^/#   /'
	if [ $st -eq 0 ] && ! grep -qE '^(FAIL|not ok)' "$TMP/client.out"; then
		ok "$title ($((SECONDS - t0)) s)"
	else
		notok "$title (exit $st, $((SECONDS - t0)) s)"
		grep -vE '^(ok|FAIL|not ok)' "$TMP/client.out" | tail -n 15 | sed 's/^/# /'
		tail -n 15 "$TMP/executor.log" | sed 's/^/# executor: /'
	fi
}

# ---- 1-4. real clients ----
run_client "@jupyterlab/services, v1 and legacy framing: start, stream, error, PNG, interrupt, restart, shutdown" \
	tests/kernels/run_services.sh "$B" "$KA"
run_client "jupyter_server 1.23.3 --gateway-url: a kernel through its REST and WebSocket, interrupt, shutdown" \
	/usr/bin/python3 tests/kernels/jupyter_server_gateway.py "$B" "$KA"
SHOT=${GAVEL_KERNELS_SCREENSHOT:-$TMP/notebook.png}
run_client "classic notebook 6.4 with its gateway option in headless Chromium: a cell's output on the page" \
	/usr/bin/python3 tests/kernels/notebook_page.py "$B" "$KA" --screenshot "$SHOT"
[ -s "$SHOT" ] && say "screenshot: $SHOT ($(stat -c %s "$SHOT") bytes)"
run_client "jupyter nbconvert --execute through a local jupyter_server pointed at Gavel: 42, a PNG, no Fontconfig error" \
	/usr/bin/python3 tests/kernels/nbconvert_gateway.py "$B" "$KA"
run_client "probes from inside a kernel: the sandbox holds" /usr/bin/python3 tests/kernels/probes.py "$B" "$KA"

# ---- 5. what the service keeps ----
live="SELECT count(*) FROM submissions WHERE tenant_id = '$TA' AND kind = 'kernel' AND status IN ('queued', 'running')"
for _ in $(seq 100); do
	[ "$(sql -c "$live")" = 0 ] && break
	sleep 0.2
done
left=$(sql -c "$live")
check "no kernel is left queued or running after the clients ended ($left)" test "$left" = 0
started=$(sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TA' AND action = 'kernel.started'")
stopped=$(sql -c "SELECT count(DISTINCT object) FROM audit_log WHERE tenant_id = '$TA' AND action = 'kernel.stopped'")
kernels=$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TA' AND kind = 'kernel' AND started_at IS NOT NULL")
say "kernels run: $kernels, sandboxes started: $started, kernels stopped: $stopped"
check "every kernel that ran has kernel.started and kernel.stopped audit records" \
	test "$kernels" -gt 0 -a "$started" -ge "$kernels" -a "$stopped" = "$kernels"
ms=$(sql -c "SELECT COALESCE(sum(kernel_ms), 0) || ' ' || COALESCE(max(kernel_peak_memory_kb), 0) FROM usage_daily WHERE tenant_id = '$TA'")
say "usage: kernel_ms and peak memory (KB): $ms"
check "kernel time and peak memory are in the tenant's usage" test "${ms%% *}" -gt 0 -a "${ms##* }" -gt 0
keys=$(rc --scan --pattern 'gavel:k*:*' | grep -cE '^gavel:k(in|state):' || true)
check "no kernel command list or model is left in Redis ($keys)" test "$keys" = 0

# ---- 6. budgets ----
post() { curl -s -o "$TMP/post.json" -w '%{http_code}' -X POST -H "Authorization: token $1" \
	-H 'Content-Type: text/plain' --data '{"name":"python3"}' "$B/api/kernels"; }
st=$(post "$KB")
KID=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/post.json" 2>/dev/null)
check "POST /api/kernels answers 201 with the model ($st)" test "$st" = 201 -a -n "$KID"
st2=$(post "$KB")
check "a second kernel over max_kernels=1 is 403 ($st2)" test "$st2" = 403
# Never connected: culled once idle for kernel_idle_s (10 s) after it started.
for _ in $(seq 150); do
	[ "$(sql -c "SELECT status FROM submissions WHERE id = '$KID'")" = done ] && break
	sleep 0.5
done
why=$(sql -c "SELECT result->'kernel'->>'reason' FROM submissions WHERE id = '$KID'")
check "an idle kernel with no connection is culled after kernel_idle_s (reason: $why)" test "$why" = idle
gone=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $KB" "$B/api/kernels/$KID")
check "a culled kernel is gone for its clients (GET: $gone)" test "$gone" = 404

# ---- 7. kernels started ahead, the other ends, the CPU quota ----
read -r TC KC < <(mk_tenant "${TAG}_c" max_kernels=3 kernel_memory_mb=256 kernel_cpu_pct=50)
read -r TD KD < <(mk_tenant "${TAG}_d" max_kernels=1 kernel_lifetime_s=10 kernel_idle_s=600)
[ -n "$KC" ] && [ -n "$KD" ] || bail "tenants: $(cat "$TMP/cli.log")"
pooled=$(sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TA' AND action = 'kernel.started' AND details->>'pooled' = 'true'")
dup=$(sql -c "SELECT count(*) - count(DISTINCT sandbox) FROM audit_log WHERE action = 'kernel.started'")
say "tenant a: $pooled of $started kernel sandboxes were started ahead"
check "later kernels of a tenant start from kernels started ahead ($pooled of $started), each sandbox serving one kernel ($dup reused)" \
	test "$pooled" -ge 1 -a "$dup" = 0
# Lifetime: never connected, its idle time (600 s) far off.
st=$(post "$KD")
KLIFE=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/post.json" 2>/dev/null)
wait_end() { # kid seconds -> its result's reason (empty: not ended)
	for _ in $(seq $(($2 * 5))); do
		[ "$(sql -c "SELECT status FROM submissions WHERE id = '$1'")" = done ] && break
		sleep 0.2
	done
	sql -c "SELECT result->'kernel'->>'reason' FROM submissions WHERE id = '$1' AND status = 'done'"
}
run_cell() { # token code -> kernel id
	/usr/bin/python3 tests/kernels/kclient.py start-and-run "$B" "$1" "$2" 2>>"$TMP/cells.log"
}
# The sandbox of a kernel: its id from kernel.started, its cgroup folder.
sandbox_of() { sql -c "SELECT sandbox FROM audit_log WHERE object = '$1' AND action = 'kernel.started' ORDER BY at DESC LIMIT 1"; }
cgroup_of() { find /sys/fs/cgroup -maxdepth 7 -type d -name "$1" 2>/dev/null | head -n1; }

KMEM=$(run_cell "$KC" 'b = b"x" * (600 << 20)')
why=$(wait_end "$KMEM" 60)
check "a kernel that allocates over kernel_memory_mb (256) ends with reason memory ($why)" test "$why" = memory
[ "$why" = memory ] || { tail -n 5 "$TMP/cells.log"; grep -F -- "${KMEM:-none}" "$TMP/executor.log" | tail -n 8; } | sed 's/^/# /'

KCPU=$(run_cell "$KC" 'while True: pass')
sb=$(sandbox_of "$KCPU")
cg=$(cgroup_of "$sb")
quota=""
thr0=0 thr1=0
if [ -n "$cg" ] && [ -f "$cg/cpu.max" ]; then
	quota=$(cat "$cg/cpu.max")
	thr0=$(awk '/^nr_throttled/ { print $2 }' "$cg/cpu.stat")
	sleep 2
	thr1=$(awk '/^nr_throttled/ { print $2 }' "$cg/cpu.stat")
elif [ -n "$(find /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup/cpu -maxdepth 7 -type d -name "$sb" 2>/dev/null | head -n1)" ]; then
	cg=$(find /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup/cpu -maxdepth 7 -type d -name "$sb" 2>/dev/null | head -n1)
	quota="$(cat "$cg/cpu.cfs_quota_us") $(cat "$cg/cpu.cfs_period_us")"
	thr0=$(awk '/^nr_throttled/ { print $2 }' "$cg/cpu.stat")
	sleep 2
	thr1=$(awk '/^nr_throttled/ { print $2 }' "$cg/cpu.stat")
fi
say "kernel $KCPU: sandbox $sb, cgroup ${cg:-none}, quota '$quota', throttled $thr0 -> $thr1"
check "the tenant's kernel_cpu_pct (50) is its sandbox's CPU quota, and a busy loop is throttled ($quota; $thr0 -> $thr1)" \
	test "$quota" = "50000 100000" -a "$thr1" -gt "$thr0"
curl -s -o /dev/null -X DELETE -H "Authorization: token $KC" "$B/api/kernels/$KCPU"

# Node lost: the worker process running the kernel dies (the sandbox's
# processes are its children: the engine is their subreaper).
KLOST=$(run_cell "$KC" 'x = 1')
sb=$(sandbox_of "$KLOST")
wpid=""
for p in $(pgrep -f -- "$sb"); do
	pp=$(ps -o ppid= -p "$p" | tr -d ' ')
	[ -n "$pp" ] && [ "$(ps -o comm= -p "$pp")" = gavel-executor ] && { wpid=$pp; break; }
done
say "kernel $KLOST: sandbox $sb, worker ${wpid:-not found}"
[ -n "$wpid" ] && kill -9 "$wpid"
why=$(wait_end "$KLOST" 60)
gone=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $KC" "$B/api/kernels/$KLOST")
check "a kernel whose worker died ends with reason node_lost, never restarted elsewhere ($why), and is gone for its clients ($gone)" \
	test -n "$wpid" -a "$why" = node_lost -a "$gone" = 404

why=$(wait_end "$KLIFE" 60)
check "a kernel ends at kernel_lifetime_s (10), never connected and its idle limit (600 s) far off (reason: $why)" test "$why" = lifetime
