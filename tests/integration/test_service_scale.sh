#!/usr/bin/env bash
# The service at scale and under faults, driven over HTTP: gavel-frontend,
# two gavel-scheduler instances (leader + standby) and two gavel-executor
# nodes (real runsc, each with its own node name; the engine keeps each
# node's runsc, work and cgroup roots apart under <root>/<node>/w<k>)
# against the harness's PostgreSQL and Redis.
#
#   1. 300 submissions from three tenants, sent concurrently (xargs -P 8
#      curl, wait=false), native and Judge0 mixed, C/Python and a few Java,
#      AC/WA/TLE/RE/CE: each reaches its expected verdict; none lost (every
#      row done), none judged twice (exactly one sandbox.finished audit
#      record each, checked in PostgreSQL).
#   2. Fault run, 60 slower submissions: kill -9 of an executor while it
#      runs jobs (restarted a few seconds later), redis-cli FLUSHALL in the
#      middle (the reconciler re-enqueues what PostgreSQL still shows as
#      queued/running; the executors re-register on their next heartbeat;
#      the flushed gavel:tenantcfg:* hashes fall back to the defaults) and
#      kill -9 of the active scheduler (the standby takes over): every
#      submission still reaches exactly one final result. A job that failed
#      three attempts may end IE; they are counted, and more than 5% fails.
#
# Uses GAVEL_DATABASE_URL / GAVEL_<DAEMON>_DATABASE_URL / GAVEL_REDIS_URL from
# tests/lib/services.sh when set (tests/run.sh), else starts its own. Needs
# root (runsc, cgroups). Prints TAP and the figures (durations, verdicts,
# re-enqueues, attempts) as comments. Every process it starts is stopped on
# exit, and its temporary folders and cgroups are removed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
N1=${GAVEL_SCALE_N1:-300} # phase 1 size
N2=${GAVEL_SCALE_N2:-60}  # fault run size

