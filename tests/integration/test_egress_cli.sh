#!/usr/bin/env bash
# `gavel tenant update --egress-*` against the real PostgreSQL of
# tests/run.sh, in TAP: an allow list with a rate is stored as the tenant's
# egress_policy (what the executor loads at each job); a private address, a
# list without a rate and a malformed destination are refused; --egress-none
# takes the network away again. Fresh random names per run: idempotent.
set -u
cd "$(dirname "$0")/../.."
G=${BUILD:-build}/gavel
case "$G" in /*) ;; *) G=$PWD/$G ;; esac
DIR=${GAVEL_MIGRATIONS_DIR:-$PWD/deploy/sql}
OUT=$(mktemp /tmp/egress-cli.XXXXXX)
trap 'rm -f "$OUT"' EXIT
n=0
check() { # description command...
	local d=$1
	shift
	n=$((n + 1))
	if "$@" >"$OUT" 2>&1; then
		echo "ok $n - $d"
	else
		echo "not ok $n - $d"
		sed 's/^/# /' "$OUT"
	fi
}
echo 1..8
for v in GAVEL_DATABASE_URL GAVEL_REDIS_URL; do
	if [ -z "${!v:-}" ]; then
		echo "not ok 1 - $v is not set: run this through tests/run.sh"
		exit 1
	fi
done
[ -x "$G" ] || { echo "not ok 1 - $G is not built"; exit 1; }
policy() { psql -X -q -At -v ON_ERROR_STOP=1 "$GAVEL_DATABASE_URL" -c \
	"SELECT q.egress_policy::text FROM tenant_quotas q JOIN tenants t ON t.id = q.tenant_id WHERE t.name = '$1'"; }

contains() { case "$1" in *"$2"*) return 0 ;; esac; echo "'$1' lacks '$2'"; return 1; }

check "migrations apply" "$G" migrate --dir "$DIR"
T=egress-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
"$G" tenant create "$T" >/dev/null 2>&1
check "a new tenant has no network" contains "$(policy "$T")" '"mode": "none"'
check "update --egress-allow --egress-rate" "$G" tenant update "$T" \
	--egress-allow 198.51.100.7:443,udp:203.0.113.0/24:53 --egress-allow api.example.com:8000-8080 --egress-rate 5000
P=$(policy "$T")
check "the policy is stored as given" bash -c 'for w in "\"allowlist\"" "198.51.100.7:443" "udp:203.0.113.0/24:53" \
	"api.example.com:8000-8080" "\"rate_kbit\": 5000"; do case "$1" in *"$w"*) ;; *) echo "no $w in $1"; exit 1 ;; esac; done' _ "$P"
check "a private destination is refused" bash -c "! '$G' tenant update '$T' --egress-allow 10.1.2.3:22 --egress-rate 1000"
check "an allow list without a rate is refused, saying so" bash -c \
	"out=\$('$G' tenant update '$T' --egress-allow 198.51.100.7:443 2>&1); rc=\$?; echo \"\$out\"; [ \$rc -ne 0 ] && echo \"\$out\" | grep -q rate"
check "the refusals left the policy as it was" test "$(policy "$T")" = "$P"
check "--egress-none takes the network away" bash -c \
	"'$G' tenant update '$T' --egress-none && [ \"\$(psql -X -q -At '$GAVEL_DATABASE_URL' -c \"SELECT q.egress_policy->>'mode' FROM tenant_quotas q JOIN tenants t ON t.id = q.tenant_id WHERE t.name = '$T'\")\" = none ]"
