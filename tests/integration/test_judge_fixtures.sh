#!/usr/bin/env bash
# Judges every labelled submission of every fixture problem under
# tests/problems/ with the real `gavel judge` (real runsc sandbox) and checks
# that each gets the verdict its folder names:
#   submissions/<label>/<file>  with label accepted → AC, wrong_answer → WA,
#   time_limit_exceeded → TLE, memory_limit_exceeded → MLE,
#   run_time_error → RE, output_limit_exceeded → OLE, compile_error → CE,
#   presentation_error → PE (testlib checkers).
# A folder there is a program of several files (`gavel judge PROBLEM
# FOLDER`: its main file is the one named as a language's source).
# A file named *_scores_N.* (a folder *_scores_N) must also get score N.
# Instructor test suites (suite/suite.yaml): no test of a visible group
# may show a hidden test file's marker (GAVEL-HIDDEN-) in its output or
# message: a hidden file is in the sandbox only while its own group runs.
# And nothing in the whole result may carry a hidden file's bytes
# (tests/lib/hidden_leak.py: its marker in any text, 4 of its bytes as any
# number), though a submission rewrites its hidden group's report to put
# them in every field (suite_pytest's leak_hidden_report). A name with
# _at_once: every test of each group fails with one message, that the
# tests could not be collected or built (tests that never ran alone).
# Speaks TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GAVEL=$BUILD/gavel
FILTER=${1:-}

declare -A want=(
	[accepted]=AC [wrong_answer]=WA [time_limit_exceeded]=TLE [memory_limit_exceeded]=MLE
	[run_time_error]=RE [output_limit_exceeded]=OLE [compile_error]=CE
	[presentation_error]=PE
)

# In make test, the suite submissions test_suites_api judges through the
# service are left to it (tests/lib/suite_service_subs.sh).
declare -A service_judged=()
if [ "${GAVEL_FIXTURES_SKIP_SUITE_SERVICE:-0}" = 1 ]; then
	. tests/lib/suite_service_subs.sh
	for sub in "${SUITE_SERVICE_SUBS[@]}"; do service_judged[$sub]=1; done
fi
cases=()
for sub in tests/problems/*/submissions/*/*; do
	[ -f "$sub" ] || [ -d "$sub" ] || continue
	case "$sub" in *"$FILTER"*) ;; *) continue ;; esac
	cases+=("$sub")
done
echo "1..${#cases[@]}"
n=0
for sub in "${cases[@]}"; do
	n=$((n + 1))
	if [ -n "${service_judged[$sub]:-}" ]; then
		echo "ok $n - $sub # SKIP judged through the service by test_suites_api"
		continue
	fi
	problem=${sub%%/submissions/*}
	label=$(basename "$(dirname "$sub")")
	expected=${want[$label]:-}
	if [ -z "$expected" ]; then
		echo "not ok $n - $sub: unknown label '$label'"
		continue
	fi
	if [ ! -x "$GAVEL" ]; then
		echo "not ok $n - $sub: $GAVEL missing"
		continue
	fi
	start=$(date +%s%N)
	out=$(timeout 300 "$GAVEL" judge --json "$problem" "$sub" 2>/tmp/gavel-judge-fixture.err)
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	got=$(printf '%s' "$out" | python3 -c 'import json,sys
try:
    d=json.load(sys.stdin)
    leak=[t["name"] for t in d["tests"] if not t.get("hidden") and
          "GAVEL-HIDDEN-" in (t.get("output","") + t.get("message",""))]
    print("LEAK:" + ",".join(leak) if leak else d["verdict"], d["score"])
except Exception as e:
    print("unparsable", 0)')
	verdict=${got% *}
	score=${got#* }
	ok=1
	[ "$verdict" = "$expected" ] || ok=0
	# *_at_once: the group's tests could not be collected or built; each
	# visible test fails with the group's one message saying so (one run
	# of the framework, not one per test), each hidden one with RE.
	if [[ $sub == *_at_once* ]] && ! printf '%s' "$out" | python3 -c 'import json,sys
t=json.load(sys.stdin)["tests"]
vis={}
for x in t:
    if x["hidden"]:
        assert x["verdict"] == "RE", x
    else:
        vis.setdefault(x["name"].split("::")[0], set()).add((x["verdict"], x.get("message", "")))
for g, m in vis.items():
    assert len(m) == 1, (g, m)
    v, msg = m.pop()
    assert v == "RE" and ("could not be collected, none ran" in msg or "do not build" in msg), (g, msg)' 2>/dev/null; then
		ok=0
		verdict="$verdict(not failed at once)"
	fi
	if [ -f "$problem/suite/suite.yaml" ] && ! leaks=$(printf '%s' "$out" | python3 tests/lib/hidden_leak.py "$problem"); then
		ok=0
		verdict="LEAK($(tr '\n' ';' <<<"$leaks" | head -c 300))"
	fi
	if [[ $sub =~ _scores_([0-9]+)(\.|$) ]]; then
		python3 -c "import sys; sys.exit(0 if abs(float('$score') - ${BASH_REMATCH[1]}) < 1e-9 else 1)" || ok=0
	fi
	if [ $ok = 1 ]; then
		echo "ok $n - $sub: $verdict score $score (${ms} ms)"
	else
		echo "not ok $n - $sub: expected $expected, got $verdict score $score (exit $rc, ${ms} ms)"
		printf '%s\n' "$out" | head -c 2000 | sed 's/^/# /'
		head -c 2000 /tmp/gavel-judge-fixture.err | sed 's/^/# /'
	fi
done
