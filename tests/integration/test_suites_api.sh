#!/usr/bin/env bash
# Instructor test suites (executor/suite/) on the real stack: gavel-frontend,
# gavel-scheduler and one gavel-executor (real runsc) over the harness's
# PostgreSQL and Redis, driven over HTTP:
#
#   a. the four suite packages (tests/problems/suite_*: pytest, JUnit 5,
#      GoogleTest, a C harness) pushed with `gavel problem push`, ready;
#   b. labelled student folders sent through the native API ("files",
#      "student", "assignment"): each gets its label's verdict and the
#      score its name says, as `gavel judge` gives them
#      (test_judge_fixtures.sh); per-test points and groups in the result;
#   c. hidden tests under the default feedback policy: their verdicts and
#      points are shown, never their messages or output; a visible test's
#      message and output are; no result ever holds a hidden test file's
#      marker (GAVEL-HIDDEN-), though one submission prints every file it
#      can read and another prints forged pass lines;
#   d. the same submissions through the Judge0 API: the student's files
#      zipped in additional_files, Gavel's problem_id extension;
#   e. a course: 30 students submit the C assignment (s01-s05 twice); the
#      grades CSV, latest and best, is the fixture's expected CSV
#      (tests/problems/suite_c/grades_hw_c_latest.csv and _best.csv).
#
# Needs root (runsc, cgroups). Prints TAP. Everything it starts is stopped
# on exit (tests/lib/stack.sh).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..48"
. tests/lib/tap.sh
check_detail() { echo "last: ${last_code:-} ${last_body:0:800}"; }
say() { printf '# %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-init gavel-frontend gavel-suite gavel_check.h; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid; do
	command -v "$c" >/dev/null || bail "$c missing"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup suites "${GAVEL_SUITES_KEEP_LOGS:-}"
"$BUILD/gavel" tenant create "${TAG}_a" >"$TMP/ta" 2>"$TMP/cli.log" || bail "tenant create: $(cat "$TMP/cli.log")"
KA=$("$BUILD/gavel" key create --tenant "${TAG}_a" 2>>"$TMP/cli.log")
[ -n "$KA" ] || bail "key create: $(cat "$TMP/cli.log")"
# A class submits at once.
"$BUILD/gavel" tenant update "${TAG}_a" --quota requests_per_second=1000 --quota burst=1000 >>"$TMP/cli.log" 2>&1 ||
	bail "tenant update: $(tail -n 3 "$TMP/cli.log")"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	GAVEL_EXECUTOR_TESTDATA_CACHE_DIR="$WORK_ROOT/testdata" GAVEL_EXECUTOR_IMPORT_POLL_INTERVAL=200ms \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=150s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend

req() { # METHOD PATH [curl args...]: sets last_code, last_body
	local m=$1 p=$2
	shift 2
	last_body=$(curl -s -m 170 -X "$m" -o - -w '\n%{http_code}' "$@" "$B$p")
	last_code=${last_body##*$'\n'}
	last_body=${last_body%$'\n'*}
}
pj() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$last_body" 2>/dev/null; }
eq() { [ "$1" = "$2" ] || { say "got '$1', want '$2'"; return 1; }; }
A=(-H "X-Auth-Token: $KA")
J=(-H 'Content-Type: application/json')

stack_wait_healthy 60 "$PID_EXEC"
ok "stack up"

# --- a. push -------------------------------------------------------------------
declare -A PID_OF
for p in suite_pytest suite_junit5 suite_gtest suite_c; do
	out=$(GAVEL_URL=$B GAVEL_API_KEY=$KA "$BUILD/gavel" problem push --wait "tests/problems/$p" 2>&1)
	PID_OF[$p]=$(printf '%s' "$out" | tail -n 1 | awk '{print $1}')
	check "gavel problem push tests/problems/$p: imported in a sandbox, ready" \
		bash -c '[[ $1 == *" ready"* ]]' _ "$out"
done

# --- b, c. native API -----------------------------------------------------------
declare -A want=([accepted]=AC [wrong_answer]=WA [time_limit_exceeded]=TLE [run_time_error]=RE
	[compile_error]=CE)
lang_of() { case "$1" in suite_pytest) echo python3 ;; suite_junit5) echo java ;; suite_gtest) echo cpp ;; *) echo c ;; esac; }
native_body() { # folder problem-id language student assignment
	python3 - "$@" <<'EOF'
import json, os, sys
d, pid, lang, student, assignment = sys.argv[1:6]
files = [{"name": n, "content": open(os.path.join(d, n)).read()} for n in sorted(os.listdir(d))]
print(json.dumps({"language": lang, "files": files, "problem_id": pid, "student": student,
                  "assignment": assignment}))
EOF
}
wait_done() { # sid -> last_body of the finished submission
	for _ in $(seq 900); do
		req GET "/v1/submissions/$1" "${A[@]}"
		[ "$(pj 'd["status"]')" = done ] && return 0
		sleep 0.2
	done
	return 1
}
# tests/lib/suite_service_subs.sh's list; the C ones come with the course
# in e.
. tests/lib/suite_service_subs.sh
SUBS=("${SUITE_SERVICE_SUBS[@]}")
declare -A SID_OF
for s in "${SUBS[@]}"; do
	pkg=$(cut -d/ -f3 <<<"$s")
	req POST /v1/submissions "${A[@]}" "${J[@]}" \
		-d "$(native_body "$s" "${PID_OF[$pkg]}" "$(lang_of "$pkg")" "$(basename "$s")" "fixtures-$pkg")"
	SID_OF[$s]=$(pj 'd["id"]')
	[ "$last_code" = 201 ] || say "submit $s: $last_code $last_body"
