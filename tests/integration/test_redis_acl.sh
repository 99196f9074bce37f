#!/usr/bin/env bash
# Tries to get around the Redis lock-down of the local stack (deploy/local/
# gavel-local, which tests/lib/services.sh runs for the harness), in TAP:
#  - the ACL shipped for production (deploy/redis/gavel-users.acl.example)
#    is what gavel-local loads, up to the passwords;
#  - no TCP port: the server listens on its unix socket only;
#  - no unauthenticated access (NOAUTH), the default user is off, a wrong
#    password is refused;
#  - the socket's folder and mode let the service user and root in, and
#    nobody else: nobody and the webhook deliverer's user cannot connect;
#    the ACL file and the passwords are mode 0600;
#  - each daemon's user is refused CONFIG, FLUSHALL, FLUSHDB, KEYS, DEBUG,
#    SCRIPT FLUSH, ACL, MODULE, SHUTDOWN, a key outside its patterns, the
#    same through a Lua script, and what it may only read or only declare;
#  - and a daemon still does its work as its user: gavel-scheduler becomes
#    the leader (lock, snapshot, wake-ups and reconciler scripts). The other
#    integration tests run every daemon as its own user (tests/lib/stack.sh).
# Uses the harness's Redis (tests/run.sh), or starts one when run alone.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh

DAEMONS=(frontend scheduler executor)
FORBIDDEN=("CONFIG GET port" "CONFIG SET maxmemory 1" "FLUSHALL" "FLUSHDB" "KEYS *" "DEBUG SLEEP 0"
	"SCRIPT FLUSH" "ACL LIST" "ACL SETUSER gavel-x on" "MODULE LIST" "SHUTDOWN NOSAVE"
	"SET gavel-acl-test:outside 1" "GET gavel-acl-test:outside"
	"EVAL return(redis.call('FLUSHALL')) 0"
	"EVAL return(redis.call('GET','gavel-acl-test:outside')) 0")
echo "1..$((10 + ${#DAEMONS[@]} * (${#FORBIDDEN[@]} + 2) + 5))"

[ "$(id -u)" -eq 0 ] || bail "needs root (runuser, the harness's users)"
command -v redis-cli >/dev/null || bail "redis-cli missing"

