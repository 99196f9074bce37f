#!/usr/bin/env bash
# A node's precompiled headers and class archives (languages/lang_pch.h,
# lang_cds.h; executor/daemon/warm.c) are built where no submission waits:
#   1. `gavel-executor --prepare` builds them into an empty folder (the C++
#      header, javac's archive) and says so; a second run finds them
#      current and builds none;
#   2. a node started on an empty folder, where a stopped builder left its
#      temporary files, takes jobs while its warm-up process builds them:
#      it registers before the warm-up ends, and a <bits/stdc++.h>
#      submission sent at once is judged AC (without the header, or with
#      it once renamed into place);
#   3. the warm-up ends with every header and archive in place, the
#      temporary files of the stopped builder removed and none of its own
#      left;
#   4. a node stopped (SIGTERM) while its warm-up compiles leaves no
#      compiler running and no temporary file that a later builder would
#      take for its own.
# Needs root. TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..9"
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl /usr/bin/python3 /usr/bin/g++; do command -v $c >/dev/null || bail "$c missing"; done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup nodewarm "${GAVEL_KEEP_LOGS:-}"
export GAVEL_LOG_LEVEL=info
# Processes whose command line names FOLDER (a compiler writing there).
writers() { # folder
	local p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$1/" && echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null)"
	done
}
# The temporary files of a builder: NAME.gch.PID, .wrapper-PID.h,
# .javac.jsa.PID, .cds-build-PID.
temporaries() { # folder
	find "$1" \( -regex '.*\.gch\.[0-9]+' -o -regex '.*/\.wrapper-[0-9]+\.h' -o -regex '.*/\.javac\.jsa\.[0-9]+' \
		-o -regex '.*/\.cds-build-[0-9]+' \) -print 2>/dev/null
}

# ---- 1. at install ----
PCH1=$TMP/pch-install
GAVEL_EXECUTOR_PCH_DIR=$PCH1 GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
	"$BUILD/gavel-executor" --prepare >"$TMP/prepare1.log" 2>&1 </dev/null
rc1=$?
check_detail() { tail -n 5 "$TMP/prepare1.log"; }
check "gavel-executor --prepare builds the C++ header and javac's archive into an empty folder (exit $rc1)" \
	bash -c "[ $rc1 = 0 ] && [ -s '$PCH1/cpp/bits/stdc++.h.gch' ] && [ -s '$PCH1/java/javac.jsa' ] &&
		grep -q 'languages built in' '$TMP/prepare1.log' && ! grep -q 'not built' '$TMP/prepare1.log'"
GAVEL_EXECUTOR_PCH_DIR=$PCH1 GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
	"$BUILD/gavel-executor" --prepare >"$TMP/prepare2.log" 2>&1 </dev/null
rc2=$?
check_detail() { tail -n 5 "$TMP/prepare2.log"; }
check "a second --prepare finds them current and builds none (exit $rc2)" \
	bash -c "[ $rc2 = 0 ] && grep -q ': 0 languages built in' '$TMP/prepare2.log'"

# ---- 2. a node on an empty folder serves while it warms ----
PCH=$TMP/pch-node
mkdir -p "$PCH/cpp/bits"
# What a builder stopped midway leaves (its pid long gone).
head -c 1048576 /dev/zero >"$PCH/cpp/bits/stdc++.h.gch.999999"
echo '#include <bits/stdc++.h>' >"$PCH/cpp/.wrapper-999999.h"
stack_tenant "${TAG}_t" --quota requests_per_second=1000 --quota burst=1000
NODE=w-$TAG
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=$NODE GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_BURST_SLOTS=0 \
	GAVEL_EXECUTOR_KERNEL_POOL=0 GAVEL_EXECUTOR_PCH_DIR=$PCH stack_start_executor executor.log
PID_NODE=$PID_EXEC
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_NODE" "$PID_FE"
node_up() { grep -q "node $NODE up" "$TMP/executor.log"; }
warmed() { grep -q 'precompiled headers and class archives: .* built in' "$TMP/executor.log"; }
wait_for 60 node_up
SRC='#include <bits/stdc++.h>
int main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }'
body=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps({"language": "cpp", "source": sys.argv[1],
	"limits": {"time_ms": 5000}, "tests": [{"input": "20 22\n", "expected": "42\n"}]}))' "$SRC")
