#!/usr/bin/env bash
# Tenancy across several frontends, against the harness's PostgreSQL and
# Redis and two real gavel-frontends:
#  - a burst over a tenant's rate limit sent to both frontends at once gets
#    429s with Retry-After and X-RateLimit-* headers, and the number
#    accepted matches the shared token bucket (burst + rate x elapsed) within
#    5%;
#  - a revoked key stops working on every frontend within one second.
# TAP output; the frontends are stopped on exit.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_SERVICE_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "# $2"; }
echo "1..6"
tmp=$(mktemp -d /tmp/gavel-frontends-test.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

G=$BUILD/gavel
"$G" migrate --dir deploy/sql >"$tmp/migrate.log" 2>&1 || { echo "Bail out! migrate failed"; exit 1; }
T=fe2_$$_$RANDOM
RATE=100 BURST=100
"$G" tenant create "$T" >/dev/null 2>&1 &&
	"$G" tenant update "$T" --quota requests_per_second=$RATE --quota burst=$BURST >/dev/null 2>&1 ||
	{ echo "Bail out! tenant setup failed"; exit 1; }
K=$("$G" key create --tenant "$T" 2>/dev/null)
[ -n "$K" ] || { echo "Bail out! gavel key create failed"; exit 1; }

ports=()
for i in 1 2; do
	GAVEL_FRONTEND_THREADS=2 "$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port$i" >"$tmp/fe$i.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do [ -s "$tmp/port$i" ] && break; sleep 0.1; done
	p=$(head -n1 "$tmp/port$i")
	[ -n "$p" ] || { echo "Bail out! frontend $i did not start: $(tail -n5 "$tmp/fe$i.log")"; exit 1; }
	ports+=("$p")
	for _ in $(seq 50); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/v1/health")" = 200 ] && break
		sleep 0.1
	done
done
# Let the bucket fill completely before the burst.
sleep 1.5

# 600 requests, alternating frontends, 16 at a time; each line: code and the
# request's start time.
for i in $(seq 600); do echo "${ports[$((i % 2))]}"; done >"$tmp/targets"
start=$(date +%s.%N)
xargs -P 16 -I{} curl -s -o /dev/null -D - -H "X-Auth-Token: $K" \
	"http://127.0.0.1:{}/v1/submissions/nosuchsubmission0000" <"$tmp/targets" >"$tmp/headers"
end=$(date +%s.%N)
accepted=$(grep -c '^HTTP/1.1 404' "$tmp/headers")
limited=$(grep -c '^HTTP/1.1 429' "$tmp/headers")
python3 - "$start" "$end" "$accepted" "$RATE" "$BURST" >"$tmp/verdict" <<'PY'
import sys
start, end, accepted, rate, burst = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
expected = burst + rate * (end - start)
print("%d %.1f %.3f" % (1 if abs(accepted - expected) <= 0.05 * expected else 0, expected, end - start))
PY
read -r within expected elapsed <"$tmp/verdict"
if [ $((accepted + limited)) -eq 600 ] && [ "$limited" -gt 0 ]; then
	ok "600 requests over 2 frontends: $accepted accepted, $limited refused with 429"
else
	notok "600 requests over 2 frontends answered 404 or 429" "accepted $accepted, limited $limited"
fi
if [ "$within" = 1 ]; then
	ok "accepted $accepted vs bucket $expected (burst $BURST + $RATE/s x ${elapsed}s): within 5%"
else
	notok "accepted count matches the shared bucket within 5%" "accepted $accepted, expected $expected over ${elapsed}s"
fi
h429=$(awk 'BEGIN{RS="\r\n\r\n"} /^HTTP\/1.1 429/ {print; exit}' "$tmp/headers")
if grep -qi '^Retry-After: [0-9]' <<<"$h429" && grep -qi '^X-RateLimit-Limit: [0-9]' <<<"$h429" &&
	grep -qi '^X-RateLimit-Remaining: [0-9]' <<<"$h429" && grep -qi '^X-RateLimit-Reset: [0-9]' <<<"$h429"; then
	ok "429 carries Retry-After and X-RateLimit-Limit/Remaining/Reset"
else
	notok "429 carries Retry-After and X-RateLimit-* headers" "$(tr '\r\n' '  ' <<<"$h429" | head -c 400)"
fi

# Revocation: both frontends know the key (cached), then it is revoked.
sleep 1.2
codes=""
for p in "${ports[@]}"; do
	codes+="$(curl -s -o /dev/null -w '%{http_code}' -H "X-Auth-Token: $K" "http://127.0.0.1:$p/v1/submissions/nosuchsubmission0000") "
done
[ "$codes" = "404 404 " ] && ok "the key works on both frontends before revocation" ||
	notok "the key works on both frontends before revocation" "codes $codes"
kid=$("$G" key list --tenant "$T" 2>/dev/null | awk 'NR>1 && $1 ~ /^[0-9a-f-]{36}$/ {print $1; exit}')
[ -n "$kid" ] || kid=$(psql "$GAVEL_DATABASE_URL" -XAtq -c "SELECT k.id FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE t.name = '$T'")
"$G" key revoke "$kid" >/dev/null 2>&1 || notok "gavel key revoke" "id '$kid'"
revoked_at=$(date +%s.%N)
sleep 1.05
codes=""
for p in "${ports[@]}"; do
	codes+="$(curl -s -o /dev/null -w '%{http_code}' -H "X-Auth-Token: $K" "http://127.0.0.1:$p/v1/submissions/nosuchsubmission0000") "
done
waited=$(python3 -c "import time,sys; print('%.2f' % (time.time() - float(sys.argv[1])))" "$revoked_at")
if [ "$codes" = "401 401 " ]; then
	ok "revoked key refused (401) by both frontends ${waited}s after revocation"
else
	notok "revoked key refused by both frontends within one second" "codes $codes after ${waited}s"
fi
for i in 0 1; do
	kill -0 "${pids[$i]}" 2>/dev/null || { notok "frontends still running"; exit 1; }
done
ok "both frontends still running"
