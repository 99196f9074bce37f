#!/usr/bin/env bash
# clang's static analyzer over every C source outside tests/: clang-tidy's
# clang-analyzer-core.* and clang-analyzer-unix.* checks (uninitialised
# reads, NULL dereferences, double frees, leaks), one file per clang-tidy,
# ANALYZE_JOBS (default 2) at a time. Any warning fails its file. Prints
# TAP, one test per source file, with clang-tidy's report as "# " lines
# after a failure:
#   not ok 12 - common/json.c
#   # common/json.c:149:7: error: Branch condition evaluates to a garbage value ...
# `make analyze` runs it with the build's include flags in ANALYZE_CFLAGS;
# tests/run.sh runs `make analyze` in its own section. A false positive is
# answered in the code (an initialised variable, an explicit check), or
# else with `// NOLINTNEXTLINE(check-name): why` on the line before it.
set -u
cd "$(dirname "$0")/../.." || exit 1

if [ -z "${ANALYZE_CFLAGS:-}" ]; then
	echo "analyze.sh: ANALYZE_CFLAGS is not set; run it as 'make analyze'" >&2
	exit 2
fi
JOBS=${ANALYZE_JOBS:-2}
CHECKS='-*,clang-analyzer-core.*,clang-analyzer-unix.*'

# The sources the Makefile builds: tracked and new (not ignored) ones, so
# that a file not yet added is analysed too.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' | grep -v '^tests/' | sort -u)
else
	mapfile -t files < <(find . -name '*.c' -not -path './tests/*' -not -path './build*' | sed 's|^\./||' | sort)
fi
echo "1..${#files[@]}"
[ ${#files[@]} -gt 0 ] || exit 1

if ! command -v clang-tidy >/dev/null; then
	# Debian's clang-tidy package.
	why="clang-tidy is not installed (apt-get install clang-tidy)"
	for i in "${!files[@]}"; do
		if [ "${GAVEL_ALLOW_SKIP:-0}" = 1 ]; then
			echo "ok $((i + 1)) - ${files[$i]} # SKIP $why"
		else
			echo "not ok $((i + 1)) - ${files[$i]}: $why"
		fi
	done
	[ "${GAVEL_ALLOW_SKIP:-0}" = 1 ]
	exit
fi

work=$(mktemp -d /tmp/gavel-analyze.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Each worker writes N.out (clang-tidy's report) and then N.rc; the loop
# below prints the results in order as they arrive.
# shellcheck disable=SC2016 # the worker's own variables
for i in "${!files[@]}"; do printf '%s\t%s\n' "$i" "${files[$i]}"; done |
	xargs -d '\n' -P "$JOBS" -n 1 sh -c '
		i=${3%%	*} f=${3#*	}
		clang-tidy -quiet -checks="$1" --warnings-as-errors="*" "$f" -- $ANALYZE_CFLAGS >"$2/$i.out" 2>&1
		echo $? >"$2/$i.rc.tmp" && mv "$2/$i.rc.tmp" "$2/$i.rc"' _ "$CHECKS" "$work" &
runner=$!

fails=0
for i in "${!files[@]}"; do
	while [ ! -f "$work/$i.rc" ]; do
		if ! kill -0 "$runner" 2>/dev/null && [ ! -f "$work/$i.rc" ]; then
			echo "not ok $((i + 1)) - ${files[$i]}: not analysed (the runner stopped)"
			fails=$((fails + 1))
			continue 2
		fi
		sleep 0.2
	done
	if [ "$(cat "$work/$i.rc")" = 0 ]; then
		echo "ok $((i + 1)) - ${files[$i]}"
	else
		fails=$((fails + 1))
		echo "not ok $((i + 1)) - ${files[$i]}"
		# The report without clang-tidy's counts ("N warnings generated.").
		grep -v -E '^[0-9]+ (warning|error)s? (generated|treated as errors)' "$work/$i.out" |
			sed "s|$PWD/||; s/^/# /"
	fi
done
wait "$runner" 2>/dev/null
[ "$fails" -eq 0 ]
