#!/usr/bin/env bash
# Problems as a service (issue 6) on the real stack: gavel-frontend,
# gavel-scheduler and one gavel-executor (real runsc) over the harness's
# PostgreSQL and Redis, driven over HTTP and with `gavel problem push`:
#
#   a. every fixture package under tests/problems/ (pass-fail, scoring
#      with groups, Kattis and testlib validators, interactive) is pushed,
#      imported in a sandbox and ready; one without a time limit gets one
#      from its accepted submissions, judged locally as problemtools would
#      (the others keep the server's default, --default-time), or --time's;
#   b. every labelled submission of them, judged by the service, gets the
#      verdict (and score) of its label, which is what `gavel judge` gives
#      it (tests/integration/test_judge_fixtures.sh);
#   c. per-test and per-group results, run_all, samples_only;
#   d. versions: a PUT makes version 2, submissions record their version;
#   e. tenant isolation: tenant B gets 404 for A's problem, also on submit;
#   f. the feedback policy: secret data hidden by default, shown as the
#      policy says after a PUT of the policy, enforced by the API;
#   g. a rejected package: the message names the field, GET shows it;
#   h. the second submission to a problem is served from the executor's
#      test-data cache (its log line);
#   i. 413 over max_problem_size, 415 for another Content-Type; DELETE hides
#      the problem, its submissions stay;
#   j. an output-only problem (tests/problems/outputonly): each labelled
#      folder of outputs, sent as named files, gets its label's verdict
#      (multi-pass and file I/O problems go through b like the others).
#
# Needs root (runsc, cgroups). Prints TAP. Everything it starts is stopped
# on exit (tests/lib/stack.sh).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

# One check per fixture push, the rest fixed.
echo "1..$((42 + $(ls -d tests/problems/*/ | wc -l)))"
. tests/lib/tap.sh
check_detail() { echo "last: ${last_code:-} ${last_body:-}"; }
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid tar; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup problems "${GAVEL_PROBLEMS_KEEP_LOGS:-}"
"$BUILD/gavel" tenant create "${TAG}_a" >"$TMP/ta" 2>"$TMP/cli.log" &&
	"$BUILD/gavel" tenant create "${TAG}_b" >"$TMP/tb" 2>>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
KA=$("$BUILD/gavel" key create --tenant "${TAG}_a" 2>>"$TMP/cli.log")
KB=$("$BUILD/gavel" key create --tenant "${TAG}_b" 2>>"$TMP/cli.log")
[ -n "$KA" ] && [ -n "$KB" ] || bail "key create: $(cat "$TMP/cli.log")"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	GAVEL_EXECUTOR_TESTDATA_CACHE_DIR="$WORK_ROOT/testdata" GAVEL_EXECUTOR_IMPORT_POLL_INTERVAL=200ms \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=120s GAVEL_FRONTEND_MAX_PROBLEM_SIZE=2m \
	GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

req() { # METHOD PATH [curl args...]: sets last_code, last_body
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 150 -X "$m" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
}
pj() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
eq() { [ "$1" = "$2" ] || { say "got '$1', want '$2'"; return 1; }; }
A=(-H "X-Auth-Token: $KA")
BK=(-H "X-Auth-Token: $KB")
J=(-H 'Content-Type: application/json')

stack_wait_healthy 60 "$PID_EXEC"
ok "stack up"

# --- a. push the fixtures ---------------------------------------------------
declare -A PID_OF
push() { # problem-dir [push options] -> PID_OF[name]
	local name out dir=$1
	shift
	name=$(basename "$dir")
	out=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait "$@" "$dir" 2>&1)
	local rc=$?
	PUSH_OUT=$out
	PID_OF[$name]=$(printf '%s' "$out" | tail -n 1 | awk '{print $1}')
	[ $rc -eq 0 ] && [[ $out == *" ready"* ]] || { say "push $dir: rc $rc: $out"; return 1; }
}
t0=$(date +%s)
for p in $(cd tests/problems && ls -d */ | tr -d /); do
	[ "$p" = palindrome ] && continue
	check "gavel problem push tests/problems/$p: imported in a sandbox, ready" push "tests/problems/$p" --default-time
