#!/usr/bin/env bash
# Runs every test of Gavel — unit (cmocka), clang's static analyzer,
# integration (real PostgreSQL, Redis and runsc), the security suite, the
# fuzz targets and the fresh-root smoke check — and ends with one summary
# line, "N passed, M failed, K skipped", counting every test case it ran (a
# "# SKIP" case, cmocka's "not ok ... # SKIP" too, counts as skipped, never
# as passed or failed).
#
# Every test program speaks TAP ("ok N - name" / "not ok N - name", plan
# "1..N"): cmocka binaries through CMOCKA_MESSAGE_OUTPUT=TAP, scripts by
# printing it. A program that crashes or prints fewer results than its plan
# counts the missing ones as failures: nothing fails silently.
#
# Integration tests get a fresh PostgreSQL and Redis in a temporary folder,
# started here and stopped on any exit, including a failure or Ctrl-C.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD GAVEL_ROOT=$PWD
# The system's tools first, those make deps installed: a version manager's
# shim found first on PATH (pyenv's python3 takes 0.66 s to start, Debian's
# 0.05 s) slowed every test that calls python3, enough to reorder the
# timed steps of the GPU scheduling test.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
FILTER=${1:-}

passed=0
failed=0
skipped=0
failures=()
logdir=$(mktemp -d /tmp/gavel-test-logs.XXXXXX)

# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
services_dir=$(mktemp -d /tmp/gavel-test-services.XXXXXX)
cleanup() {
	# The last section's background lane (its timeout, and what that runs).
	if [ -n "${beside_pid:-}" ]; then
		pkill -P "$beside_pid" 2>/dev/null
		kill "$beside_pid" 2>/dev/null
	fi
	services_stop "$services_dir" >/dev/null 2>&1
	rm -rf "$services_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The machine's busy and total CPU ticks (all cores), from /proc/stat: each
# test's line says how busy the machine was while it ran (niced user time,
# the lane beside, not counted), the figure that tells which tests leave
# CPU to that lane.
cpu_ticks() {
	local _ user nice sys idle iowait irq softirq steal
	read -r _ user nice sys idle iowait irq softirq steal _ </proc/stat
	echo "$((user + sys + irq + softirq + steal)) $((user + nice + sys + idle + iowait + irq + softirq + steal))"
}
cpu_busy_pct() { # "busy total" at the start: percent busy since
	local b0 t0 b1 t1
	read -r b0 t0 <<<"$1"
	read -r b1 t1 < <(cpu_ticks)
	echo $(((b1 - b0) * 100 / (t1 - t0 > 0 ? t1 - t0 : 1)))
}

run_tap() { # name timeout command...
	local name=$1 limit=$2
	shift 2
	case "$name" in *"$FILTER"*) ;; *) return 0 ;; esac
	local log="$logdir/$(echo "$name" | tr '/' '_').log"
	local t0=$SECONDS c0
	c0=$(cpu_ticks)
	CMOCKA_MESSAGE_OUTPUT=TAP timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
	local rc=$?
	local took=$((SECONDS - t0)) busy
	busy=$(cpu_busy_pct "$c0")
	local ok notok plan
	ok=$(grep -cE '^ok [0-9]+' "$log")
	notok=$(grep -cE '^not ok [0-9]+' "$log")
	# A skip is neither passed nor failed, whichever way its program
	# wrote it: TAP scripts "ok N - x # SKIP why", cmocka "not ok N - x # SKIP".
	local skip_ok skip_notok
	skip_ok=$(grep -cE '^ok [0-9]+.*# SKIP' "$log")
	skip_notok=$(grep -cE '^not ok [0-9]+.*# SKIP' "$log")
	ok=$((ok - skip_ok))
	notok=$((notok - skip_notok))
	skipped=$((skipped + skip_ok + skip_notok))
	plan=$(grep -oE '^1\.\.[0-9]+' "$log" | tail -n1 | cut -d. -f3)
	local missing=0
	if [ -n "$plan" ] && [ $((ok + notok + skip_ok + skip_notok)) -lt "$plan" ]; then
		missing=$((plan - ok - notok - skip_ok - skip_notok))
	fi
	if [ $rc -ne 0 ] && [ "$notok" -eq 0 ] && [ $missing -eq 0 ]; then
		missing=1 # crashed, timed out or failed outside any test case
	fi
	passed=$((passed + ok))
	failed=$((failed + notok + missing))
	if [ $((notok + missing)) -gt 0 ]; then
		failures+=("$name (exit $rc, log $log)")
		printf 'FAIL %s: %d ok, %d not ok, %d missing (exit %d) (%d s, cpu %d%%)\n' "$name" "$ok" "$notok" "$missing" "$rc" "$took" "$busy"
		# Each failure with the first two diagnostic ("# ") lines after
		# it: CI shows only this summary, not the logs.
		awk '/^not ok / { print; d = 2; next }
		     /^# / && d > 0 { print; d--; next }
		     { d = 0 }
		     /ERROR|error:/ { print }' "$log" | head -n 24 | cut -c1-300 | sed 's/^/    /'
	else
		printf 'ok   %s: %d (%d s, cpu %d%%)\n' "$name" "$ok" "$took" "$busy"
	fi
}