done
LEAKS=""
for s in "${SUBS[@]}"; do
	label=$(basename "$(dirname "$s")")
	n=${s##*_scores_}
	wait_done "${SID_OF[$s]}"
	pkg=$(cut -d/ -f1-3 <<<"$s")
	python3 tests/lib/hidden_leak.py "$pkg" <<<"$last_body" >/dev/null || LEAKS+="$s "
	check "native: $s is ${want[$label]}, score $n" eq "$(pj 'd["verdict"], d["result"]["score"]')" "${want[$label]} $n.0"
done
check "no result of any submission holds a hidden test file's marker or 4 of its bytes as a number" eq "$LEAKS" ""
req GET "/v1/submissions/${SID_OF[tests/problems/suite_pytest/submissions/wrong_answer/leak_hidden_report_scores_10]}" "${A[@]}"
check "a report rewritten to carry the hidden file: its hidden tests show a verdict, points and a coarse time only" \
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["result"]["tests"][6:]
sys.exit(0 if [(x["verdict"], x["score"], x["message"], "feedback" in x, x["time_ms"] % 100) for x in t] ==
	[("AC", 2.0, "", False, 0), ("WA", 0.0, "", False, 0)] else 1)' "$last_body"

P=tests/problems/suite_pytest/submissions
req GET "/v1/submissions/${SID_OF[$P/wrong_answer/some_pass_scores_9]}" "${A[@]}"
check "per test: name, group, points, score; hidden tests are not samples" eq \
	"$(pj '[(t["name"], t["group"], t["points"], t["score"], t["sample"]) for t in d["result"]["tests"]][3:8]')" \
	"[('test_mul[7-0-0]', 'test_calc.py', 1.0, 1.0, True), ('test_factorial', 'test_calc.py', 2.0, 2.0, True), ('TestCounter::test_counts', 'test_calc.py', 2.0, 2.0, True), ('test_big_factorial', 'test_hidden.py', 2.0, 2.0, False), ('test_is_prime', 'test_hidden.py', 2.0, 0.0, False)]"
check "groups with their scores, max_score, the suite's framework" eq \
	"$(pj '[(g["name"], g["verdict"], g["score"], g["max_score"]) for g in d["result"]["groups"]], d["result"]["max_score"], d["result"]["problem"]["suite"]')" \
	"[('test_calc.py', 'WA', 7.0, 8.0), ('test_hidden.py', 'WA', 2.0, 4.0)] 12.0 pytest"
check "a failed visible test shows the framework's message and its output" \
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["result"]["tests"][1]
sys.exit(0 if t["verdict"] == "WA" and "assert" in t["message"] and "AssertionError" in t["feedback"]["output"] else 1)' "$last_body"
check "a failed hidden test shows its verdict and points only (default policy)" \
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["result"]["tests"][7]
sys.exit(0 if t["verdict"] == "WA" and t["message"] == "" and "feedback" not in t and t["points"] == 2 else 1)' "$last_body"
req GET "/v1/submissions/${SID_OF[$P/accepted/read_hidden_scores_12]}" "${A[@]}"
check "a submission printing every file it can read: its visible outputs show the visible test file, no hidden one" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); out=" ".join(t.get("feedback",{}).get("output","") for t in d["result"]["tests"])
sys.exit(0 if "test_calc.py" in out and "GAVEL-HIDDEN" not in out and "test_hidden" not in out else 1)' "$last_body"
req GET "/v1/submissions/${SID_OF[$P/wrong_answer/forged_summary_scores_1]}" "${A[@]}"
check "forged pass lines and os._exit(0): the tests fail, the exit without a report says so" \
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["result"]["tests"]
sys.exit(0 if t[0]["verdict"] == "AC" and t[4]["verdict"] == "RE" and "without a report" in t[4]["message"] else 1)' "$last_body"
req GET "/v1/submissions/${SID_OF[$P/run_time_error/import_fails_at_once_scores_0]}" "${A[@]}"
check "a module that fails to import: every visible test fails at once with the import error, the hidden ones with RE" \
	python3 -c 'import json,sys; t=json.loads(sys.argv[1])["result"]["tests"]
