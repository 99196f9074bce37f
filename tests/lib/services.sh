# PostgreSQL and Redis for the integration tests, each run in a fresh
# temporary folder (PostgreSQL on a free random port, Redis on its unix
# socket only), through the same code as the local cluster
# (deploy/local/gavel-local with GAVEL_VAR pointing at the folder).
# Sourced by tests/run.sh; also usable by hand:
#
#   . tests/lib/services.sh
#   d=$(mktemp -d /tmp/gavel-svc.XXXXXX); services_start "$d" && . "$d/env"
#   ...; services_stop "$d"; rm -rf "$d"
#
# DIR/env exports GAVEL_DATABASE_URL (gavel_owner: migrations, DDL, the
# CLI), GAVEL_FRONTEND_DATABASE_URL, GAVEL_SCHEDULER_DATABASE_URL and
# GAVEL_EXECUTOR_DATABASE_URL (each daemon's own role: start the daemon
# with its URL as GAVEL_DATABASE_SERVICE_URL and without GAVEL_DATABASE_URL;
# tests/lib/stack.sh's STACK_AS_* do), GAVEL_REDIS_URL (Redis user
# gavel-admin: FLUSHDB, inspecting queues), GAVEL_REDIS_URL_FRONTEND,
# GAVEL_REDIS_URL_SCHEDULER and GAVEL_REDIS_URL_EXECUTOR (each daemon's own
# Redis user: start the daemon with GAVEL_REDIS_URL set to it, as STACK_AS_*
# do), all unix://user:password@/path URLs (tests/lib/redis.sh's redis_cli
# takes them), GAVEL_REDIS_SOCKET, GAVEL_PG_PORT, GAVEL_PG_SOCKET_DIR.
# Redis has no TCP port. The clusters run without fsync (throwaway data)
# unless GAVEL_SERVICES_FAST=0 (the service benchmark's durable writes).

_services_local=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deploy/local/gavel-local

# Prints a TCP port in 20000-39999 that nothing listens on and that differs
# from the ports given as arguments. GAVEL_PORT_BASE and GAVEL_PORT_SPAN
# move the range: the fresh-root check, which picks its ports minutes before
# its servers listen, takes 10000-19999, where no other test picks.
_services_free_port() {
	local p i x taken base=${GAVEL_PORT_BASE:-20000} span=${GAVEL_PORT_SPAN:-20000}
	for ((i = 0; i < 200; i++)); do
		p=$((base + (RANDOM * 32768 + RANDOM) % span))
		taken=0
		for x in "$@"; do [ "$x" = "$p" ] && taken=1; done
		[ $taken -eq 0 ] || continue
		[ -z "$(ss -Hltn "( sport = :$p )" 2>/dev/null)" ] || continue
		printf '%s\n' "$p"
		return 0
	done
	return 1
}

_services_run() { # dir command...
	local dir=$1
	shift
	local pg
	pg=$(sed -n 's/^pg=//p' "$dir/ports" 2>/dev/null)
	GAVEL_VAR=$dir GAVEL_PG_PORT=${pg:-5433} GAVEL_PG_FAST=${GAVEL_SERVICES_FAST:-1} \
		"$_services_local" "$@"
}

# services_start DIR: starts PostgreSQL and Redis with their state in DIR
# and writes DIR/env. Returns non-zero (with the reason on stderr) when they
# cannot be started; whatever did start is stopped again.
services_start() {
	local dir=${1:?services_start DIR}
	local pg
	[ -d "$dir" ] || { echo "services_start: $dir is not a folder" >&2; return 1; }
	# A port can be taken between our check and the server's bind: retry
	# with fresh ports a few times.
	for _ in 1 2 3; do
		if ! pg=$(_services_free_port); then
			echo "services_start: no free port in 20000-39999" >&2
			return 1
		fi
		printf 'pg=%s\n' "$pg" >"$dir/ports"
		if _services_run "$dir" services-start >"$dir/start.log" 2>&1 &&
			_services_run "$dir" env >"$dir/env.tmp" 2>>"$dir/start.log"; then
			chmod 0600 "$dir/env.tmp"
			mv "$dir/env.tmp" "$dir/env"
			return 0
		fi
		_services_run "$dir" stop >>"$dir/start.log" 2>&1
		grep -q 'already in use' "$dir/start.log" || break
	done
	echo "services_start: could not start PostgreSQL and Redis in $dir:" >&2
	sed 's/^/    /' "$dir/start.log" >&2
	return 1
}

# services_stop DIR: stops everything started in DIR, also after a partial
# or failed start; leaves DIR itself for the caller to remove.
services_stop() {
	local dir=${1:?services_stop DIR}
	[ -d "$dir" ] || return 0
	_services_run "$dir" stop
}