# Beside every section, from the start, at the lowest CPU priority: the
# README's `make run` on a brand-new Debian 12 root, one submission per
# language (tests/fresh/fresh_root_smoke.sh; ~7 min alone on 2 cores, most
# of it debootstrap and apt waiting on the network and the disk), then
# clang's static analyzer over every C source outside tests/ (make analyze:
# tests/static/analyze.sh, one test per file; ~3 min alone) and the build
# of the libFuzzer targets. None has a clock to meet, and all together
# they took 8 min of the 45 that CI allows when they ran after the other
# sections; niced, they take what CPU the other tests leave (a test waiting
# on a failover, a timer or a browser leaves most of it). The fresh root
# finishes before the security section (whose disk watch would count its
# downloads as a probe's), and the fuzz targets run last, in the
# foreground: a fuzz input slower than FUZZ_TIMEOUT fails, and starved of
# CPU every input would be. Their results are counted at the end.
beside_run() { # NAME LIMIT COMMAND...: in the background lane, if FILTER has it
	local name=$1 limit=$2 out
	shift 2
	case "$name" in *"$FILTER"*) ;; *) return 0 ;; esac
	out=$logdir/beside_$(echo "$name" | tr '/' '_').out
	local t0=$SECONDS
	timeout --kill-after=10 "$limit" "$@" >"$out" 2>&1
	echo $? >"$out.rc"
	echo "# $name ran $((SECONDS - t0)) s beside the other tests" >>"$out"
}
beside_lane() {
	renice -n 19 -p "$BASHPID" >/dev/null
	GAVEL_FRESH_BACKGROUND=1 beside_run "fresh/fresh_root_smoke.sh" 2400 bash tests/fresh/fresh_root_smoke.sh
	touch "$logdir/beside-fresh.done"
	case "fuzz/run.sh" in *"$FILTER"*) make --no-print-directory -j2 fuzz >"$logdir/beside_fuzz_build.out" 2>&1 ;; esac
	touch "$logdir/beside-fuzz-build.done"
	beside_run "static/analyze.sh" 1800 make --no-print-directory analyze
}
wait_beside() { # MARKER: until the lane has passed it (or ended)
	local t0=$SECONDS
	while [ ! -e "$logdir/beside-$1.done" ] && kill -0 "$beside_pid" 2>/dev/null; do
		sleep 2
	done
	[ $((SECONDS - t0)) -lt 2 ] || echo "   (waited $((SECONDS - t0)) s for the lane beside: $1)"
}
beside_lane &
beside_pid=$!

section_start=$SECONDS
section() { # the next section's name; prints how long the last one took
	[ -n "${section_name:-}" ] && echo "   ($section_name: $((SECONDS - section_start)) s)"
	section_name=$1
	section_start=$SECONDS
	echo "== $1"
}