sys.exit(0 if all(x["verdict"] == "RE" for x in t) and all("none ran: ModuleNotFoundError" in x["message"] for x in t[:6]) else 1)' "$last_body"
req GET "/v1/submissions/${SID_OF[$P/compile_error/syntax_error_scores_0]}" "${A[@]}"
check "a student's file that does not build: CE with the interpreter's message" \
	eq "$(pj 'd["verdict"], "SyntaxError" in d["result"]["compile_output"]')" "CE True"

req POST "/v1/submissions?wait=true" "${A[@]}" "${J[@]}" -d "$(python3 - "${PID_OF[suite_c]}" <<'EOF'
import json, sys
calc = open("tests/problems/suite_c/submissions/accepted/all_pass_scores_6/calc.c").read()
print(json.dumps({"language": "c", "problem_id": sys.argv[1], "files": [
    {"name": "calc.c", "content": calc}, {"name": "calc.h", "content": "int add(int a, int b); /* mine */\n"}]}))
EOF
)"
check "a student's file named like a support file: the instructor's is used, and the compile output says so" \
	eq "$(pj 'd["verdict"], d["result"]["score"], "calc.h replaced" in d["result"]["compile_output"]')" "AC 6.0 True"

# --- d. Judge0 with additional_files --------------------------------------------
j0_body() { # folder problem-id language_id student
	python3 - "$@" <<'EOF'
import base64, io, json, os, sys, zipfile
d, pid, lid, student = sys.argv[1:5]
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    for n in sorted(os.listdir(d)):
        z.write(os.path.join(d, n), n)
# stdin "" as Judge0's clients send it: no input, accepted with problem_id.
print(json.dumps({"language_id": int(lid), "source_code": "# the files are in additional_files\n", "stdin": "",
                  "additional_files": base64.b64encode(buf.getvalue()).decode(), "problem_id": pid,
                  "student": student, "assignment": "judge0"}))
EOF
}
J0=("$P/accepted/all_pass_scores_12" "$P/accepted/read_hidden_scores_12" "$P/wrong_answer/some_pass_scores_9"
	"$P/wrong_answer/leak_hidden_report_scores_10"
	"$P/time_limit_exceeded/loop_in_one_scores_10")
declare -A J0_STATUS=([accepted]="3 Accepted" [wrong_answer]="4 Wrong Answer" [time_limit_exceeded]="5 Time Limit Exceeded")
for s in "${J0[@]}"; do
	req POST "/submissions?base64_encoded=false&wait=true" "${A[@]}" "${J[@]}" -d "$(j0_body "$s" "${PID_OF[suite_pytest]}" 71 "j0-$(basename "$s")")"
	label=$(basename "$(dirname "$s")")
	token=$(pj 'd["token"]')
	check "judge0 + additional_files: $s -> ${J0_STATUS[$label]}" \
		eq "$last_code $(pj 'd["status"]["id"], d["status"]["description"]' | tr -d "(),'")" "201 ${J0_STATUS[$label]}"
	wait_done "$token"
	j0body=$last_body
	req GET "/submissions/$token?base64_encoded=false&fields=*" "${A[@]}"
	check "judge0 + additional_files: $s scores ${s##*_scores_}, no hidden bytes (native and Judge0 shapes)" \
		eq "$(last_body=$j0body pj 'd["result"]["score"]') $(python3 tests/lib/hidden_leak.py tests/problems/suite_pytest <<<"$j0body" >/dev/null || echo leak) $(python3 tests/lib/hidden_leak.py tests/problems/suite_pytest <<<"$last_body" >/dev/null || echo leak)" "${s##*_scores_}.0  "
