#!/usr/bin/env bash
# The operator CLI against the real PostgreSQL of tests/run.sh, in TAP:
# tenant create/show/update/disable, key create (the key alone on stdout)
# / list / revoke, audit verify before and after tampering with one record
# as the owner, usage, retention. Fresh random names per run: idempotent.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh
G=${BUILD:-build}/gavel
case "$G" in /*) ;; *) G=$PWD/$G ;; esac
DIR=${GAVEL_MIGRATIONS_DIR:-$PWD/deploy/sql}
n=0
check() { # description command...
	local d=$1
	shift
	n=$((n + 1))
	if "$@" >/tmp/tenant-cli-$$.out 2>&1; then
		echo "ok $n - $d"
	else
		echo "not ok $n - $d"
		sed 's/^/# /' /tmp/tenant-cli-$$.out
	fi
}
trap 'rm -f /tmp/tenant-cli-$$.out' EXIT
echo 1..14
for v in GAVEL_DATABASE_URL GAVEL_REDIS_URL; do
	if [ -z "${!v:-}" ]; then
		echo "not ok 1 - $v is not set: run this through tests/run.sh"
		exit 1
	fi
done
[ -x "$G" ] || { echo "not ok 1 - $G is not built"; exit 1; }
psql_owner() { psql -X -q -At -v ON_ERROR_STOP=1 "$GAVEL_DATABASE_URL" "$@"; }

check "migrations apply" "$G" migrate --dir "$DIR"
T=cli-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
check "tenant create" "$G" tenant create "$T" --weight 2
check "tenant create refuses a taken name" bash -c "! '$G' tenant create '$T'"
check "tenant update --quota" "$G" tenant update "$T" --quota max_cpu_ms=2500 --quota allowed_languages=c,python3
check "tenant update refuses an unknown quota" bash -c "! '$G' tenant update '$T' --quota nope=1"
check "tenant show has the new quota" bash -c "'$G' tenant show '$T' | grep -q '\"max_cpu_ms\": 2500'"
check "scheduler config in Redis" bash -c \
	"id=\$('$G' tenant show '$T' | sed -n 's/^  \"id\": \"\\(.*\\)\",/\\1/p'); [ \"\$(redis_cli \"\$GAVEL_REDIS_URL\" HGET gavel:tenantcfg:\$id weight)\" = 2 ]"

# key create prints exactly one line: the key.
KEY=$("$G" key create --tenant "$T" --label ci --expires 2999-01-01 2>/dev/null)
check "key create prints the key alone" bash -c "[[ '$KEY' =~ ^gv_[A-Za-z0-9_-]{43}\$ ]] && [ \$(printf '%s\n' '$KEY' | wc -l) = 1 ]"
KID=$("$G" key list --tenant "$T" | awk 'NR == 2 { print $1 }')
check "key list shows it active" bash -c "'$G' key list --tenant '$T' | grep -q '^$KID *active'"
check "key revoke" "$G" key revoke "$KID"
check "key list shows it revoked; revoking again fails" bash -c \
	"'$G' key list --tenant '$T' | grep -q '^$KID *revoked' && ! '$G' key revoke '$KID'"
check "audit verify: intact" bash -c "'$G' audit verify --tenant '$T' | grep -q '4 record(s), chain intact'"
psql_owner -c "UPDATE audit_log SET actor = 'someone-else' WHERE seq = 3 AND tenant_id = (SELECT id FROM tenants WHERE name = '$T')"
check "audit verify after tampering: exit 1 naming seq 3" bash -c \
	"out=\$('$G' audit verify --tenant '$T'); rc=\$?; echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'BROKEN at seq 3'"
check "disable, usage, retention run" bash -c \
	"'$G' tenant disable '$T' && '$G' usage --tenant '$T' >/dev/null && '$G' tenant retention '$T' | grep -q 'examined'"