section unit
for t in "$BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	run_tap "unit/$(basename "$t")" 300 "$t"
done
# The notebook kernels' bridge on the host, against a real ipykernel
# (executor/kernels/bridge.py; exit status only, its lines are not TAP).
# It reads frames with Jupyter Server's own code, a test tool that
# tests/lib/jupyter.sh installs (on a new machine nothing else has yet).
# shellcheck disable=SC2016
run_tap "unit/kernels/test_bridge.py" 300 bash -c \
	'. tests/lib/jupyter.sh && jupyter_clients_ready && exec /usr/bin/python3 tests/kernels/test_bridge.py'

section "services for integration tests"
if ! services_start "$services_dir"; then
	echo "FAIL could not start PostgreSQL and Redis for the integration tests"
	failed=$((failed + 1))
	failures+=("services")
else
	# shellcheck disable=SC1091
	. "$services_dir/env"
	section integration
	# Each test starts with nothing in flight: a submission another test
	# left queued would be re-enqueued from PostgreSQL by the next stack's
	# scheduler and take one of its executor's slots (test_gpu_sim's order
	# check failed so). Cancelled here, and said, so a leak stays visible.
	settle_submissions() {
		local n
		n=$(psql "$GAVEL_DATABASE_URL" -XAtq -c "WITH c AS (UPDATE submissions SET status = 'cancelled',
			finished_at = now() WHERE status IN ('queued', 'running') RETURNING 1) SELECT count(*) FROM c" 2>/dev/null)
		[ "${n:-0}" = 0 ] || echo "   ($1 left $n submissions in flight: cancelled)"
	}
	for t in "$BUILD"/tests/integration/test_*; do
		[ -x "$t" ] || continue
		run_tap "integration/$(basename "$t")" 600 "$t"
		settle_submissions "integration/$(basename "$t")"
	done
	for t in tests/integration/*.sh; do
		[ -f "$t" ] || continue
		# Less than the tests do when run alone, for the run's 45 minutes
		# on 2 cores: test_service_scale's first phase 120 submissions
		# instead of 300 (555 s), the HA tests' failover loads 60 instead
		# of 160 and 200 (~400 s together), and the judge fixtures leave
		# the suite submissions test_suites_api judges to it (~150 s).
		GAVEL_SCALE_N1=${GAVEL_SCALE_N1:-120} GAVEL_HA_N=${GAVEL_HA_N:-60} \
			GAVEL_FIXTURES_SKIP_SUITE_SERVICE=${GAVEL_FIXTURES_SKIP_SUITE_SERVICE:-1} run_tap "integration/$(basename "$t")" 900 bash "$t"
		settle_submissions "integration/$(basename "$t")"
	done
fi

# The fresh root is done before the security section starts (see the lane
# above); the fuzz targets run after it, FUZZ_SECONDS (10 here) each, two
# at a time (built in the lane: `make fuzz` finds them up to date).
wait_beside fresh
section security
for t in tests/security/*.sh; do
	[ -f "$t" ] || continue
	run_tap "security/$(basename "$t")" 900 bash "$t"
done

section "fuzz, and the lane beside: fresh root and static analysis"
wait_beside fuzz-build
FUZZ_SECONDS=${FUZZ_SECONDS:-10} run_tap "fuzz/run.sh" 900 bash tests/fuzz/run.sh
wait "$beside_pid"
for name in "fresh/fresh_root_smoke.sh" "static/analyze.sh"; do
	out=$logdir/beside_$(echo "$name" | tr '/' '_').out
	[ -f "$out" ] || continue
	# shellcheck disable=SC2016
	run_tap "$name" 60 bash -c 'cat "$1"; exit "$(cat "$1.rc" 2>/dev/null || echo 1)"' _ "$out"
	grep -h "^# $name ran" "$out"
done

section_end() { [ -n "${section_name:-}" ] && echo "   ($section_name: $((SECONDS - section_start)) s)"; }
section_end
echo "   (all: $SECONDS s)"
echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
