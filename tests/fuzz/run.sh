#!/usr/bin/env bash
# Builds the libFuzzer targets (make fuzz) and runs each tests/fuzz/fuzz_*.c
# for FUZZ_SECONDS (default 20), FUZZ_JOBS (default 2) at a time, from its
# seed corpus tests/fuzz/corpus/<target>/ (read only: what a run finds goes
# to a temporary folder). Prints TAP, one test per target:
#   ok 3 - fuzz_judge0: 412345 executions, 0 crashes
# A crash, a sanitizer report, a leak, an input slower than FUZZ_TIMEOUT
# seconds or a broken invariant (abort) fails the target; its log and the
# input that did it are kept, and the input is printed in base64 so that
# it can be replayed from CI's output alone:
#   base64 -d > crash <<< '...'; build-fuzz/tests/fuzz/fuzz_x crash
# Names on the command line run only those targets: run.sh fuzz_lang.
set -u
cd "$(dirname "$0")/../.." || exit 1

SECS=${FUZZ_SECONDS:-20}
JOBS=${FUZZ_JOBS:-2}
TIMEOUT=${FUZZ_TIMEOUT:-10}
BUILD_DIR=${FUZZ_BUILD:-build-fuzz}

targets=()
for src in tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	if [ $# -gt 0 ]; then
		case " $* " in *" $t "*) ;; *) continue ;; esac
	fi
	targets+=("$t")
done
echo "1..${#targets[@]}"
[ ${#targets[@]} -gt 0 ] || exit 1

work=$(mktemp -d /tmp/gavel-fuzz.XXXXXX)
keep=0
trap '[ $keep -eq 1 ] || rm -rf "$work"' EXIT

if ! make --no-print-directory -j"$(nproc)" FUZZ_BUILD="$BUILD_DIR" fuzz >"$work/build.log" 2>&1; then
	n=0
	for t in "${targets[@]}"; do
		n=$((n + 1))
		echo "not ok $n - $t: make fuzz failed"
	done
	grep -E 'error|Error' "$work/build.log" | head -n 5 | sed 's/^/# /'
	exit 1
fi

# One target: its log, exit status and executions land in $work/$t.*.
run_one() {
	local t=$1 bin="$BUILD_DIR/tests/fuzz/$1"
	mkdir -p "$work/$t.corpus"
	local seeds=()
	[ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
	"$bin" -max_total_time="$SECS" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
		-artifact_prefix="$work/$t." "$work/$t.corpus" "${seeds[@]}" >"$work/$t.log" 2>&1
	echo $? >"$work/$t.rc"
}

running=0
for t in "${targets[@]}"; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$t" &
	running=$((running + 1))
done
wait

n=0
failed=0
for t in "${targets[@]}"; do
	n=$((n + 1))
	log="$work/$t.log"
	rc=$(cat "$work/$t.rc" 2>/dev/null || echo 255)
	# "Done N runs in T second(s)" at a clean end; else the last "#N" line.
	execs=$(sed -n 's/^Done \([0-9]*\) runs in .*/\1/p' "$log" | tail -n1)
	[ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -n1 | tr -d '#')
	[ -n "$execs" ] || execs=0
	if [ "$rc" -eq 0 ] && [ "$execs" -gt 0 ]; then
		echo "ok $n - $t: $execs executions, 0 crashes"
		continue
	fi
	failed=1
	keep=1
	echo "not ok $n - $t: crash after $execs executions (exit $rc)"
	# tests/run.sh shows two "# " lines after a failure: what broke, then
	# the input.
	why=$(grep -m1 -E 'invariant broken|runtime error' "$log")
	[ -n "$why" ] || why=$(grep -m1 -E '^SUMMARY' "$log")
	echo "# ${why:-no sanitizer report; see the log}" | cut -c1-250
	for a in "$work/$t".crash-* "$work/$t".leak-* "$work/$t".timeout-* "$work/$t".oom-*; do
		[ -f "$a" ] || continue
		echo "# input ($(stat -c %s "$a") bytes, base64): $(head -c 3000 "$a" | base64 -w0)"
		echo "# kept: $a"
	done
	echo "# log: $log"
done
exit $failed
