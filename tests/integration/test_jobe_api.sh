#!/usr/bin/env bash
# Jobe's REST API (frontend/jobe.c), as Moodle's CodeRunner drives it, on
# the real stack: gavel-scheduler, one gavel-executor (real runsc) and two
# gavel-frontends over the harness's PostgreSQL and Redis. Three tenants
# and keys; the client is tests/integration/jobe_client.py (our own, from
# the API's description), which prints the TAP:
#
#   languages; a run per Jobe language this host offers; stdin; compile
#   and runtime errors; time and memory limits; numprocs (fork, a
#   subprocess); a Python template (jobe_template.py) that writes a C
#   answer, compiles it with gcc, runs it on its stdin and lints with
#   pylint, /box closed to it meanwhile; UTF-8 and Latin-1 output;
#   interpreterargs (-BE sets both flags, -O silences an assert, a word
#   outside the language's list is 400), runargs, compileargs (-std=c89
#   makes a // comment a compile error) and linkargs; file_list with the
#   404 -> PUT -> HEAD -> run again cycle, a binary file, POST files, files
#   past a run's budget refused 400 by their stored sizes; tenants never
#   see each other's files or runs;
#   Java without sourcefilename; bad requests; 202 and polling (the second
#   frontend waits 2 s), under load too; over quota (max_queued) is
#   outcome 21; the per-tenant file budget (4 KiB on the second frontend).
#
# Needs root (runsc, cgroups). Everything it starts is stopped on exit
# (tests/lib/stack.sh).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
. tests/lib/tap.sh

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup jobe "${GAVEL_JOBE_KEEP_LOGS:-}"
stack_tenant "${TAG}_a"
KA=$KEY
stack_tenant "${TAG}_b"
KB=$KEY
stack_tenant "${TAG}_c"
KC=$KEY
stack_tenant "${TAG}_d" --quota max_queued=1 --quota max_running=1
KD=$KEY

GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=("$!")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=120s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend
B_MAIN=$B
PID_MAIN=$PID_FE
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=2s GAVEL_FRONTEND_JOBE_FILES_PER_TENANT=4k \
	GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
B_SMALL=$B
stack_wait_healthy 90 "$PID_MAIN" "$PID_FE" "$PID_EXEC"
# The language list comes from what the executor published.
wait_for 60 bash -c "curl -s '$B_MAIN/jobe/index.php/restapi/languages' | grep -q python3" ||
	bail "the executor published no languages"

python3 tests/integration/jobe_client.py "$B_MAIN" "$KA" "$KB" "$B_SMALL" "$KC" "$KD"
rc=$?
kill -0 "$PID_MAIN" 2>/dev/null && kill -0 "$PID_FE" 2>/dev/null || {
	echo "# a frontend died: $(tail -n 10 "$TMP/frontend.log" | tr '\n' '|')"
	rc=1
}
[ $rc -eq 0 ] || tail -n 30 "$TMP"/frontend.log "$TMP"/executor.log | sed 's/^/# /'
exit $rc
