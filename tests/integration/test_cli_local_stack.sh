#!/usr/bin/env bash
# The operator CLI finds the local stack by itself, in TAP: with no GAVEL_*
# variable at all, `gavel tenant create`, `key create`, `audit verify`,
# `usage` and `migrate` use what `gavel-local start` (make run) left in
# var/local.env of the checkout the binary sits in; with nothing running
# they say what to set. The stack runs in a temporary copy of the checkout's
# shape (build/gavel, deploy/local/gavel-local, var/) on free ports (Redis
# on its socket), so it does not touch a `make run` of this checkout; no
# daemon is started (only PostgreSQL, Redis, migrations and the demo tenant
# matter here).
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
G=${BUILD:-build}/gavel
case "$G" in /*) ;; *) G=$PWD/$G ;; esac
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
# shellcheck source=tests/lib/redis.sh
. tests/lib/redis.sh
echo 1..18
[ -x "$G" ] || bail "$G is not built"

T=$(mktemp -d /tmp/gavel-cli-local.XXXXXX) || bail "mktemp failed"
chmod 0755 "$T" # the services run as the gavel user and must reach var/
mkdir -p "$T/build" "$T/deploy/local"
cp "$G" "$T/build/gavel"
cp deploy/local/gavel-local "$T/deploy/local/gavel-local"
PG=$(_services_free_port) && AP=$(_services_free_port "$PG") ||
	bail "no free port"
local_stack() { # gavel-local command, as make run would run it for this "checkout"
	GAVEL_ROOT=$REPO GAVEL_VAR=$T/var BUILD=$T/build GAVEL_PG_PORT=$PG \
		GAVEL_API_PORT=$AP GAVEL_PG_FAST=1 "$REPO/deploy/local/gavel-local" "$@"
}
cleanup() {
	local_stack stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# The CLI with no GAVEL_* variable, from the repository root (as a user
# types it after make run). Output in $T/out, exit status in $rc.
bare() {
	(cd "$REPO" && env -i PATH="$PATH" HOME=/root LANG=C.UTF-8 "$T/build/gavel" "$@") >"$T/out" 2>&1
	rc=$?
}
check_detail() { sed 's/^/  /' "$T/out" 2>/dev/null | head -n 20; }
says() { grep -qF -- "$1" "$T/out"; }

bare tenant create before-start
check "nothing running: tenant create fails" test "$rc" != 0
check "nothing running: says to set GAVEL_DATABASE_URL or run make run" \
	bash -c "grep -q 'no database URL: pass --database-url or set GAVEL_DATABASE_URL' '$T/out' && grep -q 'make run' '$T/out'"

if ! local_stack start >"$T/start.log" 2>&1; then
	notok "local stack starts" "$(tail -n 20 "$T/start.log")"
	exit 1
fi
ok "local stack starts"
check "local.env is written, mode 0600, with the demo key" bash -c \
	"[ \"\$(stat -c %a '$T/var/local.env')\" = 600 ] && grep -qx 'GAVEL_API_KEY=$(head -n1 "$T/var/demo-api-key" 2>/dev/null)' '$T/var/local.env' &&
	 grep -q '^GAVEL_DATABASE_URL=postgresql://gavel_owner:.*@127.0.0.1:$PG/gavel\$' '$T/var/local.env'"

NAME=local-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
bare tenant create "$NAME" --weight 3
check "tenant create with no environment" test "$rc" = 0
bare tenant show "$NAME"
check "tenant show finds it" says "\"name\": \"$NAME\""
ID=$(sed -n 's/^  "id": "\(.*\)",/\1/p' "$T/out")
check "its scheduling config reached the local Redis" \
	test "$(redis_cli "$(sed -n 's/^GAVEL_REDIS_URL=//p' "$T/var/local.env")" HGET "gavel:tenantcfg:$ID" weight 2>/dev/null)" = 3
bare key create --tenant "$NAME"
check "key create with no environment prints a key" bash -c "grep -qE '^gv_[A-Za-z0-9_-]{43}\$' '$T/out'"
bare audit verify --tenant "$NAME"
check "audit verify with no environment" says "chain intact"
bare usage --tenant "$NAME"
check "usage with no environment" test "$rc" = 0
bare migrate
check "migrate with no environment: nothing to apply" says "nothing to apply"
(cd "$REPO" && env -i PATH="$PATH" GAVEL_DATABASE_URL="postgresql://nobody:x@127.0.0.1:1/none" \
	"$T/build/gavel" tenant list) >"$T/out" 2>&1
check "GAVEL_DATABASE_URL wins over local.env" bash -c "! grep -q '$NAME' '$T/out' && ! grep -q 'is the local stack' '$T/out'"

chmod 0666 "$T/var/local.env"
bare tenant list
check "a local.env others may write is refused, with the reason" bash -c \
	"grep -q 'private to it' '$T/out' && ! grep -q '$NAME' '$T/out'"
chmod 0644 "$T/var/local.env"
bare tenant list
check "a local.env others may read (it holds the owner's password) is refused" bash -c \
	"grep -q 'private to it' '$T/out' && ! grep -q '$NAME' '$T/out'"
chmod 0600 "$T/var/local.env"

cp -p "$T/var/local.env" "$T/local.env.saved"
local_stack stop >"$T/stop.log" 2>&1
check "stop removes local.env" test ! -e "$T/var/local.env"
bare tenant create after-stop
check "after stop: tenant create fails and says to run make run" \
	bash -c "[ $rc != 0 ] && grep -q 'make run' '$T/out' && grep -q GAVEL_DATABASE_URL '$T/out'"
# A local.env left behind by a stack that died: the connection error says
# where the URL came from and that the stack may be stopped.
cp -p "$T/local.env.saved" "$T/var/local.env"
bare tenant list
check "stale local.env: connection error names the file and make run" \
	bash -c "[ $rc != 0 ] && grep -q 'is the local stack still running' '$T/out' && grep -qF '$T/var/local.env' '$T/out'"
bare problem push tests/problems/sum --url "http://127.0.0.1:$AP"
check "problem push takes the demo key from local.env" bash -c "! grep -q 'no API key' '$T/out'"
[ "$fails" -eq 0 ]