PLAN=19
echo "1..$PLAN"
. tests/lib/tap.sh
T_START=$(date +%s)
say() { printf '# %s\n' "$*"; }
now_s() { date +%s.%N; }
since() { python3 -c "import sys; print('%.1f' % ($(now_s) - float(sys.argv[1])))" "$1"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid xargs; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup scale "${GAVEL_SCALE_KEEP_LOGS:-}"
declare -A TID KEY
for t in a b c; do
	"$BUILD/gavel" tenant create "${TAG}_$t" >"$TMP/t$t" 2>>"$TMP/cli.log" || bail "gavel tenant create: $(cat "$TMP/cli.log")"
	TID[$t]=$(cut -f1 "$TMP/t$t")
	KEY[$t]=$("$BUILD/gavel" key create --tenant "${TAG}_$t" 2>>"$TMP/cli.log")
	# 300 requests in a few seconds: over the default 20/s rate limit.
	"$BUILD/gavel" tenant update "${TAG}_$t" --quota requests_per_second=2000 --quota burst=2000 \
		>>"$TMP/cli.log" 2>&1 || bail "gavel tenant update: $(cat "$TMP/cli.log")"
	[ -n "${TID[$t]}" ] && [ -n "${KEY[$t]}" ] || bail "gavel key create: $(cat "$TMP/cli.log")"
done
# Tenant a's own scheduling config (weight 2, 3 running): after FLUSHALL
# the scheduler must publish it again from PostgreSQL.
"$BUILD/gavel" tenant update "${TAG}_a" --weight 2 --quota max_running=3 >>"$TMP/cli.log" 2>&1 ||
	bail "gavel tenant update: $(cat "$TMP/cli.log")"
TIDS="'${TID[a]}','${TID[b]}','${TID[c]}'"
ok "migrate, three tenants and their keys made with the CLI"

export GAVEL_LOG_LEVEL=info
# Small reconciler periods: after FLUSHALL, PostgreSQL's queued/running
# rows are back in Redis within seconds.
export GAVEL_SCHEDULER_TICK_INTERVAL=50ms GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=4s \
	GAVEL_SCHEDULER_LEADER_LOCK_TTL=3s GAVEL_SCHEDULER_RECONCILE_INTERVAL=2s \
	GAVEL_SCHEDULER_RECONCILE_MIN_AGE=3s
start_sched() { # instance
	GAVEL_SCHEDULER_INSTANCE=$1 "${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/$1.log" 2>&1 </dev/null &
	PIDS+=($!)
	eval "PID_$1=$!"
}
# Node names unique to this run; each node's sandboxes live under
# <root>/<node>/w<k> and the cgroup <parent>/<node>-w<k>.
NODE1=n1-$TAG
NODE2=n2-$TAG
start_exec() { # log-name node slots
	GAVEL_EXECUTOR_NODE_NAME=$2 GAVEL_EXECUTOR_MAX_PARALLEL=$3 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=500ms \
		stack_start_executor "$1.log"
	eval "PID_$1=$PID_EXEC"
}
start_sched schedA
sleep 0.3
start_sched schedB
start_exec n1 "$NODE1" 2
start_exec n2 "$NODE2" 2
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=90s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

daemons_alive() {
	local p
	for p in "$PID_n1" "$PID_n2" "$PID_FE"; do
		kill -0 "$p" 2>/dev/null || return 1
	done
}
up() { daemons_alive && registered "$NODE1" && registered "$NODE2" && [ -n "$(rc GET gavel:sched:lock)" ]; }
if ! wait_for 120 up; then
	tail -n 20 "$TMP"/n1.log "$TMP"/n2.log "$TMP"/schedA.log "$TMP"/frontend.log | sed 's/^/# /'
	bail "the stack did not come up"
fi
ok "stack up: frontend, leader + standby scheduler, two executors registered ($(($(date +%s) - T_START)) s)"
leader_of() { rc GET gavel:sched:lock | cut -d: -f1; }

# ---------------------------------------------------------- requests

# gen.py OUTDIR PHASE COUNT: OUTDIR/<i>.json and OUTDIR/manifest
# ("i api tenant want" per line). Phase 1: the verdict mix; phase 2:
# slower jobs (sleeps) so that the faults find work in flight.
cat >"$TMP/gen.py" <<'PY'
import json, os, sys
out, phase, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
C_SUM = '#include <stdio.h>\nint main(void){long a,b;if(scanf("%ld %ld",&a,&b)!=2)return 1;printf("%ld\\n",a+b);return 0;}'
C_WA = '#include <stdio.h>\nint main(void){puts("42");return 0;}'
C_RE = '#include <stdio.h>\nint main(void){int *p = 0; *p = 1; return 0;}'
C_TLE = 'int main(void){volatile unsigned long x = 0; for (;;) x++;}'
C_CE = 'int main( {'
PY_SUM = 'a, b = map(int, input().split())\nprint(a + b)'
PY_SLOW = 'import time\ntime.sleep(%s)\na, b = map(int, input().split())\nprint(a + b)'
PY_WA = 'print(0)'
PY_RE = 'raise SystemExit(3)'
PY_TLE = 'while True: pass'
JAVA_SUM = ('import java.util.Scanner;\npublic class Main { public static void main(String[] a) { '
            'Scanner s = new Scanner(System.in); long x = s.nextLong(), y = s.nextLong(); '
            'System.out.println(x + y); } }')
J0 = {"c": 50, "python3": 71, "java": 62}

def kinds1(i):
    if i % 100 == 50:
        return "java", JAVA_SUM, "AC", None
    k = i % 20
    return [
        ("c", C_SUM, "AC", None), ("python3", PY_SUM, "AC", None), ("python3", PY_SUM, "AC", None),
        ("c", C_SUM, "AC", None), ("python3", PY_WA, "WA", None), ("c", C_CE, "CE", None),
        ("python3", PY_SUM, "AC", None), ("c", C_RE, "RE", None), ("python3", PY_TLE, "TLE", 300),
        ("c", C_WA, "WA", None), ("python3", PY_RE, "RE", None), ("c", C_SUM, "AC", None),
        ("python3", PY_SUM, "AC", None), ("c", C_TLE, "TLE", 300), ("python3", PY_SUM, "AC", None),
        ("c", C_SUM, "AC", None), ("python3", PY_WA, "WA", None), ("c", C_CE, "CE", None),
        ("python3", PY_SUM, "AC", None), ("c", C_SUM, "AC", None),
    ][k]

def kinds2(i):
    k = i % 6
    return [
        # A program idle for its whole time limit is TLE (as in DOMjudge
        # and Kattis): the slow ones get a limit above their sleep.
        ("python3", PY_SLOW % "1.5", "AC", 4000), ("python3", PY_SLOW % "1", "AC", 4000),
        ("c", C_SUM, "AC", None), ("python3", PY_WA, "WA", None),
        ("python3", PY_SLOW % "0.5", "AC", 4000), ("c", C_WA, "WA", None),
    ][k]

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "manifest"), "w") as m:
    for i in range(count):
        lang, src, want, tl = (kinds1 if phase == "1" else kinds2)(i)
        tenant = "abc"[i % 3]
        api = "judge0" if (i // 20) % 2 == 1 and lang != "java" else "native"
        if api == "native":
            d = {"language": lang, "source": src,
                 "tests": [{"input": "1 2\n", "expected": "3\n"}, {"input": "20 22\n", "expected": "42\n"}]}
            if tl:
                d["limits"] = {"time_ms": tl}
            if lang == "java":
                # the JVM's start-up alone can use over the default 1 s of
                # CPU on two busy cores
                d["limits"] = {"time_ms": 5000, "wall_ms": 15000}
        else:
            d = {"language_id": J0[lang], "source_code": src, "stdin": "1 2\n", "expected_output": "3\n"}
            if tl:
                d["cpu_time_limit"] = str(tl / 1000.0)
        with open(os.path.join(out, "%d.json" % i), "w") as f:
            json.dump(d, f)
        m.write("%d %s %s %s\n" % (i, api, tenant, want))
PY

# submit_all DIR: sends every request of DIR concurrently (8 at a time,
# wait=false) and leaves DIR/<i>.code and DIR/<i>.out.
submit_all() {
	local dir=$1
	export B DIR=$dir
	export KA=${KEY[a]} KB=${KEY[b]} KC=${KEY[c]}
	# shellcheck disable=SC2016
	xargs -P 8 -L 1 bash -c '
		i=$0 api=$1 ten=$2
		case $ten in a) k=$KA ;; b) k=$KB ;; *) k=$KC ;; esac
		if [ "$api" = judge0 ]; then url="$B/submissions?base64_encoded=false&wait=false"; else url="$B/v1/submissions"; fi
		curl -s -m 60 -o "$DIR/$i.out" -w "%{http_code}" -H "X-Auth-Token: $k" \
			-H "Content-Type: application/json" --data-binary @"$DIR/$i.json" "$url" >"$DIR/$i.code"
	' <"$dir/manifest"
}
# collect DIR: DIR/ids ("id want" per line) from the answers; prints the
# number created (201 with an id).
collect() {
	python3 - "$1" <<-'PY'
		import json, os, sys
		d = sys.argv[1]
		ok = 0
		with open(os.path.join(d, "ids"), "w") as out:
		    for line in open(os.path.join(d, "manifest")):
		        i, api, ten, want = line.split()
		        try:
		            code = open(os.path.join(d, i + ".code")).read().strip()
		            body = json.load(open(os.path.join(d, i + ".out")))
		        except Exception:
		            continue
		        sid = body.get("token") if api == "judge0" else body.get("id")
		        if code == "201" and sid:
		            out.write("%s %s %s\n" % (sid, want, api))
		            ok += 1
		        else:
		            sys.stderr.write("# request %s (%s): %s %s\n" % (i, api, code, json.dumps(body)[:300]))
		print(ok)
	PY
}
ids_sql() { awk '{printf "%s'"'"'%s'"'"'", (NR > 1 ? "," : ""), $1}' "$1/ids"; }
pending() { sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$1")) AND status <> 'done'"; }
# wait_done DIR SECONDS: polls PostgreSQL until every row is done.
wait_done() {
	local i p
	for ((i = 0; i < $2; i++)); do
		p=$(pending "$1")
		[ "$p" = 0 ] && return 0
		sleep 1
	done
	say "still pending after $2 s: $p"
	return 1
}
# verify DIR ALLOW_IE: one row per id, done, a result, the expected verdict
# (or IE when ALLOW_IE=1), exactly one sandbox.finished audit record; the
# per-verdict counts and attempt figures go to DIR/figures.
verify() {
	local dir=$1 allow_ie=$2
	sql -c "SELECT s.id, s.status, coalesce(s.verdict, '-'), s.result IS NOT NULL, s.attempts,
		(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id
		   AND a.action = 'sandbox.finished')
		FROM submissions s WHERE s.id IN ($(ids_sql "$dir"))" >"$dir/rows"
	python3 - "$dir" "$allow_ie" <<-'PY'
		import collections, os, sys
		d, allow_ie = sys.argv[1], sys.argv[2] == "1"
		want = {}
		for line in open(os.path.join(d, "ids")):
		    sid, w, api = line.split()
		    want[sid] = (w, api)
		bad = []
		verdicts = collections.Counter()
		attempts = collections.Counter()
		seen = set()
		ie = 0
		for line in open(os.path.join(d, "rows")):
		    sid, status, verdict, has_result, att, fin = line.rstrip("\n").split("|")
		    seen.add(sid)
		    w, api = want[sid]
		    verdicts["%s %s" % (api, verdict)] += 1
		    attempts[int(att)] += 1
		    ok = status == "done" and has_result == "t" and fin == "1"
		    if verdict == "IE" and allow_ie and w != "IE":
		        ie += 1
		        # an IE from the scheduler (attempts exhausted) has no
		        # sandbox.finished record
		        ok = status == "done" and has_result == "t" and fin in ("0", "1")
		    elif verdict != w:
		        ok = False
		    if not ok:
		        bad.append("%s: status %s verdict %s (want %s, %s) result %s attempts %s sandbox.finished %s"
		                   % (sid, status, verdict, w, api, has_result, att, fin))
		missing = set(want) - seen
		for sid in sorted(missing):
		    bad.append("%s: no row" % sid)
		with open(os.path.join(d, "figures"), "w") as f:
		    f.write("verdicts: %s\n" % ", ".join("%s %d" % kv for kv in sorted(verdicts.items())))
		    f.write("executor attempts per submission: %s\n"
		            % ", ".join("%d x%d" % (k, v) for k, v in sorted(attempts.items())))
		    f.write("IE: %d\n" % ie)
		for b in bad[:15]:
		    print("# " + b)
		sys.exit(1 if bad or (allow_ie and ie * 20 > len(want)) else 0)
	PY
}

