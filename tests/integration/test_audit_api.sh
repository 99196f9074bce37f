#!/usr/bin/env bash
# The audit trail and usage seen through the API, against the harness's
# PostgreSQL and Redis and a real gavel-frontend: every submission has its
# `submission.created` record written in the INSERT's transaction (native,
# Judge0 batch), GET /v1/audit pages and filters a tenant's own records and
# shows another tenant none of them, quota refusals (per-job ceiling,
# max_queued, rate limit) are recorded (the rate limit's at most once per
# tenant and second per frontend thread), `gavel audit verify` accepts a
# chain written by the SQL path (frontend) and the C path (CLI), the batch
# append (gavel_audit_append_many) chains, refuses and stays tenant-bound
# and tampering shows, and GET /v1/usage answers per day. TAP output; the frontend is stopped on exit.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
: "${GAVEL_DATABASE_URL:?run under tests/run.sh (needs the harness env)}"
: "${GAVEL_FRONTEND_DATABASE_URL:?}" "${GAVEL_REDIS_URL:?}"
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "# $2"; }
check() { # name condition-command...
	local name=$1; shift
	if "$@"; then ok "$name"; else notok "$name" "got: ${last_code:-} ${last_body:0:400}"; fi
}
echo "1..31"
tmp=$(mktemp -d /tmp/gavel-audit-test.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

G=$BUILD/gavel
"$G" migrate --dir deploy/sql >"$tmp/migrate.log" 2>&1 || { echo "Bail out! migrate failed: $(tail -n3 "$tmp/migrate.log")"; exit 1; }
sfx=$$_$RANDOM
TA=au_a_$sfx TB=au_b_$sfx TC=au_c_$sfx TD=au_d_$sfx
for t in "$TA" "$TB" "$TC" "$TD"; do
	"$G" tenant create "$t" >/dev/null 2>&1 || { echo "Bail out! gavel tenant create $t failed"; exit 1; }
done
# Quotas are set before the frontend first sees the keys (it caches them).
"$G" tenant update "$TA" --quota max_cpu_ms=2000 >/dev/null 2>&1 &&
	"$G" tenant update "$TC" --quota requests_per_second=1 --quota burst=1 >/dev/null 2>&1 &&
	"$G" tenant update "$TD" --quota max_queued=0 >/dev/null 2>&1 || { echo "Bail out! gavel tenant update failed"; exit 1; }
KA=$("$G" key create --tenant "$TA" 2>/dev/null)
KB=$("$G" key create --tenant "$TB" 2>/dev/null)
KC=$("$G" key create --tenant "$TC" 2>/dev/null)
KD=$("$G" key create --tenant "$TD" 2>/dev/null)
[ -n "$KA" ] && [ -n "$KB" ] && [ -n "$KC" ] && [ -n "$KD" ] || { echo "Bail out! gavel key create failed"; exit 1; }
psql_owner() { psql "$GAVEL_DATABASE_URL" -XAtq "$@"; }
TIDA=$(psql_owner -c "SELECT id FROM tenants WHERE name = '$TA'")

GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=2s \
	env -u GAVEL_DATABASE_URL GAVEL_DATABASE_SERVICE_URL="$GAVEL_FRONTEND_DATABASE_URL" \
		GAVEL_REDIS_URL="${GAVEL_REDIS_URL_FRONTEND:-$GAVEL_REDIS_URL}" \
		"$BUILD/gavel-frontend" --port 0 --ready-fd 3 3>"$tmp/port" >"$tmp/fe.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(head -n1 "$tmp/port")
[ -n "$P" ] || { echo "Bail out! gavel-frontend did not start: $(tail -n5 "$tmp/fe.log")"; exit 1; }
B=http://127.0.0.1:$P
for _ in $(seq 50); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/health")" = 200 ] && break
	sleep 0.1
done