done
say "all fixture imports in $(($(date +%s) - t0)) s"
# palindrome has no time limit: push judges submissions/accepted/ here first.
check "gavel problem push tests/problems/palindrome: a time limit from submissions/accepted/, ready" \
	push tests/problems/palindrome
check "push states the limit and problemtools' rule (legacy: x5, whole seconds, at least 1 s)" \
	bash -c '[[ $1 == *"alternate.c: AC, slowest test"* && $1 == *"time limit 1 s: slowest accepted"*"x time_multiplier 5"* ]]' _ "$PUSH_OUT"
req GET "/v1/problems/${PID_OF[palindrome]}" "${A[@]}"
check "the computed limit is the stored one" eq "$(pj 'd["versions"][-1]["limits"]["time_ms"]')" 1000
TL=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait --time 2.5 tests/problems/scoring 2>&1 | tail -n 1 | awk '{print $1}')
req GET "/v1/problems/$TL" "${A[@]}"
check "push --time sets the limit of a package without one" eq "$(pj 'd["versions"][-1]["limits"]["time_ms"]')" 2500
out=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait --time 3 tests/problems/sum 2>&1)
check "push --time is refused for a package with a limit of its own" \
	bash -c '[ "$1" -eq 2 ] && [[ $2 == *"has a time limit of its own"* ]]' _ "$?" "$out"

# --- b. labelled submissions judged by the service ----------------------------
declare -A want=([accepted]=AC [wrong_answer]=WA [time_limit_exceeded]=TLE [run_time_error]=RE
	[compile_error]=CE [memory_limit_exceeded]=MLE [output_limit_exceeded]=OLE [presentation_error]=PE)