done
req POST "/submissions?base64_encoded=false&wait=false" "${A[@]}" "${J[@]}" \
	-d '{"language_id": 71, "source_code": "x", "stdin": "1", "problem_id": "'"${PID_OF[suite_pytest]}"'"}'
check "judge0 with problem_id and stdin -> 400 naming stdin" eq "$last_code $(pj '"stdin" in d["error"]')" "400 True"
req POST "/submissions?base64_encoded=false&wait=false" "${A[@]}" "${J[@]}" \
	-d '{"language_id": 71, "source_code": "x", "expected_output": "1", "problem_id": "'"${PID_OF[suite_pytest]}"'"}'
check "judge0 with problem_id and expected_output -> 422" eq "$last_code" 422

# --- e. a course of 30 students ---------------------------------------------------
C=tests/problems/suite_c/submissions
mapfile -t CSUBS < <(ls -d $C/*/* | sort)
GRADE_IDS=()
POSTS=""
for i in $(seq -w 1 30); do
	s=${CSUBS[$(((10#$i - 1) % ${#CSUBS[@]}))]}
	req POST /v1/submissions "${A[@]}" "${J[@]}" -d "$(native_body "$s" "${PID_OF[suite_c]}" c "s$i" hw_c)"
	POSTS+="$last_code "
	GRADE_IDS+=("$(pj 'd["id"]')|$s")
done
# s01-s05 submit again: a folder two places further on.
for i in 1 2 3 4 5; do
	s=${CSUBS[$(((i + 1) % ${#CSUBS[@]}))]}
	req POST /v1/submissions "${A[@]}" "${J[@]}" -d "$(native_body "$s" "${PID_OF[suite_c]}" c "s0$i" hw_c)"
	POSTS+="$last_code "
	GRADE_IDS+=("$(pj 'd["id"]')|$s")
done
check "35 submissions of the course accepted (201)" eq "$POSTS" "$(printf '201 %.0s' $(seq 35))"
bad=""
for e in "${GRADE_IDS[@]}"; do
	id=${e%%|*}
	s=${e#*|}
	label=$(basename "$(dirname "$s")")
	wait_done "$id"
	[ "$(pj 'd["verdict"], d["result"]["score"]')" = "${want[$label]} ${s##*_scores_}.0" ] || bad+="$s "
	[[ $last_body == *GAVEL-HIDDEN-* ]] && bad+="leak:$s "
done
check "every C submission of the course got its label's verdict and score" eq "$bad" ""
csv3() { tr -d '\r' <<<"$last_body" | cut -d, -f1-3; }
req GET "/v1/assignments/hw_c/grades?format=csv" "${A[@]}"
check "grades CSV of hw_c (latest per student): 30 students as tests/problems/suite_c/grades_hw_c_latest.csv" \
	eq "$last_code $(csv3)" "200 $(cat tests/problems/suite_c/grades_hw_c_latest.csv)"
req GET "/v1/assignments/hw_c/grades?format=csv&rule=best" "${A[@]}"
check "grades CSV of hw_c (best per student) as tests/problems/suite_c/grades_hw_c_best.csv" \
	eq "$last_code $(csv3)" "200 $(cat tests/problems/suite_c/grades_hw_c_best.csv)"
labels=$(sql -c "SELECT count(*) FROM audit_log WHERE action = 'submission.created' AND details->>'assignment' = 'hw_c'")
check "the audit records each of the 35 (submission.created with the labels)" eq "$labels" 35
check_alive() { kill -0 "$PID_EXEC" 2>/dev/null; }
check "the executor is still up" check_alive