req() { # METHOD PATH [curl args...]: sets last_code and last_body
	local m=$1 p=$2; shift 2
	last_body=$(curl -s -m 10 -X "$m" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
}
code_is() { [ "$last_code" = "$1" ]; }
jq_() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
A=(-H "X-Auth-Token: $KA")
Bk=(-H "X-Auth-Token: $KB")
SECRET_SRC='print("audit-secret-source-7f3a")'

# Submissions of tenant A: three native ones and a Judge0 batch of two.
ids=()
for body in "{\"language\":\"python3\",\"source\":$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$SECRET_SRC")}" \
	'{"language":"python3","source":"print(int(input())*2)","tests":[{"input":"2\n","expected":"4\n"},{"input":"3\n","expected":"6\n"}]}' \
	'{"language":"c","files":[{"name":"main.c","content":"int main(void){return 0;}"}],"stdin":"abc"}'; do
	req POST /v1/submissions "${A[@]}" -d "$body"
	[ "$last_code" = 201 ] && ids+=("$(jq_ 'd["id"]')")
done
req POST /submissions/batch "${A[@]}" -d '{"submissions":[{"language_id":71,"source_code":"print(1)"},{"language_id":71,"source_code":"print(2)"}]}'
if [ "$last_code" = 201 ]; then
	while read -r t; do ids+=("$t"); done < <(jq_ '"\n".join(x["token"] for x in d)')