lang_of() {
	case "$1" in
	*.py) echo python3 ;; *.cpp | *.cc) echo cpp ;; *.c) echo c ;; *.java) echo java ;;
	*.js) echo javascript ;; *.rs) echo rust ;; *.go) echo go ;; *.pas) echo pascal ;;
	esac
}
body_for() { # file problem-id [extra json]
	python3 -c 'import json,sys; d={"language":sys.argv[2],"source":open(sys.argv[1]).read(),"problem_id":sys.argv[3]}
d.update(json.loads(sys.argv[4])); print(json.dumps(d))' "$1" "$(lang_of "$1")" "$2" "${3:-{\}}"
}
# One labelled submission per problem and verdict folder, judged by the
# service as test_judge_fixtures.sh judges every one with `gavel judge`:
# every problem and every verdict class goes through the service (all 90
# took over 15 minutes on 2 cores), plus the two the checks below read.
SUBS=()
declare -A SEEN
for s in tests/problems/*/submissions/*/*; do
	[ -f "$s" ] || continue
	s=${s#tests/problems/}
	case "$s" in
	scoring/submissions/wrong_answer/int32_scores_40.c | hello/submissions/wrong_answer/no_comma.py) ;;
	*) [ -n "${SEEN[${s%/*}]:-}" ] && continue ;;
	esac
	SEEN[${s%/*}]=1
	SUBS+=("$s")
done
declare -A SID_OF
for s in "${SUBS[@]}"; do
	prob=${s%%/*}
	req POST /v1/submissions "${A[@]}" "${J[@]}" -d "$(body_for "tests/problems/$s" "${PID_OF[$prob]}")"
	SID_OF[$s]=$(pj 'd["id"]')
	[ "$last_code" = 201 ] || say "submit $s: $last_code $last_body"
done
wait_done() { # sid -> last_body of the finished submission
	for _ in $(seq 600); do
		req GET "/v1/submissions/$1" "${A[@]}"
		[ "$(pj 'd["status"]')" = done ] && return 0
		sleep 0.2
	done
	return 1
}
for s in "${SUBS[@]}"; do
	label=$(basename "$(dirname "$s")")
	exp=${want[$label]}
	wait_done "${SID_OF[$s]}"
	got=$(pj 'd["verdict"]')
	score_ok=1
	if [[ $s =~ _scores_([0-9]+)\. ]]; then
		[ "$(pj "abs(d['result']['score'] - ${BASH_REMATCH[1]}) < 1e-9")" = True ] || score_ok=0
	fi
	if [ "$got" = "$exp" ] && [ $score_ok = 1 ]; then
		ok "service verdict of $s is $exp (as gavel judge)$([ $score_ok = 1 ] && [[ $s =~ _scores_ ]] && echo ", score ok")"
	else
		notok "service verdict of $s is $exp" "got $got: ${last_body:0:600}"
	fi
done
req GET "/v1/submissions/${SID_OF[scoring/submissions/wrong_answer/int32_scores_40.c]}" "${A[@]}"
check "scoring: per-group results (group1 AC 40, group2 WA 0)" eq "$(pj '[(g["name"], g["verdict"], g["score"]) for g in d["result"]["groups"] if g["name"].startswith("secret/")]')" \
	"[('secret/group1', 'AC', 40.0), ('secret/group2', 'WA', 0.0)]"
check "scoring: per-test results name their group and problem version" eq \
	"$(pj '(len(d["result"]["tests"]), d["result"]["tests"][1]["group"], d["result"]["problem"]["version"])')" "(5, 'secret/group1', 1)"

# --- j. output-only: the submission is its files, one per test ----------------
outputs_body() { # folder problem-id: the folder's files under their names; the language is not used
	python3 -c 'import json,os,sys
files=[{"name":n,"content":open(os.path.join(sys.argv[1],n)).read()} for n in sorted(os.listdir(sys.argv[1]))]
print(json.dumps({"language":"c","files":files,"problem_id":sys.argv[2]}))' "$1" "$2"
}
for f in tests/problems/outputonly/submissions/*/*/; do
	f=${f%/}
	label=$(basename "$(dirname "$f")")
	req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(outputs_body "$f" "${PID_OF[outputonly]}")"
	check "service verdict of output-only ${f#tests/problems/} is ${want[$label]} (as gavel judge)" \
		eq "$(pj 'd["verdict"]')" "${want[$label]}"
done
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(outputs_body tests/problems/outputonly/submissions/wrong_answer/one_missing "${PID_OF[outputonly]}")"
check "output-only: a missing file is WA for its own test (secret/2), the ones before it AC" \
	eq "$(pj '[t["verdict"] for t in d["result"]["tests"]]')" "['AC', 'AC', 'WA', 'SKIPPED']"

# --- c. run_all, samples_only -------------------------------------------------
NO_COMMA=tests/problems/hello/submissions/wrong_answer/no_comma.py
req GET "/v1/submissions/${SID_OF[hello/submissions/wrong_answer/no_comma.py]}" "${A[@]}"
check "pass-fail stops at the first failure: the secret test is SKIPPED" eq "$(pj '[t["verdict"] for t in d["result"]["tests"]]')" "['WA', 'SKIPPED']"
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(body_for $NO_COMMA "${PID_OF[hello]}" '{"run_all": true}')"
check "run_all: every test runs" eq "$(pj '[t["verdict"] for t in d["result"]["tests"]]')" "['WA', 'WA']"
RUN_ALL_SID=$(pj 'd["id"]')
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(body_for tests/problems/sum/submissions/accepted/sum.py "${PID_OF[sum]}" '{"samples_only": true}')"
check "samples_only: only data/sample runs" eq "$(pj '(d["verdict"], [t["sample"] for t in d["result"]["tests"]])')" "('AC', [True, True])"

# --- h. cache: the second submission to sum found its files cached ------------
check "second submission to a problem is served from the test-data cache" \
	grep -qE "problem ${PID_OF[sum]} v1: [0-9]+ files, [1-9][0-9]* from the test-data cache, 0 fetched" "$TMP/executor.log"

# --- f. feedback policy -----------------------------------------------------
req GET "/v1/submissions/$RUN_ALL_SID" "${A[@]}"
check "default policy: sample shows input, expected, own output and diff" eq \
	"$(pj '(sorted(d["result"]["tests"][0]["feedback"].keys()), d["result"]["tests"][0]["feedback"]["diff"]["line"])')" \
	"(['diff', 'expected', 'input', 'output'], 1)"
check "default policy: secret data shows nothing, not even the checker message" eq \
	"$(pj '("feedback" in d["result"]["tests"][1], d["result"]["tests"][1]["message"])')" "(False, '')"
req PUT "/v1/problems/${PID_OF[hello]}" "${A[@]}" "${J[@]}" -d '{"feedback": {"sample": [], "secret": ["output", "diff"]}}'
check "PUT of the feedback policy (200)" eq "$last_code $(pj 'd["feedback"]')" "200 {'sample': [], 'secret': ['output', 'diff']}"
req GET "/v1/submissions/$RUN_ALL_SID" "${A[@]}"
check "policy enforced at GET: secret output and diff shown, input and expected not, samples hidden" eq \
	"$(pj '(sorted(d["result"]["tests"][1]["feedback"].keys()), "feedback" in d["result"]["tests"][0])')" "(['diff', 'output'], False)"

# A secret test's exit code carries its input's first byte if shown: the
# samples pass, every other test exits with ord(input[0]). The default
# policy hides it per test and in the result's own figures (the secret test
# decided the verdict), through every shape: the wait answer, GET, Judge0.
cat >"$TMP/exitleak.py" <<'PY'
import sys
d = sys.stdin.read()
if d.split() in (["1", "2"], ["-5", "5"]):
    print(sum(map(int, d.split())))
else:
    sys.exit(ord(d[0]) if d else 1)
PY
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(body_for "$TMP/exitleak.py" "${PID_OF[sum]}")"
LEAK_SID=$(pj 'd["id"]')
leak_shown() { pj '[(t["sample"], t["verdict"], t["exit_code"], t["signal"]) for t in d["result"]["tests"] if t["verdict"] != "SKIPPED"] + [d["result"]["exit_code"], d["result"]["signal"], d["result"]["message"]]'; }
want_leak="[(True, 'AC', 0, 0), (True, 'AC', 0, 0), (False, 'RE', None, None), None, None, '']"
check "secret exit code hidden in the wait answer (per test and the result's own)" eq "$(leak_shown)" "$want_leak"
req GET "/v1/submissions/$LEAK_SID" "${A[@]}"
check "secret exit code hidden at GET" eq "$(leak_shown)" "$want_leak"
req GET "/submissions/$LEAK_SID?base64_encoded=false&fields=exit_code,exit_signal,status" "${A[@]}"
check "secret exit code hidden in the Judge0 shape" eq "$(pj '(d["exit_code"], d["exit_signal"], d["status"]["description"])')" \
	"(None, None, 'Runtime Error (NZEC)')"

# --- d. versions --------------------------------------------------------------
cp -r tests/problems/hello "$TMP/hello2"
rm -rf "$TMP/hello2/submissions"
printf 'name: Hello again\ntype: pass-fail\n' >"$TMP/hello2/problem.yaml"
out=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait --problem "${PID_OF[hello]}" "$TMP/hello2" 2>&1)
check "PUT of a new package makes version 2" eq "$out" "${PID_OF[hello]} version 2 ready"
req GET "/v1/problems/${PID_OF[hello]}" "${A[@]}"
check "GET shows both versions, current 2, the new name" eq "$(pj '(d["current_version"], [v["version"] for v in d["versions"]], d["name"])')" "(2, [1, 2], 'Hello again')"
req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(body_for tests/problems/hello/submissions/accepted/hello.py "${PID_OF[hello]}" '{"version": 1}')"
check "a submission names its version (1 asked, 1 judged)" eq "$(pj '(d["verdict"], d["result"]["problem"]["version"])')" "('AC', 1)"
check "the version is recorded in the submission row" eq \
	"$(sql -c "SELECT problem_version FROM submissions WHERE id = '$(pj 'd["id"]')'")" "1"

# --- e. tenant isolation ------------------------------------------------------
req GET "/v1/problems/${PID_OF[hello]}" "${BK[@]}"
check "tenant B: GET of A's problem is 404" eq "$last_code" 404
req POST /v1/submissions "${BK[@]}" "${J[@]}" -d "$(body_for tests/problems/hello/submissions/accepted/hello.py "${PID_OF[hello]}")"
check "tenant B: submitting to A's problem is 404" eq "$last_code" 404
req PUT "/v1/problems/${PID_OF[hello]}" "${BK[@]}" "${J[@]}" -d '{"feedback": {"secret": ["input"]}}'
check "tenant B: changing A's policy is 404" eq "$last_code" 404
req GET /v1/problems "${BK[@]}"
check "tenant B lists none of A's problems" eq "$last_code $(pj 'd["total"]')" "200 0"
req GET "/v1/submissions/$RUN_ALL_SID" "${BK[@]}"
check "tenant B: A's problem submission is 404" eq "$last_code" 404

# --- g. a rejected package ----------------------------------------------------
mkdir -p "$TMP/bad/data/sample"
printf 'name: Bad\nlimits:\n  time_limit: soon\n' >"$TMP/bad/problem.yaml"
printf '1\n' >"$TMP/bad/data/sample/1.in"
printf '1\n' >"$TMP/bad/data/sample/1.ans"
out=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait "$TMP/bad" 2>&1)
rc=$?
check "a malformed problem.yaml is rejected at upload, the message names the field" \
	bash -c '[ "$1" -eq 1 ] && [[ $2 == *rejected*time_limit* ]]' _ "$rc" "$out"
