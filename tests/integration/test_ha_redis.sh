#!/usr/bin/env bash
# Redis behind Sentinel, its master killed under load.
#
# A master, a replica and three Sentinels (Debian's redis-sentinel) on
# 127.0.0.1, with the production ACL users (tests/lib/redis_sentinel.sh).
# Every daemon gets a redis-sentinel:// URL as its own user: it asks the
# Sentinels where the master is, checks ROLE, and asks again when its
# connection breaks or meets READONLY (common/redis.c, frontend/redis.c).
# A frontend, two schedulers (leader and standby) and two executors.
#
# A client sends GAVEL_HA_N submissions (default 160, 4 at a time,
# retrying each refused one until accepted); after a third of them are
# accepted the master is killed with SIGKILL. The Sentinels promote the
# replica; the daemons follow; what the replica had not yet received (an
# enqueue, a BLMOVE, a registration) is rebuilt from PostgreSQL by the
# scheduler's reconciler, as after a flush, and a token that Redis hands
# out twice is refused by the claim's fence (executor/daemon/job.c).
#
# Checks: every accepted submission reaches exactly one result with its
# expected verdict (lost: 0), none was claimed twice (attempts = 1 in
# PostgreSQL: judged twice: 0), one sandbox.finished audit record each,
# the Sentinels name the former replica, the stack is healthy again; after
# the switchover the frontend moved to the new master on the Sentinels'
# word (the old one does not break: it stays a master ~10 s more).
# Figures (# lines): time from the master's death to the first submission
# accepted after it, refusals meanwhile, time to the last result.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
N=${GAVEL_HA_N:-160}

echo "1..16"
. tests/lib/tap.sh
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-server redis-sentinel redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing (deploy/deps.sh installs it)"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup haredis "${GAVEL_HA_KEEP_LOGS:-}"
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
# shellcheck source=tests/lib/redis_sentinel.sh
. tests/lib/redis_sentinel.sh
trap 'sentinel_stop; stack_cleanup' EXIT

sentinel_start "$TMP/redis" 127.0.0.1
ok "Redis master, replica and three Sentinels up (replica in sync, quorum 2)"

# Every daemon and this script through the Sentinels, each as its own user.
SURL_FE=$(sentinel_url "$GAVEL_REDIS_URL_FRONTEND")
SURL_SCHED=$(sentinel_url "$GAVEL_REDIS_URL_SCHEDULER")
SURL_EXEC=$(sentinel_url "$GAVEL_REDIS_URL_EXECUTOR")
STACK_AS_FRONTEND+=("GAVEL_REDIS_URL=$SURL_FE")
STACK_AS_SCHEDULER+=("GAVEL_REDIS_URL=$SURL_SCHED")
STACK_AS_EXECUTOR+=("GAVEL_REDIS_URL=$SURL_EXEC")
# rc: the admin user on whichever server is the master now.
rc() {
	local m
	m=$(sentinel_master) || return 1
	REDISCLI_AUTH=$RS_ADMIN_PASS redis-cli -h "${m% *}" -p "${m#* }" --user "$RS_ADMIN_USER" --no-auth-warning "$@"
}

stack_tenant "${TAG}_t" --quota requests_per_second=2000 --quota burst=2000 --quota max_running=8

export GAVEL_LOG_LEVEL=info
export GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=4s \
	GAVEL_SCHEDULER_LEADER_LOCK_TTL=3s GAVEL_SCHEDULER_RECONCILE_INTERVAL=2s \
	GAVEL_SCHEDULER_RECONCILE_MIN_AGE=3s
for s in schedA schedB; do
	GAVEL_SCHEDULER_INSTANCE=$s "${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/$s.log" 2>&1 </dev/null &
	PIDS+=($!)
done
NODES=()
for k in 1 2; do
	GAVEL_EXECUTOR_NODE_NAME=n$k-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		stack_start_executor "n$k.log"
	NODES+=("n$k-$TAG")
done
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_FE" "$PID_EXEC"
ok "frontend, two schedulers and two executors up through the Sentinels"

