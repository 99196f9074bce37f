#!/usr/bin/env bash
# Tenancy across several frontends, against the harness's PostgreSQL and
# Redis and two real gavel-frontends:
#  - a burst over a tenant's rate limit sent to both frontends at once gets
#    429s with Retry-After and X-RateLimit-* headers, and the number
#    accepted matches the shared token bucket (burst + rate x elapsed),
#    from 5% over to 15% under;
#  - a revoked key stops working on every frontend within one second.
# TAP output; the frontends are stopped on exit.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_FRONTEND_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
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
	GAVEL_FRONTEND_THREADS=2 \
		env -u GAVEL_DATABASE_URL GAVEL_DATABASE_SERVICE_URL="$GAVEL_FRONTEND_DATABASE_URL" \
		GAVEL_REDIS_URL="${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}" \
		"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port$i" >"$tmp/fe$i.log" 2>&1 &
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

# 600 requests, alternating frontends, from 16 threads on kept-alive
# connections (one curl process per request was too slow on a busy 2-core
# CI machine: the burst took over 5 s, the bucket refilled as fast as it
# was drained and nothing was refused). Prints the counts, the window and
# the first 429's headers; the bucket's expectation is computed from the
# window the requests really took.
python3 - "$K" "$RATE" "$BURST" "${ports[@]}" >"$tmp/verdict" 2>"$tmp/load.err" <<'PY'
import http.client, sys, threading, time
key, rate, burst, ports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
total, workers = 600, 16
codes, first429, lock = {}, [], threading.Lock()
todo = iter(range(total))
def worker():
    conns = {}
    while True:
        with lock:
            i = next(todo, None)
        if i is None:
            return
        port = ports[i % len(ports)]
        for attempt in (0, 1):
            try:
                c = conns.get(port) or http.client.HTTPConnection("127.0.0.1", int(port), timeout=20)
                conns[port] = c
                c.request("GET", "/v1/submissions/nosuchsubmission0000", headers={"X-Auth-Token": key})
                r = c.getresponse()
                r.read()
                break
            except (OSError, http.client.HTTPException):
                conns.pop(port, None)
                if attempt:
                    r = None
        with lock:
            code = r.status if r is not None else 0
            codes[code] = codes.get(code, 0) + 1
            if code == 429 and not first429:
                first429.append("\n".join("%s: %s" % kv for kv in r.getheaders()))
threads = [threading.Thread(target=worker) for _ in range(workers)]
start = time.time()
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.time() - start
accepted, limited = codes.get(404, 0), codes.get(429, 0)
expected = burst + rate * elapsed
# At most 5% over the bucket (one shared bucket; two would pass twice as
# many), at most 15% under: the window is measured here, from the first
# thread's start to the last one's end, and on a loaded machine it runs
# longer than the span the frontends saw (seen: 8% under at load 9).
print("%d %d %d %.1f %.3f %s" % (accepted, limited, 1 if -0.15 * expected <= accepted - expected <= 0.05 * expected else 0,
                                 expected, elapsed, ",".join("%s:%s" % kv for kv in sorted(codes.items()))))
sys.stderr.write((first429[0] if first429 else "") + "\n")
PY
read -r accepted limited within expected elapsed all_codes <"$tmp/verdict"
accepted=${accepted:-0} limited=${limited:-0}
if [ $((accepted + limited)) -eq 600 ] && [ "$limited" -gt 0 ]; then
	ok "600 requests over 2 frontends: $accepted accepted, $limited refused with 429"
else
	notok "600 requests over 2 frontends answered 404 or 429" "codes ${all_codes:-none} in ${elapsed:-?} s"
fi
if [ "$within" = 1 ]; then
	ok "accepted $accepted vs bucket $expected (burst $BURST + $RATE/s x ${elapsed}s): 5% over to 15% under"
else
	notok "accepted count matches the shared bucket (5% over to 15% under)" "accepted $accepted, expected $expected over ${elapsed}s"
fi
h429=$(cat "$tmp/load.err")
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
