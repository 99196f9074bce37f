#!/usr/bin/env bash
# HTTP rate benchmark of gavel-frontend alone (figure 4 of bench_service.sh
# without the executor, the judging figures or the scheduler, so it takes
# under a minute): PostgreSQL with fsync on and synchronous_commit on, Redis,
# one tenant, one finished submission; then
#   wrk -t2 -c$BENCH_WRK_CONN GET /v1/languages           (no database)
#   wrk -t2 -c$BENCH_WRK_CONN GET /v1/submissions/{id}    (auth, rate limit, RLS read)
#   wrk -t2 -c$BENCH_WRK_CONN POST /v1/submissions        (durable INSERT + audit + enqueue;
#                                                          no scheduler runs)
# and checks that every 201 left a committed row and a queue entry, and that
# the tenant's audit chain (one record per POST, appended in group commits)
# still verifies (`gavel audit verify`).
#
#   tests/bench/bench_http.sh     (BUILD=build; BENCH_WRK_SECONDS=10, BENCH_WRK_CONN=64,
#                                  BENCH_PERF=1 also records perf profiles of the frontend,
#                                  BENCH_KEEP=1 keeps the temporary folder)
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
WRK_S=${BENCH_WRK_SECONDS:-10}
CONN=${BENCH_WRK_CONN:-64}
die() { echo "bench_http: $*" >&2; exit 1; }
for b in gavel gavel-frontend; do [ -x "$BUILD/$b" ] || die "$BUILD/$b is not built"; done
command -v wrk >/dev/null || die "wrk missing (apt-get install -y wrk)"
TMP=$(mktemp -d /tmp/gavel-bench-http.XXXXXX)
chmod 0755 "$TMP"
FE_PID=
cleanup() {
	[ -n "$FE_PID" ] && kill -TERM "$FE_PID" 2>/dev/null && wait "$FE_PID" 2>/dev/null
	services_stop "$TMP/services" >/dev/null 2>&1
	[ "${BENCH_KEEP:-0}" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
mkdir -p "$TMP/services"
GAVEL_SERVICES_FAST=0 services_start "$TMP/services" || die "could not start PostgreSQL and Redis"
# shellcheck disable=SC1091
. "$TMP/services/env"
# The frontend connects as its own role (gavel_frontend), as in production.
export GAVEL_DATABASE_SERVICE_URL=$GAVEL_FRONTEND_DATABASE_URL GAVEL_REDIS_URL
sql() { psql "$GAVEL_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh
rc() { redis_cli "$GAVEL_REDIS_URL" "$@"; }
"$BUILD/gavel" migrate --dir "$ROOT/deploy/sql" >"$TMP/migrate.log" 2>&1 || die "gavel migrate failed"
"$BUILD/gavel" tenant create bench-a >/dev/null || die "tenant create"
"$BUILD/gavel" tenant update bench-a --quota requests_per_second=1000000 --quota burst=10000000 \
	--quota max_queued=10000000 >/dev/null || die "tenant update"
KA=$("$BUILD/gavel" key create --tenant bench-a) || die "key create"
TA=$(sql -c "SELECT id FROM tenants WHERE name = 'bench-a'")
say_settings=$(sql -c "SELECT string_agg(name || '=' || setting, ' ') FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method')")
PORT=$(_services_free_port "$GAVEL_PG_PORT") || die "no free port"
API=http://127.0.0.1:$PORT
GAVEL_LOG_LEVEL=warn GAVEL_FRONTEND_PORT=$PORT GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	GAVEL_REDIS_URL=$GAVEL_REDIS_URL_FRONTEND "$BUILD/gavel-frontend" >>"$TMP/frontend.log" 2>&1 </dev/null &
FE_PID=$!
for i in $(seq 1 100); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$API/v1/languages")" = 200 ] && break
	[ "$i" = 100 ] && { cat "$TMP/frontend.log" >&2; die "frontend did not come up"; }
	sleep 0.1
done
BODY='{"language":"python3","source":"print(\"hello\")"}'
SID=$(curl -s -X POST "$API/v1/submissions" -H "X-Auth-Token: $KA" -d "$BODY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
	die "first POST failed"
# A finished row, as the executor would leave it.
sql -c "UPDATE submissions SET status='done', verdict='AC', finished_at=now(), started_at=now(),
	result='{\"verdict\":\"AC\",\"compile_output\":\"\",\"tests\":[{\"verdict\":\"AC\",\"time_ms\":12,\"memory_kb\":5120}]}'
	WHERE id = '$SID'" >/dev/null
rc DEL "gavel:tq:$TA" >/dev/null
cat >"$TMP/post.lua" <<-LUA
	wrk.method = "POST"
	wrk.body = [==[$BODY]==]
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["X-Auth-Token"] = "$KA"
	done = function(summary, latency, requests)
	  io.write(string.format("status-non2xx %d\n", summary.errors.status))
	end
LUA
PERF_PID=
perf_on() {
	[ "${BENCH_PERF:-0}" = 1 ] || return 0
	perf record -F 499 -g -p "$FE_PID" -o "$TMP/perf-$1.data" -- sleep $((WRK_S - 2)) >/dev/null 2>&1 &
	PERF_PID=$!
}
perf_wait() { [ -n "$PERF_PID" ] && wait "$PERF_PID"; PERF_PID=; }
# CPU seconds per process name (utime + stime of every live process), to see
# how the two cores split between wrk, the frontend, PostgreSQL and Redis.
cpu_snap() {
	local f c
	for f in /proc/[0-9]*/stat; do
		c=$(cat "$f" 2>/dev/null) || continue
		echo "$c"
	done | awk '{ match($0, /\(.*\)/); name = substr($0, RSTART + 1, RLENGTH - 2); rest = substr($0, RSTART + RLENGTH + 1);
		split(rest, a, " "); t[name] += a[12] + a[13] } END { for (n in t) print n, t[n] }' >"$1"
}
cpu_diff() { # before after seconds -> "name %cpu ..." for the busy ones
	awk -v hz="$(getconf CLK_TCK)" -v s="$3" 'FNR == NR { b[$1] = $2; next } { d = ($2 - b[$1]) / hz / s * 100; if (d >= 3) printf "%s %.0f%%  ", $1, d } END { print "" }' "$1" "$2"
}
rate() { awk '/^Requests\/sec/ {print $2}' "$1"; }
errs() { awk '/Non-2xx/ {n += $NF} /Socket errors/ {n += 1} END {print n + 0}' "$1"; }
lat() { awk '/^    Latency/ {print $2}' "$1"; }
wrk -t2 -c"$CONN" -d"${WRK_S}s" -H "X-Auth-Token: $KA" "$API/v1/languages" >"$TMP/wrk-lang.txt" 2>&1
perf_on get
cpu_snap "$TMP/cpu0"
wrk -t2 -c"$CONN" -d"${WRK_S}s" -H "X-Auth-Token: $KA" "$API/v1/submissions/$SID" >"$TMP/wrk-get.txt" 2>&1
cpu_snap "$TMP/cpu1"
perf_wait
before=$(sql -c "SELECT count(*) FROM submissions")
perf_on post
cpu_snap "$TMP/cpu2"
if [ "${BENCH_PGWAIT:-0}" = 1 ]; then # what the frontend's backends wait on, sampled
	( sleep 2; for _ in $(seq 1 15); do
		psql "$GAVEL_DATABASE_SERVICE_URL" -X -q -t -A -c "SELECT coalesce(wait_event_type || ':' || wait_event, state) FROM pg_stat_activity WHERE application_name = 'gavel-frontend'"
		sleep 0.1
	done | sort | uniq -c | sort -rn >"$TMP/pgwait.txt" ) &
	WAIT_PID=$!
fi
wrk -t2 -c"$CONN" -d"${WRK_S}s" -s "$TMP/post.lua" "$API/v1/submissions" >"$TMP/wrk-post.txt" 2>&1
cpu_snap "$TMP/cpu3"
[ -n "${WAIT_PID:-}" ] && wait "$WAIT_PID"
perf_wait
after=$(sql -c "SELECT count(*) FROM submissions")
posts=$(awk '/requests in/ {print $1}' "$TMP/wrk-post.txt")
queued=$(rc LLEN "gavel:tq:$TA")
verify=$("$BUILD/gavel" audit verify --tenant bench-a 2>&1)
echo "== gavel-frontend HTTP rates, wrk -t2 -c$CONN ${WRK_S}s each, $(nproc) CPUs; $say_settings"
echo "GET /v1/languages:         $(rate "$TMP/wrk-lang.txt")/s  (latency avg $(lat "$TMP/wrk-lang.txt"), $(errs "$TMP/wrk-lang.txt") errors)"
echo "GET /v1/submissions/{id}:  $(rate "$TMP/wrk-get.txt")/s  (latency avg $(lat "$TMP/wrk-get.txt"), $(errs "$TMP/wrk-get.txt") errors)   target >= 10000/s"
echo "POST /v1/submissions:      $(rate "$TMP/wrk-post.txt")/s  (latency avg $(lat "$TMP/wrk-post.txt"), $(errs "$TMP/wrk-post.txt") errors)   target >= 2000/s"
echo "   CPU during GET:  $(cpu_diff "$TMP/cpu0" "$TMP/cpu1" "$WRK_S")"
echo "   CPU during POST: $(cpu_diff "$TMP/cpu2" "$TMP/cpu3" "$WRK_S")"
echo "   rows committed $((after - before)) for $posts responses; Redis queue holds $queued"
echo "   $verify"
[ -s "$TMP/pgwait.txt" ] && { echo "-- frontend backends during POST (samples)"; cat "$TMP/pgwait.txt"; }
if [ "${BENCH_PERF:-0}" = 1 ]; then
	for k in get post; do
		perf report -i "$TMP/perf-$k.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep '%' | head -40 >"$TMP/perf-$k.txt"
		echo "-- perf $k (self, top 25)"; head -25 "$TMP/perf-$k.txt"
	done
fi
grep -v '^$' "$TMP/frontend.log" | tail -n 5
if [ -n "${BENCH_HOLD:-}" ]; then # keep the stack up for a look: BENCH_HOLD=seconds
	echo "holding ${BENCH_HOLD}s: GAVEL_DATABASE_URL=$GAVEL_DATABASE_URL tenant $TA"
	echo "$GAVEL_DATABASE_URL $TA" >/tmp/gavel-bench-http.hold
	sleep "$BENCH_HOLD"
fi