# The CLI through the Sentinels too; without their password it is refused.
SURL_ADMIN=$(sentinel_url "$GAVEL_REDIS_URL")
NOPW_OUT=$(GAVEL_REDIS_URL=${SURL_ADMIN%%\?*} "$BUILD/gavel" tenant update "${TAG}_t" --weight 2 2>&1)
NOPW_RC=$?
PW_OUT=$(GAVEL_REDIS_URL=$SURL_ADMIN "$BUILD/gavel" tenant update "${TAG}_t" --weight 1 2>&1)
PW_RC=$?
say "gavel tenant update without the Sentinels' password: rc $NOPW_RC, $(tail -n1 <<<"$NOPW_OUT")"
[ "$NOPW_RC" -ne 0 ] && [ "$PW_RC" -eq 0 ] &&
	ok "gavel tenant update through the Sentinels: refused without their password, done with it" ||
	notok "the CLI through the Sentinels: without the password rc $NOPW_RC, with it rc $PW_RC ($(tail -n1 <<<"$PW_OUT"))"

# ------------------------------------------------------------ the load

cat >"$TMP/drive.py" <<'PY'
import json, os, signal, subprocess, sys, threading, time, urllib.request
# fault: a pid to kill with SIGKILL, or a command line to run ("cmd:...")
base, key, n, fault, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
C_SUM = '#include <stdio.h>\nint main(void){long a,b;if(scanf("%ld %ld",&a,&b)!=2)return 1;printf("%ld\\n",a+b);return 0;}'
PY_SUM = 'a, b = map(int, input().split())\nprint(a + b)'
PY_SLOW = 'import time\ntime.sleep(1)\na, b = map(int, input().split())\nprint(a + b)'
PY_WA = 'print(0)'
KINDS = [("python3", PY_SUM, "AC"), ("c", C_SUM, "AC"), ("python3", PY_WA, "WA"), ("python3", PY_SLOW, "AC")]
lock = threading.Lock()
accepted, refused = {}, []
state = {"next": 0, "kill_at": None}

def body(i):
    lang, src, _ = KINDS[i % len(KINDS)]
    return json.dumps({"language": lang, "source": src, "limits": {"time_ms": 4000},
                       "tests": [{"input": "1 2\n", "expected": "3\n"}]}).encode()

def submit(i):
    while True:
        started = time.time()
        req = urllib.request.Request(base + "/v1/submissions", data=body(i), method="POST",
                                     headers={"Content-Type": "application/json", "X-Auth-Token": key})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                sid = json.load(r)["id"]
            with lock:
                accepted[i] = (sid, started, time.time())
            return
        except Exception as e:  # refused (503) or cut: the client tries again
            with lock:
                refused.append((i, started, str(e)[:80]))
            time.sleep(0.1)

def worker():
    while True:
        with lock:
            i = state["next"]
            if i >= n:
                return
            state["next"] += 1
            if state["kill_at"] is None and len(accepted) >= n // 3:
                state["kill_at"] = time.time()
                if fault.startswith("cmd:"):
                    subprocess.run(fault[4:].split(), stdout=subprocess.DEVNULL, check=True)
                else:
                    os.kill(int(fault), signal.SIGKILL)
        submit(i)
        time.sleep(0.4)  # about 10 a second: the kill finds work queued and running

