# shellcheck shell=bash
# What the whole-stack tests (the tests/integration/*.sh that start the
# daemons) share: private runsc/work/cgroup roots named after the test,
# PostgreSQL and Redis from the harness (or started here when run alone),
# migrations, an empty Redis, a tear-down on any exit that stops every
# daemon started into PIDS (process groups), deletes sandboxes a killed
# executor left, and removes the roots and cgroups; starting an executor
# and the frontend, each daemon with its own database role and its own
# Redis ACL user (STACK_AS_*), and waiting for a healthy stack. Needs ROOT,
# BUILD and bail() from the test.

# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh

# stack_setup NAME [KEEP_LOGS_DIR]: sets TAG, TMP, RUNSC_ROOT, WORK_ROOT,
# CG_PARENT, PIDS (append daemon pids to it) and STACK_AS_FRONTEND,
# STACK_AS_SCHEDULER, STACK_AS_EXECUTOR (below).
stack_setup() {
	TAG=$1$$
	STACK_KEEP_LOGS=${2:-}
	TMP=$(mktemp -d "/tmp/gavel-$1.XXXXXX")
	chmod 0755 "$TMP"
	RUNSC_ROOT=/run/gavel-$TAG
	WORK_ROOT=/var/tmp/gavel-$TAG
	CG_PARENT=gavel-$TAG
	PIDS=()
	OWN_SERVICES=0
	trap stack_cleanup EXIT
	trap 'exit 130' INT TERM

	if [ -z "${GAVEL_DATABASE_URL:-}" ] || [ -z "${GAVEL_REDIS_URL:-}" ]; then
		# shellcheck source=tests/lib/services.sh
		. tests/lib/services.sh
		mkdir -p "$TMP/services"
		services_start "$TMP/services" || bail "could not start PostgreSQL and Redis"
		OWN_SERVICES=1
		# shellcheck disable=SC1091
		. "$TMP/services/env"
	fi
	export GAVEL_DATABASE_URL GAVEL_REDIS_URL
	export GAVEL_REDIS_URL_FRONTEND=${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}
	export GAVEL_REDIS_URL_SCHEDULER=${GAVEL_REDIS_URL_SCHEDULER:-$GAVEL_REDIS_URL}
	export GAVEL_REDIS_URL_EXECUTOR=${GAVEL_REDIS_URL_EXECUTOR:-$GAVEL_REDIS_URL}
	# How a daemon is started, as gavel-local starts it: "${STACK_AS_X[@]}"
	# COMMAND... runs COMMAND (everything execs: $! is the daemon's pid)
	# with database.service_url set to that daemon's own role, without
	# the owner's URL, which a daemon without a service URL would fall
	# back to, and with Redis as that daemon's own ACL user. So every
	# stack test runs the daemons as their roles and users.
	unset GAVEL_DATABASE_SERVICE_URL
	local var
	for var in GAVEL_FRONTEND_DATABASE_URL GAVEL_SCHEDULER_DATABASE_URL GAVEL_EXECUTOR_DATABASE_URL; do
		[ -n "${!var:-}" ] || bail "$var is not set (tests/lib/services.sh writes it)"
	done
	local -a no_owner=(env -u GAVEL_DATABASE_URL -u GAVEL_SERVICE_DATABASE_URL)
	# shellcheck disable=SC2034 # used by the tests that source this file
	{
		STACK_AS_FRONTEND=("${no_owner[@]}" "GAVEL_DATABASE_SERVICE_URL=$GAVEL_FRONTEND_DATABASE_URL"
			"GAVEL_REDIS_URL=$GAVEL_REDIS_URL_FRONTEND")
		STACK_AS_SCHEDULER=("${no_owner[@]}" "GAVEL_DATABASE_SERVICE_URL=$GAVEL_SCHEDULER_DATABASE_URL"
			"GAVEL_REDIS_URL=$GAVEL_REDIS_URL_SCHEDULER")
		STACK_AS_EXECUTOR=("${no_owner[@]}" "GAVEL_DATABASE_SERVICE_URL=$GAVEL_EXECUTOR_DATABASE_URL"
			"GAVEL_REDIS_URL=$GAVEL_REDIS_URL_EXECUTOR")
	}

	"$BUILD/gavel" migrate --dir "$ROOT/deploy/sql" >"$TMP/migrate.log" 2>&1 || {
		cat "$TMP/migrate.log" >&2
		bail "gavel migrate failed"
	}
	# Executors and queues left by earlier tests must not take our jobs.
	rc FLUSHDB >/dev/null || bail "redis FLUSHDB failed"
}

