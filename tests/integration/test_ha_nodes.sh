#!/usr/bin/env bash
# Two executor nodes on networks of their own, one of them cut off mid-job
# (issue 19, HA control plane). In TAP, with the figures as "# " lines.
#
# Each node is a network namespace this test makes (gv-node-a-<pid>,
# gv-node-b-<pid>) with a veth to a bridge in the root namespace, on
# TEST-NET-3 (RFC 5737): the host 203.0.113.1, node a 203.0.113.11, node b
# 203.0.113.12. PostgreSQL and Redis are this test's own (tests/lib/
# services.sh), also listening on 203.0.113.1 (PostgreSQL: listen_addresses
# and pg_hba host lines with scram-sha-256, restarted; Redis: a TCP port
# bound to 203.0.113.1 only, the same ACL users, protected-mode on). One
# gavel-executor runs in each namespace and reaches both over its veth only
# (its URLs name 203.0.113.1; its own loopback has no database). The
# frontend and the scheduler run in the root namespace on loopback.
#
#   1. ~30 slow submissions (a 3-3.5 s sleep, then the right answer) and a
#      few quick ones; once node a runs jobs, its host-side veth goes down
#      (a cable pulled: the namespace and its executor stay). The scheduler
#      must declare node a dead and put its jobs back, node b must run
#      them, and every submission must end done, AC, with exactly one
#      sandbox.finished audit record (lost=0 twice=0).
#   2. The link comes back: node a (the same process) registers again and
#      its workers finish the jobs they held; their late results must
#      change no row and add no audit record. A few more submissions are
#      then judged.
#
# Always starts its own PostgreSQL and Redis (it reconfigures them), even
# under tests/run.sh. Needs root (runsc, cgroups, namespaces). Set
# GAVEL_HA_KEEP_LOGS=DIR (or KEEP_LOGS=DIR) to keep the daemons' logs.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
N_SLOW=${GAVEL_HA_SLOW:-30}
N_QUICK=${GAVEL_HA_QUICK:-4}
N_AFTER=${GAVEL_HA_AFTER:-6}

PLAN=17
echo "1..$PLAN"
. tests/lib/tap.sh
say() { printf '# %s\n' "$*"; }
now_s() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'; }
diff_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
T_START=$(now_s)

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc, cgroups, network namespaces)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql pg_isready redis-cli curl python3 setsid nsenter ip runuser xargs awk; do
	command -v "$c" >/dev/null || bail "$c missing (deploy/deps.sh)"
done

HOST_IP=203.0.113.1
IP_A=203.0.113.11
IP_B=203.0.113.12
# TEST-NET-3 in the root namespace is ours alone while we run.
[ -z "$(ip -o addr show to 203.0.113.0/24 2>/dev/null)" ] && [ -z "$(ip route show 203.0.113.0/24 2>/dev/null)" ] ||
	bail "203.0.113.0/24 is already in use on this host (another run of this test?)"

# Our own PostgreSQL and Redis, never the harness's: they get listeners
# on the bridge and PostgreSQL is restarted.
unset GAVEL_DATABASE_URL GAVEL_REDIS_URL GAVEL_FRONTEND_DATABASE_URL GAVEL_SCHEDULER_DATABASE_URL \
	GAVEL_EXECUTOR_DATABASE_URL GAVEL_REDIS_URL_FRONTEND GAVEL_REDIS_URL_SCHEDULER GAVEL_REDIS_URL_EXECUTOR \
	GAVEL_REDIS_SOCKET GAVEL_PG_PORT GAVEL_PG_SOCKET_DIR
# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup hanodes "${GAVEL_HA_KEEP_LOGS:-${KEEP_LOGS:-}}"
[ "$OWN_SERVICES" = 1 ] || bail "expected to start its own PostgreSQL and Redis"
SVC=$TMP/services
NS_A=gv-node-a-$$
NS_B=gv-node-b-$$
BR=gvhbr$$
VA=gvha$$
VB=gvhb$$
ha_cleanup() {
	# The services' own logs, kept with the daemons' (stack_cleanup copies $TMP/*.log).
	local f
	for f in "$SVC"/log/*.log; do [ -f "$f" ] && cp "$f" "$TMP/svc-$(basename "$f")"; done
	stack_cleanup
	local ns p
	for ns in "$NS_A" "$NS_B"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	ip link del "$VA" 2>/dev/null
	ip link del "$VB" 2>/dev/null
	ip link del "$BR" 2>/dev/null
	return 0
}
trap ha_cleanup EXIT

# ------------------------------------------------------------ 1. network

mknode() { # ns host-veth address
	ip netns add "$1" &&
		ip -n "$1" link set lo up &&
		ip link add "$2" type veth peer name eth0 netns "$1" &&
		ip link set "$2" master "$BR" up &&
		ip -n "$1" addr add "$3/24" dev eth0 &&
		ip -n "$1" link set eth0 up
}
if ip link add "$BR" type bridge && ip addr add "$HOST_IP/24" dev "$BR" && ip link set "$BR" up &&
	mknode "$NS_A" "$VA" "$IP_A" && mknode "$NS_B" "$VB" "$IP_B"; then
	ok "two nodes: $NS_A ($IP_A) and $NS_B ($IP_B), each a veth on bridge $BR ($HOST_IP), loopback up"
else
	bail "could not build the namespaces"
fi
# in_ns NS COMMAND...: nsenter, not `ip netns exec`, which mounts a fresh
# /sys and hides the cgroup hierarchy the executor needs.
in_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" -- "$@"
}

# PostgreSQL on 203.0.113.1 as well: ALTER SYSTEM (postgresql.auto.conf
# wins over gavel-local's gavel-runtime.conf), host lines for the nodes'
# network, a restart by pg_ctl as the service user, as gavel-local runs it.
PGDATA=$SVC/pg
SVC_USER=$(stat -c %U "$PGDATA")
PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -n1)")
as_svc() { runuser -u "$SVC_USER" -- "$@"; }
pgsu() { as_svc psql -X -q -t -A -v ON_ERROR_STOP=1 -h "$GAVEL_PG_SOCKET_DIR" -p "$GAVEL_PG_PORT" -d "${PGSU_DB:-gavel}" "$@"; }
{
	PGSU_DB=postgres pgsu -c "ALTER SYSTEM SET listen_addresses = '127.0.0.1,$HOST_IP'" &&
		printf 'host    all  all  203.0.113.0/24  scram-sha-256\n' | as_svc tee -a "$PGDATA/pg_hba.conf" >/dev/null &&
		nice -n -5 runuser -u "$SVC_USER" -- "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$SVC/log/postgres.log" \
			-m fast -w -t 30 -s restart
} >"$TMP/pg-reconf.log" 2>&1 </dev/null || bail "PostgreSQL on $HOST_IP: $(tail -n 5 "$TMP/pg-reconf.log" "$SVC/log/postgres.log")"
# Redis: a TCP port on 203.0.113.1 only (the unix socket stays for the
# root namespace's daemons); users and passwords as they were.
R_PORT=$(_services_free_port "$GAVEL_PG_PORT") || bail "no free port for Redis"
[ "$(rc CONFIG SET bind "$HOST_IP")" = OK ] && [ "$(rc CONFIG SET port "$R_PORT")" = OK ] ||
	bail "Redis on $HOST_IP:$R_PORT: CONFIG SET failed"
[ "$(rc CONFIG GET protected-mode | tail -n1)" = yes ] || bail "Redis protected-mode is not yes"

# The executors' URLs: their own role and Redis user, over the bridge.
EXEC_PG_URL=${GAVEL_EXECUTOR_DATABASE_URL/@127.0.0.1:/@$HOST_IP:}
r_auth=${GAVEL_REDIS_URL_EXECUTOR#unix://}
r_auth=${r_auth%%@/*}
EXEC_REDIS_URL=redis://$r_auth@$HOST_IP:$R_PORT
case "$EXEC_PG_URL $EXEC_REDIS_URL" in
*127.0.0.1* | *unix:* | *localhost*) bail "the executors' URLs still name loopback or a socket" ;;
esac
case "$EXEC_PG_URL" in *"@$HOST_IP:$GAVEL_PG_PORT/"*) ;; *) bail "unexpected executor database URL shape" ;; esac

reach_ok=1
reach_detail=""
for ns in "$NS_A" "$NS_B"; do
	in_ns "$ns" pg_isready -q -t 5 -h "$HOST_IP" -p "$GAVEL_PG_PORT" -d gavel ||
		{ reach_ok=0; reach_detail+="$ns: no PostgreSQL at $HOST_IP; "; }
	# (gavel-executor may not PING: its ACL has EVAL)
	r=$(in_ns "$ns" bash -c '. tests/lib/redis.sh; redis_cli "$1" EVAL "return '"'pong'"'" 0' _ "$EXEC_REDIS_URL" 2>&1)
	[ "$r" = pong ] || { reach_ok=0; reach_detail+="$ns: Redis as gavel-executor at $HOST_IP:$R_PORT: $r; "; }
done
check_detail() { echo "$reach_detail"; }
check "PostgreSQL ($HOST_IP:$GAVEL_PG_PORT, scram) and Redis ($HOST_IP:$R_PORT, user gavel-executor) answer both nodes over the veth" \
	[ $reach_ok = 1 ]

# A node's own loopback has neither: what the executors reach is the veth.
lo_ok=1
lo_detail=""
pg_isready -q -t 5 -h 127.0.0.1 -p "$GAVEL_PG_PORT" -d gavel || { lo_ok=0; lo_detail+="no PostgreSQL on the host's loopback (the contrast); "; }
for ns in "$NS_A" "$NS_B"; do
	in_ns "$ns" pg_isready -q -t 3 -h 127.0.0.1 -p "$GAVEL_PG_PORT" -d gavel && { lo_ok=0; lo_detail+="$ns: 127.0.0.1:$GAVEL_PG_PORT answers; "; }
	in_ns "$ns" timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$R_PORT" 2>/dev/null && { lo_ok=0; lo_detail+="$ns: 127.0.0.1:$R_PORT accepts; "; }
done
check_detail() { echo "$lo_detail"; }
check "inside each node 127.0.0.1:$GAVEL_PG_PORT is not the database and 127.0.0.1:$R_PORT not Redis" [ $lo_ok = 1 ]
unset -f check_detail

# ---------------------------------------------------------------- stack

stack_tenant "${TAG}_t" --quota requests_per_second=1000 --quota burst=1000 --quota max_running=12

export GAVEL_LOG_LEVEL=info
HB_TIMEOUT=5s
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=$HB_TIMEOUT \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")

# Python only: no other toolchain probed or precompiled at start.
mkdir -p "$TMP/languages" && cp "$ROOT/languages/python3.yaml" "$TMP/languages/" || bail "languages"
NODE_A=node-a-$TAG
NODE_B=node-b-$TAG
start_node() { # ns node log: sets PID_EXEC
	setsid nsenter --net="/run/netns/$1" -- env \
		GAVEL_EXECUTOR_NODE_NAME="$2" GAVEL_EXECUTOR_MAX_PARALLEL=3 GAVEL_EXECUTOR_BURST_SLOTS=0 \
		GAVEL_EXECUTOR_POOL_SIZE=0 GAVEL_EXECUTOR_KERNEL_POOL=0 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		GAVEL_EXECUTOR_CPU_SLOTS=off GAVEL_EXECUTOR_EGRESS_IFPREFIX= GAVEL_EXECUTOR_PCH_DIR= \
		GAVEL_EXECUTOR_RUNSC_ROOT="$RUNSC_ROOT" GAVEL_EXECUTOR_WORK_ROOT="$WORK_ROOT" \
		GAVEL_EXECUTOR_CGROUP_PARENT="$CG_PARENT" GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$TMP/languages" \
		env -u GAVEL_DATABASE_URL -u GAVEL_SERVICE_DATABASE_URL \
		GAVEL_DATABASE_SERVICE_URL="$EXEC_PG_URL" GAVEL_REDIS_URL="$EXEC_REDIS_URL" \
		"$BUILD/gavel-executor" >>"$TMP/$3" 2>&1 </dev/null &
	PID_EXEC=$!
	PIDS+=("$PID_EXEC")
}
start_node "$NS_A" "$NODE_A" node-a.log
PID_A=$PID_EXEC
start_node "$NS_B" "$NODE_B" node-b.log
PID_B=$PID_EXEC
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=60s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

alive() { kill -0 "$1" 2>/dev/null; }
up() {
	alive "$PID_A" && alive "$PID_B" && alive "$PID_SCHED" && alive "$PID_FE" &&
		registered "$NODE_A" && registered "$NODE_B" && [ -n "$(rc GET gavel:sched:lock)" ]
}
if ! wait_for 120 up; then
	tail -n 15 "$TMP"/node-a.log "$TMP"/node-b.log "$TMP"/scheduler.log "$TMP"/frontend.log | sed 's/^/# /'
	bail "the stack did not come up"
fi
stack_wait_healthy 30 "$PID_A" "$PID_B" "$PID_SCHED"
ok "stack up: frontend and scheduler in the root namespace, $NODE_A in $NS_A and $NODE_B in $NS_B registered ($(since "$T_START") s)"

# ---------------------------------------------------------- submissions

cat >"$TMP/gen.py" <<'PY'
import json, os, sys
out, prefix, slow, quick = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
SLOW = 'import time\ntime.sleep(%s)\na, b = map(int, input().split())\nprint(a + b)'
QUICK = 'a, b = map(int, input().split())\nprint(a + b)'
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "manifest"), "a") as m:
    for i in range(slow + quick):
        d = {"language": "python3", "tests": [{"input": "%d %d\n" % (i, 7), "expected": "%d\n" % (i + 7)}]}
        if i < slow:
            # idle past time_ms is TLE (executor/PROTOCOL.md): above the sleep
            d["source"] = SLOW % ("3" if i % 2 else "3.5")
            d["limits"] = {"time_ms": 6000, "wall_ms": 15000}
        else:
            d["source"] = QUICK
        name = "%s%d" % (prefix, i)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(d, f)
        m.write(name + "\n")
PY
# submit DIR: every request of DIR's manifest, 6 at a time; DIR/ids gets
# the ids of the 201s; prints how many were created.
submit() {
	local dir=$1
	export B KEY DIR=$dir
	# shellcheck disable=SC2016
	xargs -P 6 -L 1 bash -c 'curl -s -m 60 -o "$DIR/$0.out" -w "%{http_code}" -H "X-Auth-Token: $KEY" \
		-H "Content-Type: application/json" --data-binary @"$DIR/$0.json" "$B/v1/submissions" >"$DIR/$0.code"' \
		<"$dir/manifest"
	python3 - "$dir" <<-'PY'
		import json, os, sys
		d = sys.argv[1]
		n = 0
		with open(os.path.join(d, "ids"), "w") as out:
		    for name in open(os.path.join(d, "manifest")).read().split():
		        try:
		            code = open(os.path.join(d, name + ".code")).read().strip()
		            sid = json.load(open(os.path.join(d, name + ".out"))).get("id")
		        except Exception:
		            code, sid = "?", None
		        if code == "201" and sid:
		            out.write(sid + "\n")
		            n += 1
		        else:
		            sys.stderr.write("# request %s: %s\n" % (name, code))
		print(n)
	PY
}
ids_sql() { awk '{ printf "%s'"'"'%s'"'"'", (NR > 1 ? "," : ""), $1 }' "$1"; }
pending() { sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$1")) AND status <> 'done'"; }
wait_done() { # ids-file seconds
	local i
	for ((i = 0; i < $2; i++)); do
		[ "$(pending "$1")" = 0 ] && return 0
		sleep 1
	done
	return 1
}
# verify IDS OUT: lost / twice / wrong figures of those ids; non-zero when
# any is not done, not AC, without a result, or without exactly one
# sandbox.finished record.
verify() {
	sql -F ' ' -c "SELECT s.id, s.status, coalesce(s.verdict, '-'), s.result IS NOT NULL, s.attempts, coalesce(s.node, '-'),
		(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id::text
		   AND a.action = 'sandbox.finished')
		FROM submissions s WHERE s.id IN ($(ids_sql "$1"))" >"$1.rows"
	python3 - "$1" "$1.rows" "$2" <<-'PY'
		import sys
		ids = open(sys.argv[1]).read().split()
		rows = {}
		for line in open(sys.argv[2]):
		    f = line.split()
		    if f:
		        rows[f[0]] = f
		lost = twice = unrecorded = wrong = 0
		bad = []
		for sid in ids:
		    r = rows.get(sid)
		    if not r or r[1] != "done" or r[3] != "t":
		        lost += 1
		        bad.append("lost %s: %s" % (sid, " ".join(r[1:]) if r else "no row"))
		        continue
		    fin = int(r[6])
		    if fin > 1:
		        twice += 1
		        bad.append("twice %s: %d sandbox.finished records (node %s, attempts %s)" % (sid, fin, r[5], r[4]))
		    elif fin == 0:
		        unrecorded += 1
		        bad.append("no sandbox.finished record %s: verdict %s (node %s, attempts %s)" % (sid, r[2], r[5], r[4]))
		    if r[2] != "AC":
		        wrong += 1
		        bad.append("verdict %s: %s (node %s, attempts %s)" % (sid, r[2], r[5], r[4]))
		with open(sys.argv[3], "w") as f:
		    f.write("lost=%d twice=%d no-record=%d not-AC=%d of %d\n" % (lost, twice, unrecorded, wrong, len(ids)))
		for b in bad[:10]:
		    print("# " + b)
		sys.exit(1 if lost or twice or unrecorded or wrong else 0)
	PY
}

mkdir -p "$TMP/p1"
python3 "$TMP/gen.py" "$TMP/p1" s "$N_SLOW" "$N_QUICK" || bail "gen.py failed"
T1=$(now_s)
created=$(submit "$TMP/p1")
N1=$((N_SLOW + N_QUICK))
check "$N1 submissions ($N_SLOW slow: 3-3.5 s sleep; $N_QUICK quick) -> $created x 201" [ "$created" = "$N1" ]

running_on() { sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TID' AND status = 'running' AND node = '$1'"; }
a_busy() { [ "$(running_on "$NODE_A")" -ge 2 ] && [ "$(rc LLEN "gavel:inflight:$NODE_A")" -ge 2 ]; }
if ! wait_for 90 a_busy; then
	notok "node a runs jobs before the cut" "running on a: $(running_on "$NODE_A"), in flight: $(rc LLEN "gavel:inflight:$NODE_A")"
	bail "node a never ran two jobs at once"
fi
sleep 1 # inside their sandboxes, not claiming
# Where the executors' sessions come from, as PostgreSQL and Redis see
# them while both nodes work: the nodes' addresses, never loopback or the
# socket.
pgsu -c "SELECT coalesce(host(client_addr), 'local') FROM pg_stat_activity WHERE usename = 'gavel_executor'" >"$TMP/pg-from"
rc CLIENT LIST | awk '/ user=gavel-executor / { for (i = 1; i <= NF; i++) if ($i ~ /^addr=/) { a = substr($i, 6); sub(/:[0-9]+$/, "", a); print a } }' >"$TMP/r-from"
counts() { sort "$1" | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }'; }
say "gavel_executor sessions in PostgreSQL: $(counts "$TMP/pg-from"); gavel-executor clients of Redis: $(counts "$TMP/r-from")"
from_nodes() { [ "$(sort -u "$1" | tr '\n' ' ')" = "$(printf '%s\n' "$IP_A" "$IP_B" | sort | tr '\n' ' ')" ]; }
check "every executor session (PostgreSQL and Redis) comes from $IP_A or $IP_B, and both nodes have some" \
	eval 'from_nodes "$TMP/pg-from" && from_nodes "$TMP/r-from"'

INFLIGHT_A=$(rc LLEN "gavel:inflight:$NODE_A")
ip link set "$VA" down || bail "could not take $VA down"
T_CUT=$(now_s)
# What node a held, read once nothing more from it can arrive.
sleep 1
sql -c "SELECT id FROM submissions WHERE tenant_id = '$TID' AND status = 'running' AND node = '$NODE_A'" >"$TMP/held"
HELD=$(wc -l <"$TMP/held")
DONE_AT_CUT=$(sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$TMP/p1/ids")) AND status = 'done'")
say "cut: $(diff_s "$T1" "$T_CUT") s after the first submission; node a held $HELD running ($INFLIGHT_A tokens in gavel:inflight:$NODE_A), $DONE_AT_CUT of $N1 done"
check "node a's link ($VA) cut while it ran $HELD jobs; its namespace and executor stay" \
	eval '[ "$HELD" -ge 1 ] && alive "$PID_A" && ip netns pids "$NS_A" | grep -qx "$PID_A"'

# ------------------------------------------- node a declared dead, jobs back

a_gone() { ! registered "$NODE_A" && [ "$(rc LLEN "gavel:inflight:$NODE_A")" = 0 ] && [ "$(rc LLEN "gavel:nq:$NODE_A")" = 0 ]; }
if wait_for 60 a_gone; then
	T_REQ=$(now_s)
	# Its lists empty and its registration gone; the jobs back in the
	# queues (at least those it held running), by the scheduler itself.
	moved=$(sed -n "s/.*executor $NODE_A stopped heartbeating: \([0-9]*\) jobs.*/\1/p" "$TMP/scheduler.log" | head -n1)
	check "the scheduler declared $NODE_A dead and put its ${moved:-?} jobs back ($(diff_s "$T_CUT" "$T_REQ") s after the cut; timeout $HB_TIMEOUT)" \
		[ "${moved:-0}" -ge "$HELD" ]
else
	T_REQ=$(now_s)
	notok "the scheduler declared $NODE_A dead and put its jobs back" \
		"registered: $(rc SISMEMBER gavel:executors "$NODE_A"), in flight: $(rc LRANGE "gavel:inflight:$NODE_A" 0 -1 | tr '\n' ' ')"
fi
if wait_done "$TMP/p1/ids" 150; then
	ok "all $N1 done ($(since "$T1") s after the first submission)"
else
	notok "all $N1 done" "$(sql -c "SELECT id, status, node, attempts FROM submissions WHERE id IN ($(ids_sql "$TMP/p1/ids")) AND status <> 'done' LIMIT 8" | tr '\n' ' ')"
fi
check "every submission: done, AC, exactly one sandbox.finished record" verify "$TMP/p1/ids" "$TMP/p1/figures"
say "phase 1: $(cat "$TMP/p1/figures")"
T_LAST=$(sql -c "SELECT extract(epoch FROM max(finished_at)) FROM submissions WHERE id IN ($(ids_sql "$TMP/p1/ids"))")
# The jobs node a held: run again on node b (its claim set node and
# started_at), each once more than before.
held_rows=$(sql -F ' ' -c "SELECT count(*) FILTER (WHERE node = '$NODE_B' AND status = 'done' AND attempts >= 2),
	extract(epoch FROM min(started_at)), extract(epoch FROM max(finished_at))
	FROM submissions WHERE id IN ($(ids_sql "$TMP/held"))")
read -r held_on_b held_t0 held_t1 <<<"$held_rows"
say "after the cut: jobs back in the queues $(diff_s "$T_CUT" "$T_REQ") s; first held job restarted on b $(diff_s "$T_CUT" "${held_t0:-0}") s;" \
	"last held job done $(diff_s "$T_CUT" "${held_t1:-0}") s; last result $(diff_s "$T_CUT" "${T_LAST:-0}") s"
check "the $HELD jobs node a held were run again and finished by node b ($held_on_b)" [ "${held_on_b:-0}" = "$HELD" ]

# ------------------------------------------------------ the link returns

# The results as they stand, to compare after node a's late ones.
snapshot() { sql -c "SELECT id, verdict, md5(result::text), finished_at, node,
	(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id::text AND a.action = 'sandbox.finished')
	FROM submissions s WHERE id IN ($(ids_sql "$TMP/p1/ids")) ORDER BY id"; }
snapshot >"$TMP/before"
late_before=$(grep -c "already finished by an earlier run" "$TMP/node-a.log")
ip link set "$VA" up || bail "could not bring $VA up"
T_UP=$(now_s)
if wait_for 60 registered "$NODE_A" && alive "$PID_A"; then
	T_BACK=$(now_s)
	ok "$NODE_A (the same process, pid $PID_A) registered again $(diff_s "$T_UP" "$T_BACK") s after its link returned"
else
	T_BACK=$(now_s)
	notok "$NODE_A registered again after its link returned" "$(tail -n 5 "$TMP/node-a.log" | tr '\n' ' ')"
fi
# Its workers come back from the jobs they held: the late results are
# written (not recorded: already done) and the node is idle again.
a_idle() {
	registered "$NODE_A" && [ "$(rc HGET "gavel:exec:$NODE_A" running)" = 0 ] &&
		[ "$(rc LLEN "gavel:inflight:$NODE_A")" = 0 ]
}
if wait_for 120 a_idle; then
	T_IDLE=$(now_s)
	ok "$NODE_A's workers done with what they held, idle $(diff_s "$T_UP" "$T_IDLE") s after the link returned"
else
	T_IDLE=$(now_s)
	notok "$NODE_A's workers done with what they held" \
		"running: $(rc HGET "gavel:exec:$NODE_A" running), in flight: $(rc LRANGE "gavel:inflight:$NODE_A" 0 -1 | tr '\n' ' '); $(tail -n 5 "$TMP/node-a.log" | tr '\n' ' ')"
fi
sleep 1
late=$(($(grep -c "already finished by an earlier run" "$TMP/node-a.log") - late_before))
say "node a's late results not recorded (already finished by an earlier run): $late of $HELD held"
snapshot >"$TMP/after"
verify "$TMP/p1/ids" "$TMP/p1/figures-after" >"$TMP/p1/verify-after"
say "after the restore: $(cat "$TMP/p1/figures-after")"
check_detail() { cat "$TMP/p1/verify-after"; diff "$TMP/before" "$TMP/after" | head -n 6 | tr '\n' ' '; }
check "node a's late results changed no row and added no sandbox.finished record" \
	eval 'cmp -s "$TMP/before" "$TMP/after" && ! [ -s "$TMP/p1/verify-after" ]'
unset -f check_detail

mkdir -p "$TMP/p2"
python3 "$TMP/gen.py" "$TMP/p2" r 0 "$N_AFTER" || bail "gen.py failed"
T2=$(now_s)
created2=$(submit "$TMP/p2")
if [ "$created2" = "$N_AFTER" ] && wait_done "$TMP/p2/ids" 90 && verify "$TMP/p2/ids" "$TMP/p2/figures"; then
	by_node=$(sql -c "SELECT node || ' ' || count(*) FROM submissions WHERE id IN ($(ids_sql "$TMP/p2/ids")) GROUP BY node ORDER BY node" | tr '\n' ' ')
	ok "$N_AFTER submissions after the restore: done, AC, one result each in $(since "$T2") s (by node: $by_node)"
else
	notok "$N_AFTER submissions after the restore judged" "created $created2; $(cat "$TMP/p2/figures" 2>/dev/null)"
fi
check "no other rows for the tenant (none invented or duplicated)" \
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TID'")" = "$((N1 + N_AFTER))" ]
check "both executors and the scheduler still running" eval 'alive "$PID_A" && alive "$PID_B" && alive "$PID_SCHED"'

dead_a=$(grep -c "executor $NODE_A stopped heartbeating" "$TMP/scheduler.log")
dead_b=$(grep -c "executor $NODE_B stopped heartbeating" "$TMP/scheduler.log")
reconciled=$(sed -n 's/.*reconciler: \([0-9]*\) unfinished.*/\1/p' "$TMP/scheduler.log" | awk '{ s += $1 } END { print s + 0 }')
say "figures: after the cut $(cat "$TMP/p1/figures"); after the restore $(cat "$TMP/p1/figures-after"); node a declared dead ${dead_a}x, node b ${dead_b}x;" \
	"re-enqueued by the reconciler: $reconciled; late results of node a not recorded: $late"
say "timeline (s after the cut): jobs back $(diff_s "$T_CUT" "$T_REQ"), last result $(diff_s "$T_CUT" "${T_LAST:-0}");" \
	"(s after the link returned): registered $(diff_s "$T_UP" "$T_BACK"), idle $(diff_s "$T_UP" "$T_IDLE")"
say "total $(since "$T_START") s"
[ "$n" -eq "$PLAN" ] || say "planned $PLAN, ran $n"
[ "$fails" -eq 0 ]