judge() { # name: posts body, waits for the verdict, prints "status verdict"
	local st v id
	st=$(curl -s -o "$TMP/$1.json" -w '%{http_code}' -X POST -H "X-Auth-Token: $KEY" \
		-H 'Content-Type: application/json' --data "$body" "$B/v1/submissions?wait=true")
	id=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/$1.json" 2>/dev/null)
	[ -n "$id" ] || { echo "$st no-id"; return; }
	for _ in $(seq 300); do
		v=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("status"), d.get("verdict"))' \
			"$TMP/$1.json" 2>/dev/null)
		[ "${v%% *}" = done ] || [ "${v%% *}" = failed ] && break
		sleep 1
		curl -s -o "$TMP/$1.json" -H "X-Auth-Token: $KEY" "$B/v1/submissions/$id"
	done
	echo "$st $v"
}
warm_at_up=no
warmed || warm_at_up=yes
first=$(judge first)
check_detail() { tail -n 12 "$TMP/executor.log"; }
check "the node registered while its warm-up still built the headers" test "$warm_at_up" = yes
check_detail() { head -c 600 "$TMP/first.json"; echo; tail -n 5 "$TMP/executor.log"; }
check "a <bits/stdc++.h> submission sent at once is judged AC ($first)" test "${first#* }" = "done AC"

# ---- 3. the warm-up's end ----
wait_for 300 warmed
check_detail() { tail -n 12 "$TMP/executor.log"; ls -laR "$PCH" | head -n 30; }
check "the warm-up ends with every header and javac's archive in place" \
	bash -c "[ -s '$PCH/cpp/bits/stdc++.h.gch' ] && [ -s '$PCH/cpp14/bits/stdc++.h.gch' ] &&
		[ -s '$PCH/cpp20/bits/stdc++.h.gch' ] && [ -s '$PCH/java/javac.jsa' ] && [ -s '$PCH/cpp/stamp' ]"
left=$(temporaries "$PCH" | tr '\n' ' ')
check_detail() { echo "left: $left"; }
check "no temporary file left, the stopped builder's removed" test -z "$left"
after=$(judge after)
check_detail() { head -c 600 "$TMP/after.json"; }
check "with the header in place the same submission is judged AC ($after)" test "${after#* }" = "done AC"

# ---- 4. stopped while it compiles ----
kill -TERM "$PID_NODE"
wait_for 60 bash -c "! kill -0 $PID_NODE 2>/dev/null"
rm -f "$PCH"/cpp*/stamp
GAVEL_EXECUTOR_NODE_NAME=$NODE GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_BURST_SLOTS=0 \
	GAVEL_EXECUTOR_KERNEL_POOL=0 GAVEL_EXECUTOR_PCH_DIR=$PCH stack_start_executor executor2.log
PID_NODE=$PID_EXEC
compiling() { [ -n "$(writers "$PCH" | grep -v gavel-executor)" ]; }
wait_for 60 compiling
was=$(writers "$PCH" | tr '\n' ' ')
kill -TERM "$PID_NODE"
stopped=no
wait_for 60 bash -c "! kill -0 $PID_NODE 2>/dev/null" && stopped=yes
sleep 0.5
still=$(writers "$PCH" | tr '\n' ' ')
check_detail() { echo "compiling before: $was; after: $still"; tail -n 8 "$TMP/executor2.log"; }
check "SIGTERM while the warm-up compiles: the node stops ($stopped) and no compiler of it runs on" \
	bash -c "[ -n '$was' ] && [ $stopped = yes ] && [ -z '$still' ]"
left=$(temporaries "$PCH" | tr '\n' ' ')
GAVEL_EXECUTOR_PCH_DIR=$PCH GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" \
	"$BUILD/gavel-executor" --prepare >"$TMP/prepare3.log" 2>&1 </dev/null
after_prepare=$(temporaries "$PCH" | tr '\n' ' ')
check_detail() { echo "left by the stopped node: $left; after --prepare: $after_prepare"; tail -n 3 "$TMP/prepare3.log"; }
check "the next builder removes what the stopped one left and rebuilds the headers" \
	bash -c "[ -z '$after_prepare' ] && [ -s '$PCH/cpp/stamp' ] && [ -s '$PCH/cpp/bits/stdc++.h.gch' ]"