stack_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	for _ in $(seq 1 100); do
		local alive=0
		for p in "${PIDS[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.2
	done
	for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
	# Sandboxes a killed executor left behind.
	if [ -d "$RUNSC_ROOT" ] && command -v runsc >/dev/null; then
		local root c
		for root in "$RUNSC_ROOT"/*/w*; do
			[ -d "$root" ] || continue
			for c in $(runsc --root "$root" list --quiet 2>/dev/null); do
				runsc --root "$root" kill "$c" KILL >/dev/null 2>&1
				runsc --root "$root" delete -force "$c" >/dev/null 2>&1
			done
		done
	fi
	if [ $OWN_SERVICES -eq 1 ]; then services_stop "$TMP/services" >/dev/null 2>&1; fi
	if [ -n "$STACK_KEEP_LOGS" ]; then
		mkdir -p "$STACK_KEEP_LOGS" && cp "$TMP"/*.log "$STACK_KEEP_LOGS"/ 2>/dev/null
	fi
	rm -rf "$TMP" "$RUNSC_ROOT" "$WORK_ROOT"
	local cg
	# What runsc no longer lists (a sandbox whose state went with a killed
	# executor, e.g. one its pool had created) is still in our cgroups.
	for cg in /sys/fs/cgroup/*/"$CG_PARENT" /sys/fs/cgroup/"$CG_PARENT"; do
		[ -n "$CG_PARENT" ] && [ -d "$cg" ] && find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null
	done
	sleep 0.2
	for cg in /sys/fs/cgroup/*/"$CG_PARENT" /sys/fs/cgroup/"$CG_PARENT"; do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# [VAR=value...] stack_start_executor LOG [ARG...]: starts gavel-executor
# (with ARGs) on the stack's roots (RUNSC_ROOT, WORK_ROOT, CG_PARENT) with
# the built gavel-init and the repository's languages, plus the caller's
# environment assignments (node name, slots...), in its own process group in
# PIDS, logging to $TMP/LOG; sets PID_EXEC. Redis as gavel-executor.
stack_start_executor() {
	local log=$1
	shift
	GAVEL_EXECUTOR_RUNSC_ROOT=$RUNSC_ROOT GAVEL_EXECUTOR_WORK_ROOT=$WORK_ROOT \
		GAVEL_EXECUTOR_CGROUP_PARENT=$CG_PARENT GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
		GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
		"${STACK_AS_EXECUTOR[@]}" setsid "$BUILD/gavel-executor" "$@" >>"$TMP/$log" 2>&1 </dev/null &
	PID_EXEC=$!
	PIDS+=("$PID_EXEC")
}

# [VAR=value...] stack_start_frontend [BINARY [ARG...]]: starts
# gavel-frontend (BINARY, default $BUILD/gavel-frontend; with ARGs) with the
# caller's environment assignments, on a free port, in its own process group in PIDS, logging to
# $TMP/frontend.log; sets PID_FE, P (its port) and B (its base URL). Bails
# when it has not said its port within 10 s. Redis as gavel-frontend.
stack_start_frontend() {
	local bin=${1:-$BUILD/gavel-frontend}
	[ $# -gt 0 ] && shift
	"${STACK_AS_FRONTEND[@]}" setsid "$bin" --port 0 --ready-fd 3 "$@" 3>"$TMP/port" \
		>>"$TMP/frontend.log" 2>&1 </dev/null &
	PID_FE=$!
	PIDS+=("$PID_FE")
	local _
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	P=$(head -n1 "$TMP/port" 2>/dev/null)
	[ -n "$P" ] || bail "gavel-frontend did not start: $(tail -n5 "$TMP/frontend.log")"
	B=http://127.0.0.1:$P
}

# stack_wait_healthy SECONDS [PID...]: waits until $B/v1/health answers 200
# with status "ok" (PostgreSQL, Redis and a live executor). Bails, showing
# the tail of the daemons' logs, when one of the PIDs exits first, or when
# the stack is not healthy in time.
stack_wait_healthy() {
	local limit=$1 i p health=""
	shift
	for ((i = 0; i < limit * 5; i++)); do
		for p in "$@"; do
			if ! kill -0 "$p" 2>/dev/null; then
				tail -n 20 "$TMP"/*.log | sed 's/^/# /'
				bail "a daemon exited (pid $p) before the stack was healthy"
			fi
		done
		health=$(curl -s -m 5 -w '\n%{http_code}' "$B/v1/health")
		if [ "${health##*$'\n'}" = 200 ] &&
			[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))' <<<"${health%$'\n'*}" 2>/dev/null)" = ok ]; then
			return 0
		fi
		sleep 0.2
	done
	bail "no healthy stack after $limit s: $(tr '\n' ' ' <<<"$health")"
}

# wait_for SECONDS COMMAND...: runs COMMAND every 0.2 s until it succeeds
# (0) or SECONDS have passed (1).
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
# stack_tenant NAME [--quota K=V...]: creates tenant NAME and a key with
# the CLI, applies the quotas; sets TID and KEY. Bails on failure.
stack_tenant() {
	local name=$1
	shift
	"$BUILD/gavel" tenant create "$name" >"$TMP/tenant-$name" 2>>"$TMP/cli.log" ||
		bail "gavel tenant create: $(tail -n3 "$TMP/cli.log")"
	TID=$(cut -f1 "$TMP/tenant-$name")
	KEY=$("$BUILD/gavel" key create --tenant "$name" 2>>"$TMP/cli.log")
	[ -n "$TID" ] && [ -n "$KEY" ] || bail "gavel key create: $(tail -n3 "$TMP/cli.log")"
	[ $# -eq 0 ] || "$BUILD/gavel" tenant update "$name" "$@" >>"$TMP/cli.log" 2>&1 ||
		bail "gavel tenant update: $(tail -n3 "$TMP/cli.log")"
}
# registered NODE: the executor NODE is in the registry.
registered() { [ "$(rc SISMEMBER gavel:executors "$1")" = 1 ]; }

sql() { psql "$GAVEL_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
rc() { redis_cli "$GAVEL_REDIS_URL" "$@"; }