TMP=$(mktemp -d /tmp/gavel-redis-acl.XXXXXX) || bail "mktemp failed"
chmod 0755 "$TMP"
OWN_SERVICES=0
SCHED_PID=
cleanup() {
	if [ -n "$SCHED_PID" ]; then
		kill -TERM "$SCHED_PID" 2>/dev/null
		wait "$SCHED_PID" 2>/dev/null
	fi
	[ -n "${GAVEL_REDIS_URL:-}" ] && redis_cli "$GAVEL_REDIS_URL" DEL gavel-acl-test:outside >/dev/null 2>&1
	if [ $OWN_SERVICES -eq 1 ]; then services_stop "$TMP/services" >/dev/null 2>&1; fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${GAVEL_REDIS_URL_FRONTEND:-}" ]; then
	# shellcheck source=tests/lib/services.sh
	. tests/lib/services.sh
	mkdir -p "$TMP/services"
	services_start "$TMP/services" || bail "could not start PostgreSQL and Redis"
	OWN_SERVICES=1
	# shellcheck disable=SC1091
	. "$TMP/services/env"
fi
: "${GAVEL_REDIS_URL:?}" "${GAVEL_REDIS_SOCKET:?}" "${GAVEL_REDIS_URL_SCHEDULER:?}" "${GAVEL_REDIS_URL_EXECUTOR:?}"
SOCK=$GAVEL_REDIS_SOCKET
VAR=$(dirname "$(dirname "$SOCK")")
url_of() { # daemon
	local v
	v=GAVEL_REDIS_URL_$(printf '%s' "$1" | tr a-z A-Z)
	printf '%s\n' "${!v}"
}
# The reply of a redis-cli run, in $out, for check_detail.
out=
check_detail() { printf '%s' "$out" | head -c 400; }
replies() { # pattern url args...: redis-cli's answer matches the pattern
	local pat=$1
	shift
	out=$(redis_cli "$@" 2>&1)
	[[ $out =~ $pat ]]
}

# ---- the ACL ----
out=$(diff <(deploy/local/gavel-local redis-acl-example) deploy/redis/gavel-users.acl.example 2>&1)
check "deploy/redis/gavel-users.acl.example is gavel-local's ACL (gavel-local redis-acl-example)" test -z "$out"
out=$(sed -E 's/ #[0-9a-f]{64} / #HASH /' "$VAR/redis-users.acl" 2>&1 |
	diff - <(sed -E 's/ #SHA256_OF_[A-Z_]+ / #HASH /' deploy/redis/gavel-users.acl.example) 2>&1)
check "the running stack loaded the same rules, password hashes only" test -z "$out"

# ---- no TCP, no anonymous access ----
pid=$(head -n1 "$(dirname "$SOCK")/redis.pid" 2>/dev/null | tr -dc 0-9)
out=$(ss -Hltnp 2>&1 | grep -E "pid=$pid," || true)
check "redis-server (pid $pid) listens on no TCP port" bash -c "[ -n '$pid' ] && [ -z \"\$(ss -Hltnp | grep -E 'pid=$pid,')\" ]"
check "its port setting is 0" replies '^port'$'\n''0$' "$GAVEL_REDIS_URL" CONFIG GET port
check "a connection without a password is refused (NOAUTH)" replies NOAUTH "unix://$SOCK" SET gavel:backlog x
check "the default user is off" replies 'WRONGPASS|disabled' "unix://default:x@$SOCK" PING
check "a wrong password is refused" replies WRONGPASS "unix://gavel-frontend:not-the-password@$SOCK" PING

# ---- who may open the socket ----
SVC=$(stat -c %U "$SOCK")
out=$(stat -c '%a %U' "$SOCK" "$VAR/redis-users.acl" "$VAR/redis-secrets" "$(dirname "$SOCK")" 2>&1)
check "socket 0700 and the ACL file 0600, the service user's ($SVC); passwords 0600; socket folder 0750" \
	test "$out" = "700 $SVC"$'\n'"600 $SVC"$'\n'"600 root"$'\n'"750 $SVC"
out=$(runuser -u "$SVC" -- redis-cli -s "$SOCK" PING 2>&1)
check "the service user reaches the socket (and must authenticate)" test "$out" = "NOAUTH Authentication required."
others=(nobody)
id -u gavel-webhook >/dev/null 2>&1 && others+=(gavel-webhook)
out=
for u in "${others[@]}"; do
	out+="$u: $(runuser -u "$u" -- env REDISCLI_AUTH=x redis-cli -s "$SOCK" --user gavel-admin PING 2>&1) "
done
check "${others[*]} cannot even connect" bash -c "[ \$(grep -o 'Permission denied' <<<'$out' | wc -l) = ${#others[@]} ]"

# ---- each daemon's user ----
for d in "${DAEMONS[@]}"; do
	url=$(url_of "$d")
	for c in "${FORBIDDEN[@]}"; do
		read -ra words <<<"$c" # words, never globbed
		if [[ $c == EVAL* ]]; then
			check "gavel-$d: $c refused" replies 'NOPERM|can.t run this command|can.t access' "$url" "${words[@]}"
		elif [[ $c == DEBUG* ]]; then
			# enable-debug-command (no) answers before the ACL does.
			check "gavel-$d: $c refused" replies 'NOPERM|DEBUG command not allowed' "$url" "${words[@]}"
		else
			check "gavel-$d: $c refused" replies NOPERM "$url" "${words[@]}"
		fi
	done
	check "gavel-$d: PUBLISH outside its channels refused" replies NOPERM "$url" PUBLISH gavel-acl-test:chan x
	check "gavel-$d: the ACL itself refuses DEBUG (ACL DRYRUN)" \
		replies "no permissions to run the 'debug' command" "$GAVEL_REDIS_URL" ACL DRYRUN "gavel-$d" DEBUG SLEEP 0
done
check "gavel-frontend may read executors, not write them" replies NOPERM "$GAVEL_REDIS_URL_FRONTEND" HSET gavel:exec:acl-test running 0
check "gavel-executor may declare the leader lock to EVAL, not write it" \
	replies "can.t (run this command|access)" "$GAVEL_REDIS_URL_EXECUTOR" EVAL "return redis.call('SET', KEYS[1], 'x')" 1 gavel:sched:lock
check "gavel-executor cannot DEL the leader lock" replies NOPERM "$GAVEL_REDIS_URL_EXECUTOR" DEL gavel:sched:lock
check "nothing was written outside the patterns" replies '^0$' "$GAVEL_REDIS_URL" EXISTS gavel-acl-test:outside

# ---- real work as the daemon's user ----
if [ ! -x "$BUILD/gavel-scheduler" ]; then
	notok "gavel-scheduler leads as gavel-scheduler" "$BUILD/gavel-scheduler is not built"
else
	"$BUILD/gavel" migrate --dir "$ROOT/deploy/sql" >"$TMP/migrate.log" 2>&1 || bail "gavel migrate failed"
	redis_cli "$GAVEL_REDIS_URL" DEL gavel:sched:lock >/dev/null
	GAVEL_DATABASE_SERVICE_URL=${GAVEL_SCHEDULER_DATABASE_URL:-${GAVEL_DATABASE_URL:-}} \
		GAVEL_REDIS_URL=$GAVEL_REDIS_URL_SCHEDULER GAVEL_SCHEDULER_INSTANCE=acl-$$ GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
		GAVEL_SCHEDULER_RECONCILE_INTERVAL=100ms GAVEL_LOG_LEVEL=info \
		"$BUILD/gavel-scheduler" >"$TMP/scheduler.log" 2>&1 </dev/null &
	SCHED_PID=$!
	for _ in $(seq 50); do
		[[ $(redis_cli "$GAVEL_REDIS_URL" GET gavel:sched:lock 2>/dev/null) == acl-$$:* ]] && break
		sleep 0.1
	done
	sleep 1 # a few ticks and reconciler passes
	out=$(grep -iE 'NOPERM|no permissions|error' "$TMP/scheduler.log" | head -n 5)
	check "gavel-scheduler leads as gavel-scheduler, its ticks and reconciler without a refusal" \
		bash -c "[[ \$(redis_cli \"\$GAVEL_REDIS_URL\" GET gavel:sched:lock) == acl-$$:* ]] && kill -0 $SCHED_PID && [ -z \"\$(grep -iE 'NOPERM|no permissions|error' '$TMP/scheduler.log')\" ]"
fi