# ------------------------------------------- 1. 300 submissions at scale

mkdir -p "$TMP/p1"
python3 "$TMP/gen.py" "$TMP/p1" 1 "$N1" || bail "gen.py failed"
t1=$(now_s)
submit_all "$TMP/p1"
created=$(collect "$TMP/p1")
check "$N1 concurrent creates (3 tenants, native + Judge0, wait=false) -> $created x 201 in $(since "$t1") s" [ "$created" = "$N1" ]
if wait_done "$TMP/p1" 400; then
	ok "all $N1 done in $(since "$t1") s"
else
	notok "all $N1 done (timed out after $(since "$t1") s)"
fi
D1=$(since "$t1")
check "each has its expected verdict and exactly one result (one sandbox.finished record)" verify "$TMP/p1" 0
sed 's/^/# phase 1 /' "$TMP/p1/figures"
check "no other rows for these tenants (none duplicated, none invented)" \
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id IN ($TIDS)")" = "$N1" ]
check "every tenant got its third" [ "$(sql -c "SELECT string_agg(c::text, ',' ORDER BY c) FROM (SELECT count(*) c FROM submissions WHERE tenant_id IN ($TIDS) GROUP BY tenant_id) x")" = "$((N1 / 3)),$((N1 / 3)),$((N1 / 3))" ]
check "both executors judged" [ "$(sql -c "SELECT count(DISTINCT node) FROM submissions WHERE tenant_id IN ($TIDS) AND node IN ('$NODE1', '$NODE2')")" = 2 ]
drained() {
	[ "$(rc EVAL "return #redis.call('KEYS','gavel:tq:*') + #redis.call('KEYS','gavel:nq:*') + #redis.call('KEYS','gavel:inflight:*') + redis.call('HLEN','gavel:attempts')" 0)" = 0 ]
}
check "queues drained, nothing in flight" wait_for 10 drained

# ------------------------------------------------------- 2. fault run

mkdir -p "$TMP/p2"
python3 "$TMP/gen.py" "$TMP/p2" 2 "$N2" || bail "gen.py failed"
t2=$(now_s)
submit_all "$TMP/p2" &
SUBMITTER=$!
inflight_n1() { [ "$(rc LLEN "gavel:inflight:$NODE1")" -ge 1 ]; }
if wait_for 60 inflight_n1; then
	sleep 0.5
	kill -KILL -- "-$PID_n1" 2>/dev/null
	wait "$PID_n1" 2>/dev/null
	ok "executor $NODE1 killed with -9 while running a job ($(since "$t2") s into the run)"
else
	notok "executor $NODE1 never had a job in flight"
fi
wait "$SUBMITTER"
created=$(collect "$TMP/p2")
check "$N2 concurrent creates during the faults -> $created x 201" [ "$created" = "$N2" ]
sleep 3
start_exec n1 "$NODE1" 2
# FLUSHALL once about a third of the run is judged (jobs queued, assigned
# and running all lose their Redis state).
done_count() { sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$TMP/p2")) AND status = 'done'"; }
third() { [ "$(done_count)" -ge $((N2 / 3)) ]; }
wait_for 120 third
before_flush=$(done_count)
rc FLUSHALL >/dev/null
say "FLUSHALL $(since "$t2") s into the run, $before_flush of $N2 done"
T_FLUSH=$(now_s)
# The executors register again on their next heartbeat.
both_registered() { registered "$NODE1" && registered "$NODE2"; }
check "both executors registered again after FLUSHALL ($NODE1 restarted)" wait_for 60 both_registered
say "executors back in the registry $(since "$T_FLUSH") s after the flush"
check "a scheduler leads again after FLUSHALL" wait_for 15 bash -c "[ -n \"\$(redis_cli \"\$GAVEL_REDIS_URL\" GET gavel:sched:lock)\" ]"
# The tenant hashes went with the flush; the scheduler publishes a
# backlogged tenant's again from PostgreSQL (its weight and caps, not the
# defaults) once the reconciler has queued its work again.
cfg_back() { [ "$(rc HMGET "gavel:tenantcfg:${TID[a]}" weight max_running | tr '\n' ' ')" = "2 3 " ]; }
check "tenant a's gavel:tenantcfg (weight 2, max_running 3) published again from PostgreSQL after FLUSHALL" wait_for 20 cfg_back
# Kill the active scheduler once work flows again.
sleep 2
old=$(leader_of)
case "$old" in
schedA) kill -KILL -- "-$PID_schedA" && wait "$PID_schedA" 2>/dev/null ;;
schedB) kill -KILL -- "-$PID_schedB" && wait "$PID_schedB" 2>/dev/null ;;
*) old="" ;;
esac
T_KILL=$(now_s)
new_leader() { local l; l=$(leader_of); [ -n "$l" ] && [ "$l" != "$old" ]; }
if [ -n "$old" ] && wait_for 15 new_leader; then
	ok "leader $old killed with -9; $(leader_of) took the lock in $(since "$T_KILL") s"
