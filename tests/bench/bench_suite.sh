#!/usr/bin/env bash
# Instructor test suites: how long grading a 20-test pytest suite against a
# passing submission takes in Gavel (`gavel judge`: a fresh gVisor sandbox,
# the student's build, the group's tests in one pytest process, the
# summary), against the same suite bare on this host, measured in the same
# run:
#
#   bare, one process   python3 -m pytest over the file (what a student
#                       runs at home: the floor)
#   bare, per test      one python3 -m pytest FILE::NAME per test (what a
#                       process per test costs without a sandbox)
#   gavel               gavel judge PACKAGE FOLDER, wall clock
#   gavel, one exits    the same with a submission whose last test exits
#                       before pytest reports: the group's run ends without
#                       a report, so every test runs again in a process of
#                       its own (gavel-suite's fallback, the worst case)
#
# It prints each median over BENCH_SUITE_RUNS runs (default 5), the ratios,
# Gavel's fixed cost (a 1-test suite) and the cost per test beyond it on
# each path. Figures only; not part of `make test`.
#
#   tests/bench/bench_suite.sh      (as root; BUILD=build by default)
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUNS=${BENCH_SUITE_RUNS:-5}
N=20
bail() { echo "bench_suite: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-init gavel-suite; do [ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"; done
/usr/bin/python3 -c 'import pytest' 2>/dev/null || bail "python3-pytest is not installed"

W=$(mktemp -d /tmp/gavel-bench-suite.XXXXXX)
trap 'rm -rf "$W"' EXIT
# A package of N tests, and one of a single test; a passing submission.
make_pkg() { # dir tests
	mkdir -p "$1/suite"
	echo "name: bench $2" >"$1/problem.yaml"
	{
		echo "# $2 tests of calc.py"
		echo "import calc"
		for i in $(seq 1 "$2"); do
			printf 'def test_t%02d():\n    assert calc.add(%d, %d) == %d\n    assert calc.fib(%d) == calc.fib(%d) + calc.fib(%d)\n' \
				"$i" "$i" "$i" $((2 * i)) $((i + 2)) $((i + 1)) "$i"
		done
	} >"$1/suite/test_calc.py"
	{
		printf 'framework: pytest\nlanguage: python3\ntime_ms: 2000\nmemory_mb: 256\ngroups:\n'
		printf '  - file: test_calc.py\n    tests:\n'
		for i in $(seq 1 "$2"); do printf '      - name: test_t%02d\n' "$i"; done
	} >"$1/suite/suite.yaml"
}
make_pkg "$W/pkg" $N
make_pkg "$W/pkg1" 1
mkdir -p "$W/sub"
cat >"$W/sub/calc.py" <<'EOF'
import os


def add(a, b):
    if a == 20:
        os._exit(0)
    return a + b


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
EOF

# The passing one: add() never exits (the test of 20 is the last).
mkdir -p "$W/exits"
cp "$W/sub/calc.py" "$W/exits/calc.py"
sed -i 's/if a == 20:/if a == 10 ** 9:/' "$W/sub/calc.py"

now_ms() { date +%s%3N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
time_runs() { # label command... -> prints the median in ms
	local t0 i
	for i in $(seq "$RUNS"); do
		t0=$(now_ms)
		"$@" >/dev/null 2>&1 || bail "$*: failed"
		echo $(($(now_ms) - t0))
	done | median
}
bare_one() { (cd "$W/sub" && /usr/bin/python3 -B -m pytest -q -p no:cacheprovider "$W/pkg/suite/test_calc.py"); }
bare_each() {
	local i
	for i in $(seq 1 $N); do
		(cd "$W/sub" && /usr/bin/python3 -B -m pytest -q -p no:cacheprovider \
			"$W/pkg/suite/test_calc.py::test_t$(printf %02d "$i")") || return 1
	done
}
gavel_judge() { "$BUILD/gavel" judge "$1" "${2:-$W/sub}"; }
gavel_exits() { "$BUILD/gavel" judge "$W/pkg" "$W/exits" | grep -q 'verdict RE, score 19'; }

echo "# $N-test pytest suite, passing submission; median of $RUNS runs; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
gavel_judge "$W/pkg" >/dev/null 2>&1 || bail "gavel judge does not accept the passing submission"
ONE=$(time_runs bare_one)
EACH=$(time_runs bare_each)
G=$(time_runs gavel_judge "$W/pkg")
G1=$(time_runs gavel_judge "$W/pkg1")
GX=$(time_runs gavel_exits)
awk -v one="$ONE" -v each="$EACH" -v g="$G" -v g1="$G1" -v gx="$GX" -v n=$N 'BEGIN {
	printf "bare, one process:          %6d ms  (%.1f ms per test)\n", one, one / n
	printf "bare, a process per test:   %6d ms  (%.1f ms per test)\n", each, each / n
	printf "gavel judge:                %6d ms  (ratio %.2f to bare, one process)\n", g, g / one
	printf "gavel judge, 1-test suite:  %6d ms  (sandbox, build, plan, summary: the fixed cost)\n", g1
	printf "gavel per test beyond it:   %6.1f ms  ((gavel - 1-test) / %d)\n", (g - g1) / (n - 1), n - 1
	printf "gavel, one test exits:      %6d ms  (ratio %.2f to bare per test; %.1f ms per test beyond the fixed cost)\n", gx, gx / each, (gx - g1) / n
}'