fi
check "five submissions created (3 native, 2 in a Judge0 batch)" [ ${#ids[@]} -eq 5 ]

req GET "/v1/audit?action=submission.created&limit=1000" "${A[@]}"
check "GET /v1/audit -> 200" code_is 200
created=$(jq_ '" ".join(sorted(r["object"] for r in d["records"]))')
check "submission.created for each submission" [ "$created" = "$(printf '%s\n' "${ids[@]}" | sort | tr '\n' ' ' | sed 's/ $//')" ]
check "actor is the API key" [ "$(jq_ 'set(r["actor"][:4] for r in d["records"])')" = "{'key:'}" ]
check "details: language, sizes, tests (2 for the judged one)" \
	[ "$(jq_ 'sorted((r["details"]["language"], r["details"]["tests"], r["details"]["source_bytes"] > 0) for r in d["records"])[-1]')" = "('python3', 2, True)" ]
no_secrets() { ! grep -qE 'audit-secret-source|int main|"abc"' <<<"$last_body"; }
check "details never hold source or input" no_secrets
req GET "/v1/audit?action=submission.created&limit=2" "${A[@]}"
first=$(jq_ '[r["seq"] for r in d["records"]]') next=$(jq_ 'd["next_after"]')
req GET "/v1/audit?action=submission.created&limit=2&after=$next" "${A[@]}"
check "paging by seq: after=next_after continues" [ "$(jq_ 'all(r["seq"] > '"$next"' for r in d["records"]) and len(d["records"]) == 2')" = True ]
check "first page was 2 records in seq order" python3 -c "import sys; s=$first; sys.exit(not (len(s) == 2 and s[0] < s[1]))"
req GET "/v1/audit?since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z" "${A[@]}"
check "time filter: nothing in 2000" [ "$(jq_ 'len(d["records"])')" = 0 ]
req GET "/v1/audit?since=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)" "${A[@]}"
check "time filter: records of the last hour" [ "$(jq_ 'len(d["records"]) >= 5')" = True ]
req GET "/v1/audit?limit=1000" "${Bk[@]}"
check "another tenant sees none of A's records" [ "$(jq_ 'sum(1 for r in d["records"] if r["object"] in "'"${ids[*]}"'".split())')" = 0 ]
check "another tenant sees its own (tenant.created, key.created)" [ "$(jq_ 'sorted(set(r["action"] for r in d["records"]))')" = "['key.created', 'tenant.created']" ]
req GET "/v1/audit?limit=0" "${A[@]}"
check "limit=0 -> 400" code_is 400
req GET "/v1/audit?since=yesterday" "${A[@]}"
check "unreadable since -> 400" code_is 400
req GET "/v1/audit?since=2024-13-45T00:00:00Z" "${A[@]}"
check "impossible date -> 400 (PostgreSQL refuses it)" code_is 400
req GET /v1/audit
check "no key -> 401" code_is 401

# Quota refusals.
req POST /v1/submissions "${A[@]}" -d '{"language":"python3","source":"print(1)","limits":{"time_ms":5000}}'
check "per-job ceiling -> 422" code_is 422
req POST /v1/submissions -H "X-Auth-Token: $KD" -d '{"language":"python3","source":"print(1)"}'
check "max_queued=0 -> 429" code_is 429
t0=$(date +%s)
codes=$(for _ in $(seq 30); do curl -s -o /dev/null -w '%{http_code}\n' -H "X-Auth-Token: $KC" "$B/v1/audit?limit=1"; done | sort | uniq -c | tr '\n' ' ')
t1=$(date +%s)
check "rate limit 1/s burst 1: 429s ($codes)" grep -q 429 <<<"$codes"
sleep 1.2 # the refusal records are written without waiting for them
req GET "/v1/audit?action=quota.refused" "${A[@]}"
check "per-job ceiling refusal recorded (max_cpu_ms, 422)" [ "$(jq_ '[(r["details"]["limit"], r["details"]["status"]) for r in d["records"]]')" = "[('max_cpu_ms', 422)]" ]
req GET "/v1/audit?action=quota.refused" -H "X-Auth-Token: $KD"
check "max_queued refusal recorded in the INSERT's transaction" [ "$(jq_ '[(r["details"]["limit"], r["details"]["status"]) for r in d["records"]]')" = "[('max_queued', 429)]" ]
rl=$(psql_owner -c "SELECT count(*), coalesce(sum((details->>'refused')::int), 0) FROM audit_log a JOIN tenants t ON t.id = a.tenant_id WHERE t.name = '$TC' AND action = 'quota.refused'")
nref=${rl%%|*} sumref=${rl##*|}
n429=$(grep -o '[0-9]* 429' <<<"$codes" | cut -d' ' -f1)
check "rate-limit refusals: 1..2 per second per thread (got $nref records for ${n429:-0} 429s in $((t1 - t0 + 1)) s)" \
	[ "$nref" -ge 1 ] && [ "$nref" -le $((2 * (t1 - t0 + 1))) ] && [ "$sumref" -le "${n429:-0}" ]

# The chain mixes the C path (CLI: tenant.created, quota.changed,
# key.created) and the SQL path of the frontend; the C verifier accepts it.
"$G" tenant update "$TA" --quota max_wall_ms=30000 >/dev/null 2>&1
check "audit verify --tenant: chain intact over C and SQL appends" bash -c \
	"'$G' audit verify --tenant '$TA' | grep -q 'chain intact'"

# gavel_audit_append_many (migration 0008), as the frontend's role
# (gavel_frontend, which calls it): one call appends a run of records under
# one lock, refuses any bad record before writing anything, stays inside
# the transaction's tenant, and the role still cannot rewrite the chain;
# tampering shows.
TIDB=$(psql_owner -c "SELECT id FROM tenants WHERE name = '$TB'")
psql_svc() { # tenant sql -> stdout, SQLSTATE-bearing errors on stderr
	psql "$GAVEL_FRONTEND_DATABASE_URL" -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose \
		-c "BEGIN" -c "SELECT set_config('gavel.tenant_id', '$1', true)" -c "$2" -c "COMMIT" 2>&1
}
head_of() { psql_owner -c "SELECT coalesce(max(seq), 0) FROM audit_log WHERE tenant_id = '$1'"; }
h0=$(head_of "$TIDB")
out=$(psql_svc "$TIDB" "SELECT gavel_audit_append_many('$TIDB', ARRAY['system:test','system:test','system:test'], ARRAY['batch.one','batch.two','batch.three'], ARRAY['o1',NULL,'o3'], NULL, NULL, ARRAY['{\"n\":1}','{\"n\":2}',NULL]::jsonb[])")
check "append_many: three records, seqs in order, one call (returns the last seq)" \
	[ "$(sed -n 2p <<<"$out")" = $((h0 + 3)) ] && [ "$(psql_owner -c "SELECT string_agg(seq || ':' || action || ':' || details::text, ',' ORDER BY seq) FROM audit_log WHERE tenant_id = '$TIDB' AND seq > $h0")" = "$((h0 + 1)):batch.one:{\"n\": 1},$((h0 + 2)):batch.two:{\"n\": 2},$((h0 + 3)):batch.three:{}" ]
bad1=$(psql_svc "$TIDB" "SELECT gavel_audit_append_many('$TIDB', ARRAY['system:test','system:test'], ARRAY['ok.one','bad.two'], NULL, NULL, NULL, ARRAY['{}','{\"stdout\":\"x\"}']::jsonb[])")
bad2=$(psql_svc "$TIDB" "SELECT gavel_audit_append_many('$TIDB', ARRAY['system:test'], ARRAY['ok.one','ok.two'], NULL, NULL, NULL, NULL)")
bad3=$(psql_svc "$TIDB" "SELECT gavel_audit_append_many('$TIDA', ARRAY['system:test'], ARRAY['other.tenant'], NULL, NULL, NULL, NULL)")
refusals_ok() {
	grep -q 22023 <<<"$bad1" && grep -q 22023 <<<"$bad2" && grep -q 42501 <<<"$bad3" && [ "$(head_of "$TIDB")" = $((h0 + 3)) ]
}
check "append_many refuses a forbidden key (22023), unequal arrays (22023), another tenant (42501); nothing written" refusals_ok
upd=$(psql_svc "$TIDB" "UPDATE audit_log SET details = '{}' WHERE tenant_id = '$TIDB'")
ins=$(psql_svc "$TIDB" "INSERT INTO audit_log (tenant_id, seq, actor, action, hash) VALUES ('$TIDB', 999999, 'x', 'y', '\\x00')")
denied_ok() { grep -q 42501 <<<"$upd" && grep -q 42501 <<<"$ins"; }
check "the frontend's role can neither UPDATE nor INSERT audit rows (42501)" denied_ok
check "audit verify: the batch-appended chain is intact" bash -c "'$G' audit verify --tenant '$TB' | grep -q 'chain intact'"
psql_owner -c "UPDATE audit_log SET details = '{\"n\": 7}' WHERE tenant_id = '$TIDB' AND seq = $((h0 + 2))" >/dev/null
check "audit verify: tampering with a batch-appended record shows" bash -c "! '$G' audit verify --tenant '$TB' >/dev/null 2>&1"

# Usage per day.
psql_owner -c "INSERT INTO usage_daily (tenant_id, day, submissions, sandbox_cpu_ms, gpu_ms, egress_bytes)
	VALUES ('$TIDA', (now() AT TIME ZONE 'UTC')::date - 1, 3, 1500, 0, 42)
	ON CONFLICT (tenant_id, day) DO UPDATE SET submissions = 3, sandbox_cpu_ms = 1500, egress_bytes = 42"
y=$(date -u -d '-1 day' +%Y-%m-%d)
req GET "/v1/usage?since=$y&until=$y" "${A[@]}"
check "GET /v1/usage: the day's figures and totals" \
	[ "$(jq_ 'd["days"][0]["day"], d["days"][0]["submissions"], d["days"][0]["sandbox_cpu_ms"], d["totals"]["egress_bytes"]')" = "$y 3 1500 42" ]
req GET /v1/usage "${Bk[@]}"
check "another tenant's usage is its own (empty)" [ "$last_code:$(jq_ 'len(d["days"])')" = "200:0" ]
req GET "/v1/usage?since=01/02/2024" "${A[@]}"
check "bad date -> 400" code_is 400

echo "# frontend log tail:"; tail -n 5 "$tmp/fe.log" | sed 's/^/# /'
[ $fails -eq 0 ]