ts = [threading.Thread(target=worker) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
k = state["kill_at"] or 0
after = sorted(a[2] for a in accepted.values() if a[1] >= k)
with open(out, "w") as f:
    json.dump({"kill_at": k, "first_after": after[0] if after else None,
               "refused_after_kill": sum(1 for r in refused if r[1] >= k),
               "ids": {str(i): [accepted[i][0], KINDS[i % len(KINDS)][2]] for i in accepted}}, f)
PY
T0=$(date +%s.%N)
python3 "$TMP/drive.py" "$B" "$KEY" "$N" "$RS_PID_MASTER" "$TMP/drive.json" 2>"$TMP/drive.err" ||
	bail "the client failed: $(tail -n3 "$TMP/drive.err")"
read -r KILL_AT FIRST_AFTER REFUSED ACCEPTED < <(python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
print(d["kill_at"], d["first_after"] or 0, d["refused_after_kill"], len(d["ids"]))' "$TMP/drive.json")
[ "$ACCEPTED" -eq "$N" ] && ok "all $N submissions accepted in the end (the client retried $REFUSED refused during the failover)" ||
	notok "accepted $ACCEPTED of $N"
say "time from the master's death to the first submission accepted after it: $(python3 -c "print('%.2f s' % ($FIRST_AFTER - $KILL_AT))")"
say "requests refused after the kill (503 or a cut connection; the client retried): $REFUSED"

for _ in $(seq 150); do
	NEW_MASTER=$(sentinel_master)
	[ "${NEW_MASTER#* }" = "$RS_REPLICA_PORT" ] && break
	sleep 0.2
done
[ "${NEW_MASTER#* }" = "$RS_REPLICA_PORT" ] && ok "the Sentinels promoted the replica (master now ${NEW_MASTER/ /:})" ||
	notok "the Sentinels name ${NEW_MASTER:-nothing}, not the replica on port $RS_REPLICA_PORT"

say "the Sentinels switched the master $(python3 -c "
import datetime,sys; t=datetime.datetime.strptime(sys.argv[1], '%d %b %Y %H:%M:%S.%f').replace(tzinfo=datetime.timezone.utc)
print('%.2f s after the kill' % (t.timestamp() - $KILL_AT))" "$(grep -h '+switch-master' "$TMP"/redis/sentinel*.log | head -n1 | awk '{print $2, $3, $4, $5}')")"

# ------------------------------------------------------------ outcomes

python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
for i,(sid,want) in sorted(d["ids"].items(), key=lambda x:int(x[0])): print(sid, want)' "$TMP/drive.json" >"$TMP/ids"
ID_LIST=$(cut -d' ' -f1 "$TMP/ids" | sed "s/.*/'&'/" | paste -sd,)
done_count() { sql -c "SELECT count(*) FROM submissions WHERE id IN ($ID_LIST) AND status = 'done'"; }
for _ in $(seq 600); do
	[ "$(done_count)" -ge "$N" ] && break
	sleep 0.5
done
DONE=$(done_count)
say "time from the kill to the last result: $(python3 -c "import time; print('%.1f s' % (time.time() - $KILL_AT))")"
sql -c "SELECT id, verdict, attempts FROM submissions WHERE id IN ($ID_LIST)" -F' ' >"$TMP/results"
LOST=$((N - DONE))
WRONG=$(awk 'NR==FNR{want[$1]=$2; next} want[$1] != $2' "$TMP/ids" "$TMP/results" | wc -l)
TWICE=$(awk '$3 > 1' "$TMP/results" | wc -l)
say "submissions lost: $LOST; judged twice (claimed more than once): $TWICE; wrong verdict: $WRONG"
[ "$LOST" -eq 0 ] && ok "every accepted submission has its result (lost: 0)" || {
	notok "$LOST submissions never finished"
	sql -c "SELECT id, status, node, attempts FROM submissions WHERE id IN ($ID_LIST) AND status <> 'done'" | head -5 | sed 's/^/# /'
}
[ "$WRONG" -eq 0 ] && ok "every result is the expected verdict" || {
	notok "$WRONG results differ from the expected verdict"
	awk 'NR==FNR{want[$1]=$2; next} want[$1] != $2' "$TMP/ids" "$TMP/results" | head -5 | sed 's/^/# /'
}
[ "$TWICE" -eq 0 ] && ok "no submission was claimed twice (judged twice: 0)" || notok "$TWICE submissions were claimed more than once"
FINISHED=$(sql -c "SELECT count(*) FROM audit_log WHERE tenant_id = '$TID' AND action = 'sandbox.finished'")
[ "$FINISHED" -eq "$N" ] && ok "exactly one sandbox.finished audit record per submission ($FINISHED)" ||
	notok "$FINISHED sandbox.finished records for $N submissions"
REFUSED_TWICE=$(grep -c "a token given out twice" "$TMP"/n1.log "$TMP"/n2.log | awk -F: '{s+=$2} END{print s+0}')
say "tokens Redis handed out again and the claim's fence refused: $REFUSED_TWICE"

# The stack on the new master: the registry and the leader lock rebuilt.
for _ in $(seq 100); do
	[ "$(rc SCARD gavel:executors)" = 2 ] && [ -n "$(rc GET gavel:sched:lock)" ] && break
	sleep 0.2
done
HEALTH=$(curl -s -m 5 "$B/v1/health" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))' 2>/dev/null)
[ "$HEALTH" = ok ] && [ "$(rc SCARD gavel:executors)" = 2 ] && [ -n "$(rc GET gavel:sched:lock)" ] &&
	ok "healthy on the new master: both executors registered, a scheduler leads" ||
	notok "after the failover: health '$HEALTH', executors $(rc SCARD gavel:executors), lock '$(rc GET gavel:sched:lock)'"
say "duration: $(python3 -c "import time; print('%.0f s' % (time.time() - $T0))") for the load and its results"

# ------------------------------------------------- a token given out twice
# What a failover that undoes a BLMOVE leaves: the token of a running job
# back in a node queue. Played here by hand, on both nodes' queues, while
# the job runs on one of them: neither may run it again, and neither node's
# in-flight list may keep a copy once the job is done.
SLOW=$(curl -s -m 10 -H "X-Auth-Token: $KEY" -H 'Content-Type: application/json' -d '{"language":"python3",
	"source":"import time\ntime.sleep(4)\nprint(3)","limits":{"time_ms":4000,"wall_ms":10000},
	"tests":[{"input":"","expected":"3\n"}]}' "$B/v1/submissions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
RUN_NODE=""
for _ in $(seq 100); do
	RUN_NODE=$(sql -c "SELECT node FROM submissions WHERE id = '$SLOW' AND status = 'running'")
	[ -n "$RUN_NODE" ] && break
	sleep 0.1
done
TOKEN=$(rc LRANGE "gavel:inflight:$RUN_NODE" 0 -1 | grep -F ":$SLOW:" | head -n1)
if [ -z "$RUN_NODE" ] || [ -z "$TOKEN" ]; then
	notok "the slow job did not start (node '$RUN_NODE', token '$TOKEN')"
	notok "(skipped: no token to hand out twice)"
else
	for node in "${NODES[@]}"; do rc RPUSH "gavel:nq:$node" "$TOKEN" >/dev/null; done
	for _ in $(seq 200); do
		[ "$(sql -c "SELECT status FROM submissions WHERE id = '$SLOW'")" = done ] && break
		sleep 0.1
	done
	sleep 1
	ROW=$(sql -c "SELECT status, verdict, attempts FROM submissions WHERE id = '$SLOW'")
	REFUSED=$(cat "$TMP"/n1.log "$TMP"/n2.log | grep -F "job=$SLOW" | grep -c "a token given out twice")
	[ "$ROW" = "done|AC|1" ] && [ "$REFUSED" -eq 2 ] &&
		ok "a running job's token put back on both nodes' queues is refused by both claims: one run, AC" ||
		notok "the job handed out twice: row '$ROW', refusals logged $REFUSED (want done|AC|1 and 2)"
	LEFT=0
	for node in "${NODES[@]}"; do
		LEFT=$((LEFT + $(rc LRANGE "gavel:inflight:$node" 0 -1 | grep -cF ":$SLOW:")))
		LEFT=$((LEFT + $(rc LRANGE "gavel:nq:$node" 0 -1 | grep -cF ":$SLOW:")))
	done
	[ "$LEFT" -eq 0 ] && ok "no copy of its token is left in a node's queue or in-flight list" ||
		notok "$LEFT copies of the token left in node queues or in-flight lists"
fi

# An acknowledgement that Redis lost: the finished job's token back in a
# node's in-flight list would hold that slot for good. The reconciler
# (every 2 s here) sees the job done in PostgreSQL and removes it.
stale_gone() { ! rc LRANGE "gavel:inflight:${NODES[0]}" 0 -1 | grep -qF ":$SLOW:"; }
if [ -n "$TOKEN" ] && rc RPUSH "gavel:inflight:${NODES[0]}" "$TOKEN" >/dev/null && wait_for 20 stale_gone &&
	grep -q "in-flight tokens of finished submissions removed" "$TMP"/sched*.log; then
	ok "a finished job's token put back in a node's in-flight list is removed by the reconciler"
else
	notok "a finished job's token left in ${NODES[0]}'s in-flight list: $(rc LRANGE "gavel:inflight:${NODES[0]}" 0 -1 | tr '\n' ' ')"
fi
# ------------------------------------------------------------ switchover
# Planned maintenance: the old master comes back (the Sentinels make it a
# replica), then SENTINEL FAILOVER hands the master role back to it while
# submissions come in. The demoted server stays up: connections on it are
# closed by the Sentinels or meet READONLY, and must find the new master.
setsid redis-server "$TMP/redis/master.conf" </dev/null >/dev/null 2>&1 &
RS_PIDS+=($!)
for _ in $(seq 150); do
	rc INFO replication | tr -d '\r' | grep -q "^slave0:.*port=$RS_MASTER_PORT,state=online" && break
	sleep 0.2
done
N2=40
REDISCLI_AUTH=$RS_SENTINEL_CLIENT_PASS python3 "$TMP/drive.py" "$B" "$KEY" "$N2" "cmd:redis-cli --no-auth-warning -h 127.0.0.1 -p ${RS_SENTINEL_PORTS[0]} SENTINEL FAILOVER $RS_NAME" \
	"$TMP/drive2.json" 2>"$TMP/drive2.err" || bail "the client failed: $(tail -n3 "$TMP/drive2.err")"
python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
for i,(sid,want) in d["ids"].items(): print(sid, want)' "$TMP/drive2.json" >"$TMP/ids2"
ID_LIST2=$(cut -d' ' -f1 "$TMP/ids2" | sed "s/.*/'&'/" | paste -sd,)
for _ in $(seq 300); do
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE id IN ($ID_LIST2) AND status = 'done'")" -ge "$N2" ] && break
	sleep 0.5