# push says first why it set no time limit (the package does not load
# here); the server's answer is its last line.
BAD=$(printf '%s\n' "$out" | tail -n 1 | awk '{print $1}')
req GET "/v1/problems/$BAD" "${A[@]}"
check "GET of the rejected problem shows the status and the message" bash -c '[[ $1 == rejected*time_limit* ]]' _ \
	"$(pj 'd["status"] + " " + d["message"]')"
req POST /v1/submissions "${A[@]}" "${J[@]}" -d "$(body_for tests/problems/hello/submissions/accepted/hello.py "$BAD")"
check "a submission to a problem without a ready version is 409" eq "$last_code" 409

# --- i. upload limits, DELETE -------------------------------------------------
head -c 3000000 /dev/urandom >"$TMP/big.bin"
req POST /v1/problems "${A[@]}" -H 'Content-Type: application/gzip' --data-binary @"$TMP/big.bin"
check "an upload over max_problem_size is 413" eq "$last_code" 413
req POST /v1/problems "${A[@]}" -H 'Content-Type: text/plain' --data-binary 'hello'
check "an upload that is not zip or gzip is 415" eq "$last_code" 415
req DELETE "/v1/problems/${PID_OF[hello]}" "${A[@]}"
check "DELETE hides the problem" eq "$last_code" 200
req GET "/v1/problems/${PID_OF[hello]}" "${A[@]}"
check "a deleted problem is 404" eq "$last_code" 404
req GET "/v1/submissions/$RUN_ALL_SID" "${A[@]}"
check "its submissions keep their history" eq "$last_code $(pj 'd["verdict"]')" "200 WA"
kill -0 "$PID_EXEC" 2>/dev/null
check "the executor is still running" [ $? -eq 0 ]

[ $fails -eq 0 ] || { say "executor log tail:"; tail -n 30 "$TMP/executor.log" | sed 's/^/# /'; }
[ $fails -eq 0 ]