else
	notok "the standby took over from the killed leader '$old'" "lock: $(rc GET gavel:sched:lock)"
fi
if wait_done "$TMP/p2" 150; then
	ok "all $N2 reached a final result in $(since "$t2") s"
else
	notok "all $N2 reached a final result (timed out after $(since "$t2") s)" \
		"$(sql -c "SELECT id, status, attempts, node FROM submissions WHERE id IN ($(ids_sql "$TMP/p2")) AND status <> 'done' LIMIT 10" | tr '\n' ' ')"
fi
D2=$(since "$t2")
check "each: done, the expected verdict or IE (<= 5%), exactly one result" verify "$TMP/p2" 1
sed 's/^/# fault run /' "$TMP/p2/figures"
check "no other rows for these tenants" \
	[ "$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id IN ($TIDS)")" = "$((N1 + N2))" ]
requeued=$(cat "$TMP"/sched*.log | sed -n 's/.*reconciler: \([0-9]*\) unfinished.*/\1/p' | awk '{s += $1} END {print s + 0}')
dead=$(grep -h "stopped heartbeating" "$TMP"/sched*.log | sed -n 's/.*heartbeating: \([0-9]*\) jobs.*/\1/p' | awk '{s += $1} END {print s + 0}')
handed=$(grep -h "handed back to their queues" "$TMP"/n*.log | sed -n 's/.*: \([0-9]*\) jobs of.*/\1/p;s/.* \([0-9]*\) jobs of .*/\1/p' | awk '{s += $1} END {print s + 0}')
twice=$(grep -hc "already finished by an earlier run" "$TMP"/n*.log | awk '{s += $1} END {print s + 0}')
check "the reconciler re-enqueued work after FLUSHALL" [ "$requeued" -gt 0 ]
say "figures: phase 1 $N1 in $D1 s; fault run $N2 in $D2 s; re-enqueued by the reconciler: $requeued;" \
	"re-queued from the dead node by the scheduler: $dead; handed back by the restarted node: $handed;" \
	"runs whose result an earlier run had already written: $twice"
say "total $(($(date +%s) - T_START)) s"
[ $n -eq $PLAN ] || say "planned $PLAN, ran $n"
[ $fails -eq 0 ]
