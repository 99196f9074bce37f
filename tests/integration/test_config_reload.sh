#!/usr/bin/env bash
# SIGHUP reloads a running daemon's config (deploy/gavel.conf.example,
# "Reload"): gavel-frontend, gavel-scheduler and gavel-executor (its
# supervisor and every worker) are started from one config file at log
# level warn; the file is changed to level info and each gets SIGHUP:
#   - each logs "config reloaded", an info line that only shows if the new
#     level was applied (the executor: its supervisor and each worker);
#   - a file that changes a restart-only option, and then a file that no
#     longer parses, are refused ("config reload refused", naming the
#     option), and every daemon keeps running on what it had;
#   - a submission is judged end to end afterwards (nothing was torn down).
# Needs root (runsc, cgroups). Prints TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..9"
. tests/lib/tap.sh
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup reload
"$BUILD/gavel" tenant create "${TAG}_t" >"$TMP/t" 2>"$TMP/cli.log" || bail "gavel tenant create: $(cat "$TMP/cli.log")"
KEY=$("$BUILD/gavel" key create --tenant "${TAG}_t" 2>>"$TMP/cli.log")
[ -n "$KEY" ] || bail "gavel key create: $(cat "$TMP/cli.log")"

# The level comes from the file only: an environment value would win.
unset GAVEL_LOG_LEVEL
CONF=$TMP/gavel.conf
write_conf() { # LEVEL [EXTRA-LINE...]
	{
		printf '[log]\nlevel = %s\n' "$1"
		shift
		printf '%s\n' "$@"
	} >"$CONF.new" && mv "$CONF.new" "$CONF"
}
write_conf warn
WORKERS=2
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" --config "$CONF" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PID_SCHED=$!
PIDS+=("$PID_SCHED")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=$WORKERS GAVEL_EXECUTOR_BURST_SLOTS=0 \
	GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s stack_start_executor executor.log --config "$CONF"
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend "$BUILD/gavel-frontend" --config "$CONF"
stack_wait_healthy 120 "$PID_EXEC" "$PID_SCHED" "$PID_FE"
ok "stack up from one config file at log level warn"

# count FILE PATTERN: lines of FILE matching PATTERN (fixed string).
count() { grep -cF -- "$2" "$TMP/$1" 2>/dev/null; }
# wait_count FILE PATTERN N: until FILE has at least N such lines (20 s).
wait_count() {
	local _
	for _ in $(seq 100); do
		[ "$(count "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.2
	done
	say "$1: $(count "$1" "$2") lines with '$2', wanted $3; last lines:"
	tail -n 5 "$TMP/$1" | sed 's/^/#   /'
	return 1
}
hup_all() { kill -HUP "$PID_FE" "$PID_SCHED" "$PID_EXEC"; }
alive_all() { kill -0 "$PID_FE" && kill -0 "$PID_SCHED" && kill -0 "$PID_EXEC"; }

before=$(($(count frontend.log 'config reloaded') + $(count scheduler.log 'config reloaded') + $(count executor.log 'config reloaded')))
check "nothing reloaded before SIGHUP" [ "$before" -eq 0 ]

write_conf info
hup_all
check "frontend: SIGHUP applies log level info (its info line 'config reloaded' shows)" \
	wait_count frontend.log 'config reloaded' 1
check "scheduler: SIGHUP applies log level info between two passes" \
	wait_count scheduler.log 'config reloaded' 1
# The supervisor, then each worker between two jobs.
check "executor: the supervisor and its $WORKERS workers each apply it" \
	wait_count executor.log 'config reloaded' $((1 + WORKERS))

# A restart-only option changed: refused as a whole, by each daemon.
write_conf info '[frontend]' 'threads = 3' '[scheduler]' 'leader_lock_ttl = 29s' '[executor]' 'probe_timeout = 17s'
hup_all
check "a changed restart-only option is refused by each daemon, naming it" \
	eval "wait_count frontend.log \"option 'frontend.threads' cannot change without a restart\" 1 &&
	      wait_count scheduler.log \"option 'scheduler.leader_lock_ttl' cannot change without a restart\" 1 &&
	      wait_count executor.log \"option 'executor.probe_timeout' cannot change without a restart\" 1"

# A file that no longer parses.
printf '[log]\nlevel = chatty\n' >"$CONF"
hup_all
check "a file that no longer loads is refused, and the daemons keep running" \
	eval "wait_count frontend.log 'config reload refused' 2 && wait_count scheduler.log 'config reload refused' 2 &&
	      wait_count executor.log 'config reload refused' 2 && alive_all"

# Everything still works: a submission judged end to end.
body=$(python3 -c 'import json; print(json.dumps({"language": "python3", "source": "print(int(input())+1)",
	"tests": [{"input": "41\n", "expected": "42\n"}]}))')
out=$(curl -s -m 120 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	--data-binary "$body" "$B/v1/submissions?wait=true")
verdict=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("verdict"))' <<<"$out" 2>/dev/null)
check "after the reloads a submission is still judged (AC)" [ "$verdict" = AC ]
[ "$verdict" = AC ] || say "answer: ${out:0:400}"

# The level applied last (info) is still the running one after the
# refusals: the worker's info line for the job comes after them.
after_refusal() { awk '/config reload refused/ { seen = 1; next } seen && /python3 AC in/ { found = 1 } END { exit !found }' "$TMP/executor.log"; }
check "the refused reloads left the applied level in place (the job's info line follows them)" after_refusal

[ "$fails" -eq 0 ]