done
sql -c "SELECT id, verdict, attempts FROM submissions WHERE id IN ($ID_LIST2) AND status = 'done'" -F' ' >"$TMP/results2"
GOOD=$(awk 'NR==FNR{want[$1]=$2; next} want[$1] == $2 && $3 == 1' "$TMP/ids2" "$TMP/results2" | wc -l)
NOW_MASTER=$(sentinel_master)
say "switchover: master now ${NOW_MASTER/ /:}; $GOOD of $N2 submissions done once with the expected verdict"
[ "${NOW_MASTER#* }" = "$RS_MASTER_PORT" ] && ok "SENTINEL FAILOVER gave the master role back to the restarted server" ||
	notok "after SENTINEL FAILOVER the Sentinels name ${NOW_MASTER:-nothing}"
[ "$(wc -l <"$TMP/ids2")" -eq "$N2" ] && [ "$GOOD" -eq "$N2" ] &&
	ok "all $N2 submissions sent during the switchover: accepted, judged once, expected verdicts" ||
	{
		notok "switchover: $(wc -l <"$TMP/ids2") accepted, $GOOD of $N2 done once with the expected verdict"
		# Which, and how: not done in time, a wrong verdict, or claimed twice.
		awk 'NR==FNR{want[$1]=$2; next} !(want[$1] == $2 && $3 == 1) {print "# want", want[$1], "got", $0}' \
			"$TMP/ids2" "$TMP/results2" | head -5
		sql -c "SELECT id, status, node, attempts FROM submissions WHERE id IN ($ID_LIST2) AND status <> 'done'" |
			head -5 | sed 's/^/# not done: /'
		grep -h "a token given out twice\|claim.*failed\|READONLY" "$TMP"/n1.log "$TMP"/n2.log 2>/dev/null | tail -n 5 | sed 's/^/# /'
		# Every daemon's log kept for a look after the run.
		KEPT=$(mktemp -d /tmp/gavel-ha-redis-logs.XXXXXX) && cp -r "$TMP"/*.log "$TMP/redis" "$KEPT"/ 2>/dev/null &&
			say "logs kept in $KEPT"
		# The story of the first one claimed twice, from every daemon.
		TWICE=$(awk '$3 > 1 {print $1; exit}' "$TMP/results2")
		[ -n "$TWICE" ] && grep -h "$TWICE\|put back in\|switch\|master" "$TMP"/*.log 2>/dev/null |
			grep -v "^#" | sort | tail -n 30 | cut -c1-240 | sed 's/^/# /'
	}
# The frontend's connections did not break in the switchover (the old
# master stays up, a master for ~10 s more): its Sentinel watch moved them.
grep -q "the Sentinels name .* the master; the command connection moves there" "$TMP/frontend.log" &&
	ok "the frontend's command connection left the demoted master on the Sentinels' word" ||
	notok "the frontend never moved its command connection after SENTINEL FAILOVER: $(grep -c 'redis:' "$TMP/frontend.log") redis lines in its log"
[ $n -eq 16 ] || say "planned 16, ran $n"
[ $fails -eq 0 ]
