# shellcheck shell=bash
# What the whole-stack tests (test_stack_e2e.sh, test_service_scale.sh)
# share: private runsc/work/cgroup roots named after the test, PostgreSQL and
# Redis from the harness (or started here when run alone), migrations, an
# empty Redis, and a tear-down on any exit that stops every daemon started
# into PIDS (process groups), deletes sandboxes a killed executor left, and
# removes the roots and cgroups. Needs ROOT, BUILD and bail() from the test.

# stack_setup NAME [KEEP_LOGS_DIR]: sets TAG, TMP, RUNSC_ROOT, WORK_ROOT,
# CG_PARENT and PIDS (append daemon pids to it).
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
	export GAVEL_DATABASE_SERVICE_URL=${GAVEL_SERVICE_DATABASE_URL:-$GAVEL_DATABASE_URL}

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
	for cg in /sys/fs/cgroup/*/"$CG_PARENT" /sys/fs/cgroup/"$CG_PARENT"; do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

sql() { psql "$GAVEL_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
rc() { redis-cli -u "$GAVEL_REDIS_URL" "$@"; }
