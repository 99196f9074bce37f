#!/usr/bin/env bash
# PostgreSQL failover under load (issue 19, "HA control plane"): a primary
# and a synchronous streaming standby started here (both project-local,
# tests/lib/pg_standby.sh; never the harness's shared PostgreSQL), Redis of
# our own, and gavel-frontend, gavel-scheduler and two gavel-executor nodes
# (real runsc), every daemon and the CLI given the multi-host URL
# postgresql://ROLE:PW@127.0.0.1:P1,127.0.0.1:P2/gavel?target_session_attrs=read-write.
#
#   1. A URL naming only the standby, with target_session_attrs=read-write,
#      is refused (psql and the CLI): nothing is ever written to a standby.
#   2. 200 submissions sent concurrently (wait=false; C and Python, AC and
#      WA, a fifth of them sleeping 1-1.5 s so that many are in flight).
#   3. Once some are judged, the primary's whole process tree is killed
#      with -9 (a crashed machine), the standby promoted 1.5 s later
#      (detection). Meanwhile a client tries one more submission every
#      100 ms: figures, the time from the primary's death to the first
#      submission accepted after it, and to the promotion.
#   4. Every accepted submission (before, during and after the failover)
#      gets exactly one result, the expected verdict, none IE; exactly one
#      sandbox.finished audit record each (lost: 0, judged twice: 0); every
#      one accepted before the kill is on the new primary; the daemons are
#      healthy again and the CLI works on the multi-host URL.
#
# Needs root (runsc, cgroups, the service user). Prints TAP, and the
# figures as comments. Everything it starts is stopped on exit and its
# folders removed; GAVEL_HA_KEEP_LOGS=DIR keeps the daemons' and both
# clusters' logs there. GAVEL_HA_N sets the number of submissions (200).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
N=${GAVEL_HA_N:-200}
KILL_AFTER_DONE=${GAVEL_HA_KILL_AFTER_DONE:-20} # judged before the kill
PROMOTE_DELAY=${GAVEL_HA_PROMOTE_DELAY:-1.5}    # seconds: "detection"
KEEP_LOGS=${GAVEL_HA_KEEP_LOGS:-}

PLAN=16
echo "1..$PLAN"
. tests/lib/tap.sh
T_START=$(date +%s)
say() { printf '# %s\n' "$*"; }
now_s() { date +%s.%N; }
since() { python3 -c "import sys; print('%.2f' % ($(now_s) - float(sys.argv[1])))" "$1"; }
diff_s() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
redact() { sed -E 's#(postgresql://[^:/@]+:)[^@]*@#\1***@#g'; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc, cgroups, the PostgreSQL service user)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid xargs runuser pgrep; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# Our own PostgreSQL and Redis: forget the harness's (tests/run.sh
# exports them), so that stack_setup starts a pair in $TMP/services.
unset GAVEL_DATABASE_URL GAVEL_REDIS_URL GAVEL_REDIS_URL_FRONTEND GAVEL_REDIS_URL_SCHEDULER \
	GAVEL_REDIS_URL_EXECUTOR GAVEL_FRONTEND_DATABASE_URL GAVEL_SCHEDULER_DATABASE_URL \
	GAVEL_EXECUTOR_DATABASE_URL GAVEL_REDIS_SOCKET GAVEL_PG_PORT GAVEL_PG_SOCKET_DIR
# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
# shellcheck source=tests/lib/pg_standby.sh
. tests/lib/pg_standby.sh
stack_setup hapg "$KEEP_LOGS"
[ "$OWN_SERVICES" = 1 ] || bail "stack_setup used a shared PostgreSQL"
ha_cleanup() {
	[ -n "${PROBER:-}" ] && kill "$PROBER" 2>/dev/null
	# The daemons first, then the standby (its folder is under $TMP,
	# which stack_cleanup removes), then stack_cleanup: the daemons'
	# process groups, sandboxes, the dead primary's folder swept and
	# Redis stopped (services_stop), $TMP removed.
	local p
	for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	if [ -n "$KEEP_LOGS" ]; then
		mkdir -p "$KEEP_LOGS"
		cp "$TMP/services/log/postgres.log" "$KEEP_LOGS/primary-postgres.log" 2>/dev/null
		cp "$TMP/standby/postgres.log" "$KEEP_LOGS/standby-postgres.log" 2>/dev/null
		cp "$TMP"/*.txt "$KEEP_LOGS"/ 2>/dev/null
	fi
	pgs_standby_stop
	stack_cleanup
	return 0
}
trap ha_cleanup EXIT

# ------------------------------------------------ primary + sync standby

pgs_init "$TMP/services" || bail "pgs_init failed"
pgs_primary_prepare 2>"$TMP/pgs.log" || bail "primary: $(cat "$TMP/pgs.log")"
pgs_standby_start "$TMP/standby" 2>"$TMP/pgs.log" || bail "standby: $(cat "$TMP/pgs.log")"
pgs_make_sync 2>"$TMP/pgs.log" || bail "synchronous standby: $(cat "$TMP/pgs.log")"
ok "primary on :$PGS_P1 and a synchronous streaming standby on :$PGS_P2 ($(pgs_primary_sql "SELECT state || '/' || sync_state FROM pg_stat_replication WHERE application_name = '$PGS_APP'"))"

# Single-host URLs of the standby, before anything else uses them.
OWNER_STANDBY_ONLY="$(pgs_host_url "$GAVEL_DATABASE_URL" "$PGS_P2")?target_session_attrs=read-write"
# Every daemon and the CLI: both hosts, the one that accepts writes.
for var in GAVEL_DATABASE_URL GAVEL_FRONTEND_DATABASE_URL GAVEL_SCHEDULER_DATABASE_URL GAVEL_EXECUTOR_DATABASE_URL; do
	url=$(pgs_multihost_url "${!var}") || bail "cannot rewrite $var"
	printf -v "$var" '%s' "$url"
	export "${var?}"
done
STACK_AS_FRONTEND=(env -u GAVEL_DATABASE_URL -u GAVEL_SERVICE_DATABASE_URL
	"GAVEL_DATABASE_SERVICE_URL=$GAVEL_FRONTEND_DATABASE_URL" "GAVEL_REDIS_URL=$GAVEL_REDIS_URL_FRONTEND")
STACK_AS_SCHEDULER=(env -u GAVEL_DATABASE_URL -u GAVEL_SERVICE_DATABASE_URL
	"GAVEL_DATABASE_SERVICE_URL=$GAVEL_SCHEDULER_DATABASE_URL" "GAVEL_REDIS_URL=$GAVEL_REDIS_URL_SCHEDULER")
STACK_AS_EXECUTOR=(env -u GAVEL_DATABASE_URL -u GAVEL_SERVICE_DATABASE_URL
	"GAVEL_DATABASE_SERVICE_URL=$GAVEL_EXECUTOR_DATABASE_URL" "GAVEL_REDIS_URL=$GAVEL_REDIS_URL_EXECUTOR")
say "daemon URL: $(redact <<<"$GAVEL_EXECUTOR_DATABASE_URL")"

# Every daemon's role commits synchronously (no role or database setting
# turns it off): what pgs_make_sync's promise rests on.
sync_everywhere() {
	local var v bad=""
	for var in GAVEL_DATABASE_URL GAVEL_FRONTEND_DATABASE_URL GAVEL_SCHEDULER_DATABASE_URL GAVEL_EXECUTOR_DATABASE_URL; do
		v=$(psql "${!var}" -XAtq -c "SELECT current_user || ':' || current_setting('synchronous_commit') || ':' || current_setting('synchronous_standby_names') || ':' || inet_server_port()" 2>&1)
		[ "$v" = "${v%%:*}:on:*:$PGS_P1" ] || bad="$bad $v"
	done
	[ -z "$bad" ] || { say "not synchronous:$(redact <<<"$bad")"; return 1; }
}
check "every role (owner, frontend, scheduler, executor) on the multi-host URL reaches the primary with synchronous_commit = on, synchronous_standby_names = '*'" sync_everywhere

# --------------------------------------------- the standby refuses writes

standby_refused() {
	local out rc
	out=$(psql "$OWNER_STANDBY_ONLY" -XAtq -c "SELECT 1" 2>&1)
	rc=$?
	say "psql on the standby alone: rc $rc, $(head -n1 <<<"$out" | redact)"
	[ $rc -ne 0 ] && grep -qi 'read-only' <<<"$out" || return 1
	out=$(GAVEL_DATABASE_URL=$OWNER_STANDBY_ONLY "$BUILD/gavel" tenant create "${TAG}_standby" 2>&1)
	rc=$?
	say "gavel tenant create on the standby alone: rc $rc, $(head -n1 <<<"$out" | redact)"
	[ $rc -ne 0 ] && grep -qi 'read-only' <<<"$out" || return 1
	# Without the parameter: Gavel's connections ask for a read-write
	# session by default (common/pg.h, GV_PG_SESSION_ATTRS), so the CLI
	# refuses the standby when connecting, not at its first write.
	out=$(GAVEL_DATABASE_URL=${OWNER_STANDBY_ONLY%%\?*} "$BUILD/gavel" tenant list 2>&1)
	rc=$?
	say "gavel tenant list on the standby alone, URL without target_session_attrs: rc $rc, $(head -n1 <<<"$out" | redact)"
	[ $rc -ne 0 ] && grep -qi 'read-only' <<<"$out" || return 1
	[ "$(sql -c "SELECT count(*) FROM tenants WHERE name = '${TAG}_standby'")" = 0 ]
}
check "a URL naming only the standby is refused: psql with target_session_attrs=read-write cannot connect, gavel tenant create fails and writes nothing, gavel (read-write by default) refuses it even without the parameter" standby_refused

# ------------------------------------------------------------ the stack

stack_tenant "${TAG}_t" --quota requests_per_second=2000 --quota burst=2000 --quota max_running=6

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched "${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/sched.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
NODE1=n1-$TAG
NODE2=n2-$TAG
GAVEL_EXECUTOR_NODE_NAME=$NODE1 GAVEL_EXECUTOR_MAX_PARALLEL=3 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor n1.log
PID_N1=$PID_EXEC
GAVEL_EXECUTOR_NODE_NAME=$NODE2 GAVEL_EXECUTOR_MAX_PARALLEL=3 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor n2.log
PID_N2=$PID_EXEC
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
both_registered() { registered "$NODE1" && registered "$NODE2"; }
wait_for 120 both_registered || bail "executors did not register: $(tail -n 5 "$TMP/n1.log" | tr '\n' ' ')"
stack_wait_healthy 60 "$PID_SCHED" "$PID_N1" "$PID_N2" "$PID_FE"
ok "stack up on the multi-host URLs: frontend, scheduler, two executors ($(($(date +%s) - T_START)) s)"

# ----------------------------------------------------------- submissions

cat >"$TMP/gen.py" <<'PY'
import json, os, sys
out, count = sys.argv[1], int(sys.argv[2])
C_SUM = '#include <stdio.h>\nint main(void){long a,b;if(scanf("%ld %ld",&a,&b)!=2)return 1;printf("%ld\\n",a+b);return 0;}'
C_WA = '#include <stdio.h>\nint main(void){puts("42");return 0;}'
PY_SUM = 'a, b = map(int, input().split())\nprint(a + b)'
PY_SLOW = 'import time\ntime.sleep(%s)\na, b = map(int, input().split())\nprint(a + b)'
PY_WA = 'print(0)'
KINDS = [("c", C_SUM, "AC", None), ("python3", PY_SUM, "AC", None), ("python3", PY_WA, "WA", None),
         ("c", C_WA, "WA", None), ("python3", PY_SUM, "AC", None),
         # idle for its whole time limit would be TLE: a limit above the sleep
         ("python3", PY_SLOW % "1.5", "AC", 4000), ("c", C_SUM, "AC", None),
         ("python3", PY_SUM, "AC", None), ("python3", PY_WA, "WA", None),
         ("python3", PY_SLOW % "1", "AC", 4000)]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "manifest"), "w") as m:
    for i in range(count):
        lang, src, want, tl = KINDS[i % len(KINDS)]
        d = {"language": lang, "source": src, "tests": [{"input": "1 2\n", "expected": "3\n"}]}
        if tl:
            d["limits"] = {"time_ms": tl}
        with open(os.path.join(out, "%d.json" % i), "w") as f:
            json.dump(d, f)
        m.write("%d %s\n" % (i, want))
# the prober's submission
with open(os.path.join(out, "probe.json"), "w") as f:
    json.dump({"language": "python3", "source": PY_SUM, "tests": [{"input": "1 2\n", "expected": "3\n"}]}, f)
PY
python3 "$TMP/gen.py" "$TMP/s" "$N" || bail "gen.py failed"

# submit_all: every request of $TMP/s, 8 at a time; per request
# <i>.code, <i>.out and <i>.t (the time its answer came).
submit_all() {
	export B KEY DIR=$TMP/s
	# shellcheck disable=SC2016
	xargs -P 8 -L 1 bash -c '
		i=$0
		curl -s -m 60 -o "$DIR/$i.out" -w "%{http_code}" -H "X-Auth-Token: $KEY" \
			-H "Content-Type: application/json" --data-binary @"$DIR/$i.json" "$B/v1/submissions" >"$DIR/$i.code"
		date +%s.%N >"$DIR/$i.t"
	' <"$TMP/s/manifest"
}
# probe_loop: one more submission every 100 ms, each in the background
# (a request that hangs does not delay the next), until $TMP/probe.stop
# exists; a line "start end code id" per request in $TMP/probes.
probe_loop() {
	while [ ! -e "$TMP/probe.stop" ]; do
		(
			t0=$(now_s)
			r=$(curl -s -m 30 -w '\n%{http_code}' -H "X-Auth-Token: $KEY" -H "Content-Type: application/json" \
				--data-binary @"$TMP/s/probe.json" "$B/v1/submissions")
			t1=$(now_s)
			id=-
			[[ ${r%$'\n'*} =~ \"id\":\ *\"([A-Za-z0-9_-]+)\" ]] && id=${BASH_REMATCH[1]}
			echo "$t0 $t1 ${r##*$'\n'} $id" >>"$TMP/probes"
		) &
		sleep 0.1
	done
	wait
}
ids_sql() { awk '{printf "%s'"'"'%s'"'"'", (NR > 1 ? "," : ""), $1}' "$1"; }
done_count() { sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TID' AND status = 'done'"; }

t1=$(now_s)
submit_all &
SUBMITTER=$!
enough_done() { [ "$(done_count 2>/dev/null)" -ge "$KILL_AFTER_DONE" ]; }
wait_for 120 enough_done || bail "not $KILL_AFTER_DONE judged after 120 s: $(tail -n 5 "$TMP/n1.log" | tr '\n' ' ')"
wait "$SUBMITTER"
before_kill_accepted=$(grep -l '^201$' "$TMP"/s/*.code 2>/dev/null | wc -l)

# ------------------------------------------------------------- failover

touch "$TMP/probes"
probe_loop &
PROBER=$!
sleep 0.5
STATES=$(sql -c "SELECT string_agg(status || ' ' || c, ', ' ORDER BY status) FROM (SELECT status, count(*) c FROM submissions WHERE tenant_id = '$TID' GROUP BY status) x")
if pgs_kill_primary 2>"$TMP/pgs.log"; then
	T_KILL=$PGS_KILLED_AT
	ok "primary killed with -9, postmaster and every backend ($(diff_s "$t1" "$T_KILL") s into the run; submissions then: $STATES)"
else
	T_KILL=${PGS_KILLED_AT:-$(now_s)}
	notok "primary killed" "$(cat "$TMP/pgs.log")"
fi
# Detection: promote PROMOTE_DELAY seconds after the death.
sleep "$(python3 -c "import sys; print(max(0, float(sys.argv[1]) + float(sys.argv[2]) - float(sys.argv[3])))" \
	"$T_KILL" "$PROMOTE_DELAY" "$(now_s)")"
T_PROM0=$(now_s)
if pgs_promote 2>"$TMP/pgs.log"; then
	T_PROM=$(now_s)
	ok "standby promoted ($(diff_s "$T_KILL" "$T_PROM0") s after the kill; pg_ctl promote -w took $(diff_s "$T_PROM0" "$T_PROM") s)"
else
	T_PROM=$(now_s)
	notok "standby promoted" "$(cat "$TMP/pgs.log"; tail -n 5 "$TMP/standby/postgres.log")"
fi

# Every submission the API accepted before the kill is on the new primary
# (synchronous commit), read before anything else could have written it.
accepted_before() {
	python3 - "$TMP/s" "$T_KILL" <<-'PY'
		import json, os, sys
		d, tk = sys.argv[1], float(sys.argv[2])
		for line in open(os.path.join(d, "manifest")):
		    i, want = line.split()
		    try:
		        code = open(os.path.join(d, i + ".code")).read().strip()
		        t = float(open(os.path.join(d, i + ".t")).read())
		        sid = json.load(open(os.path.join(d, i + ".out"))).get("id")
		    except Exception:
		        continue
		    if code == "201" and sid and t < tk:
		        print(sid, want)
	PY
}
accepted_before >"$TMP/before"
present=$(sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$TMP/before"))" 2>&1)
check "all $(wc -l <"$TMP/before") submissions accepted before the kill are on the promoted standby (found $present)" \
	[ "$present" = "$(wc -l <"$TMP/before")" ]

first_after() { awk -v tk="$T_KILL" '$1 > tk && ($3 == 201 || $3 == 200) && $4 != "-" { print $2; exit }' "$TMP/probes"; }
have_first() { [ -n "$(first_after)" ]; }
if wait_for 90 have_first; then
	T_FIRST=$(first_after)
	ok "a submission sent after the kill was accepted"
else
	T_FIRST=""
	notok "a submission sent after the kill was accepted (none within 90 s)" "$(awk '{print $3}' "$TMP/probes" | sort | uniq -c | tr '\n' ' ')"
fi
touch "$TMP/probe.stop"
wait "$PROBER"
PROBER=""
say "time from the primary's death to the promotion (standby writable): $(diff_s "$T_KILL" "$T_PROM") s (promotion started after $PROMOTE_DELAY s)"
[ -n "$T_FIRST" ] && say "time from the primary's death to the first accepted submission: $(diff_s "$T_KILL" "$T_FIRST") s" \
	"($(diff_s "$T_PROM" "$T_FIRST") s after the promotion)"
say "prober answers (code: count): $(awk -v tk="$T_KILL" '$1 > tk {print $3}' "$TMP/probes" | sort | uniq -c | awk '{printf "%s: %s  ", $2, $1}')"

# ------------------------------------------------------------ the checks

# Accepted: the 201s of the batch (before, during or after the kill) and
# of the prober.
python3 - "$TMP/s" "$TMP/probes" >"$TMP/ids" 2>"$TMP/refused.txt" <<-'PY'
	import json, os, sys
	d, probes = sys.argv[1], sys.argv[2]
	for line in open(os.path.join(d, "manifest")):
	    i, want = line.split()
	    try:
	        code = open(os.path.join(d, i + ".code")).read().strip()
	        body = open(os.path.join(d, i + ".out")).read()
	        sid = json.loads(body).get("id")
	    except Exception as e:
	        code, body, sid = locals().get("code", "?"), repr(e), None
	    if code == "201" and sid:
	        print(sid, want)
	    else:
	        sys.stderr.write("request %s: %s %s\n" % (i, code, body[:200]))
	for line in open(probes):
	    t0, t1, code, sid = line.split()
	    if code in ("200", "201") and sid != "-":
	        print(sid, "AC")
PY
accepted=$(wc -l <"$TMP/ids")
batch_accepted=$(grep -l '^201$' "$TMP"/s/*.code 2>/dev/null | wc -l)
say "accepted: $batch_accepted of the $N (before the kill: $before_kill_accepted), $((accepted - batch_accepted)) by the prober; refused: $(wc -l <"$TMP/refused.txt")"
check "all $N of the batch accepted (201)" [ "$batch_accepted" = "$N" ]

pending() { sql -c "SELECT count(*) FROM submissions WHERE id IN ($(ids_sql "$TMP/ids")) AND status <> 'done'" 2>/dev/null; }
all_done() { [ "$(pending)" = 0 ]; }
if wait_for 300 all_done; then
	ok "all $accepted accepted submissions done $(since "$T_KILL") s after the kill"
else
	notok "all $accepted accepted submissions done (still pending after 300 s: $(pending))" \
		"$(sql -c "SELECT id, status, attempts, node FROM submissions WHERE id IN ($(ids_sql "$TMP/ids")) AND status <> 'done' LIMIT 8" | tr '\n' ' ')"
fi

# One line per accepted id: status, verdict, result present, attempts,
# sandbox.finished records.
sql -c "SELECT s.id, s.status, coalesce(s.verdict, '-'), s.result IS NOT NULL, s.attempts,
	(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id
	   AND a.action = 'sandbox.finished')
	FROM submissions s WHERE s.id IN ($(ids_sql "$TMP/ids"))" >"$TMP/rows" 2>&1
python3 - "$TMP/ids" "$TMP/rows" "$TMP/figures" <<-'PY' >"$TMP/verify.txt"
	import collections, sys
	ids, rows, figs = sys.argv[1:4]
	want = dict(l.split() for l in open(ids))
	seen, bad, verdicts, attempts = set(), [], collections.Counter(), collections.Counter()
	lost = twice = wrong = ie = 0
	for line in open(rows):
	    parts = line.rstrip("\n").split("|")
	    if len(parts) != 6:
	        bad.append("bad row: " + line.strip()); continue
	    sid, status, verdict, has_result, att, fin = parts
	    seen.add(sid)
	    verdicts[verdict] += 1
	    attempts[int(att)] += 1
	    if int(fin) > 1:
	        twice += 1
	    if status != "done" or has_result != "t" or int(fin) == 0:
	        lost += 1
	    if verdict == "IE":
	        ie += 1
	    if verdict != want[sid]:
	        wrong += 1
	    if status != "done" or has_result != "t" or fin != "1" or verdict != want[sid]:
	        bad.append("%s: status %s verdict %s (want %s) result %s attempts %s sandbox.finished %s"
	                   % (sid, status, verdict, want[sid], has_result, att, fin))
	for sid in sorted(set(want) - seen):
	    lost += 1
	    bad.append("%s: no row" % sid)
	with open(figs, "w") as f:
	    f.write("lost=%d twice=%d wrong=%d ie=%d\n" % (lost, twice, wrong, ie))
	    f.write("verdicts: %s\n" % ", ".join("%s %d" % kv for kv in sorted(verdicts.items())))
	    f.write("executor attempts per submission: %s\n" % ", ".join("%d x%d" % kv for kv in sorted(attempts.items())))
	for b in bad[:12]:
	    print(b)
PY
fig() { sed -n "s/.*\<$1=\([0-9]*\).*/\1/p" "$TMP/figures"; }
check_detail() { sed 's/^/# /' "$TMP/verify.txt" | head -n 12; }
say "submissions lost: $(fig lost); judged twice: $(fig twice); wrong verdict: $(fig wrong) (IE: $(fig ie))"
sed 's/^/# /' "$TMP/figures" | tail -n +2
check "none lost: every accepted submission is done with a result and a sandbox.finished record" [ "$(fig lost)" = 0 ]
check "none judged twice: exactly one sandbox.finished audit record each" [ "$(fig twice)" = 0 ]
check "each has its expected verdict (AC/WA), none IE" [ "$(fig wrong)" = 0 ]
unset -f check_detail

# Rows the API did not acknowledge (a commit the old primary made but could
# not confirm, shipped to the standby before it died) are judged too,
# once; they are counted, not failed.
extra=$(sql -c "SELECT count(*) FROM submissions WHERE tenant_id = '$TID' AND id NOT IN ($(ids_sql "$TMP/ids"))")
extra_bad=$(sql -c "SELECT count(*) FROM submissions s WHERE s.tenant_id = '$TID' AND s.id NOT IN ($(ids_sql "$TMP/ids"))
	AND s.status = 'done' AND (SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id
	AND a.action = 'sandbox.finished') > 1")
say "rows stored without a 201 (commit unconfirmed at the kill): $extra"
check "none of those judged twice either" [ "$extra_bad" = 0 ]

daemons_alive() {
	local p
	for p in "$PID_SCHED" "$PID_N1" "$PID_N2" "$PID_FE"; do kill -0 "$p" 2>/dev/null || return 1; done
}
healthy() {
	local h
	h=$(curl -s -m 5 -w '\n%{http_code}' "$B/v1/health")
	[ "${h##*$'\n'}" = 200 ] &&
		[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))' <<<"${h%$'\n'*}" 2>/dev/null)" = ok ]
}
healthy_again() { daemons_alive && wait_for 30 healthy && both_registered; }
check "every daemon still running, GET /v1/health ok, both executors registered" healthy_again

cli_after() {
	local out
	out=$("$BUILD/gavel" tenant list 2>&1) && grep -q "${TAG}_t" <<<"$out" || { say "tenant list: $(head -n2 <<<"$out" | redact)"; return 1; }
	out=$("$BUILD/gavel" tenant update "${TAG}_t" --quota burst=2001 2>&1) || { say "tenant update: $(head -n2 <<<"$out" | redact)"; return 1; }
	out=$("$BUILD/gavel" usage 2>&1) || { say "usage: $(head -n2 <<<"$out" | redact)"; return 1; }
	[ "$(sql -c "SELECT q.burst || ':' || inet_server_port() FROM tenant_quotas q WHERE q.tenant_id = '$TID'")" = "2001:$PGS_P2" ]
}
check "the CLI on the multi-host URL after the failover: tenant list, tenant update (written on the new primary), usage" cli_after

# An executor run whose audit write failed leaves no sandbox.started
# record: counted (a figure, not a check).
started_gap=$(sql -c "SELECT count(*) FROM submissions s WHERE s.id IN ($(ids_sql "$TMP/ids")) AND s.attempts >
	(SELECT count(*) FROM audit_log a WHERE a.tenant_id = s.tenant_id AND a.object = s.id AND a.action = 'sandbox.started')")
say "submissions with fewer sandbox.started audit records than executor runs: $started_gap"
# Figures from the daemons' logs.
warns() { grep -ac ' \(warn\|error\) ' "$@" | awk -F: '{s += $NF} END {print s + 0}'; }
say "warn/error lines: frontend $(warns "$TMP/frontend.log"), scheduler $(warns "$TMP/sched.log"), executors $(warns "$TMP/n1.log" "$TMP/n2.log");" \
	"results handed back (store failed): $(cat "$TMP"/n1.log "$TMP"/n2.log | grep -c 'the result could not be stored')"
say "runs whose result an earlier run had already written: $(cat "$TMP"/n1.log "$TMP"/n2.log | grep -c 'already finished by an earlier run')"
say "total $(($(date +%s) - T_START)) s"
[ $n -eq $PLAN ] || say "planned $PLAN, ran $n"
[ $fails -eq 0 ]
