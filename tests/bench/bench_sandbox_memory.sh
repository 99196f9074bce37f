#!/usr/bin/env bash
# Host memory of one sandbox, for sizing an executor node
# (docs/OPERATIONS.md): `gavel run` of a program, sampled every 200 ms
# while it runs, as the proportional set size (PSS, /proc/PID/smaps_rollup)
# summed over every process of the run (gavel, runsc, the Sentry, the
# gofer), at its peak. Against a baseline measured in the same run: the
# same program idle, so the difference is what the program's own memory
# adds and the idle figure is gVisor's cost beside a program.
#
#   python idle          time.sleep
#   python 64 MiB        a 64 MiB bytearray, every page touched
#   C                    gcc in the sandbox, then the program idle
#
# Medians of BENCH_MEM_RUNS (3). Figures only; not part of `make test`.
#
#   tests/bench/bench_sandbox_memory.sh      (as root; BUILD=build by default)
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUNS=${BENCH_MEM_RUNS:-3}
[ "$(id -u)" -eq 0 ] || { echo "bench_sandbox_memory: needs root (runsc)" >&2; exit 1; }
[ -x "$BUILD/gavel" ] || { echo "bench_sandbox_memory: $BUILD/gavel is not built" >&2; exit 1; }
TMP=$(mktemp -d /tmp/gavel-benchmem.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

printf 'import time\ntime.sleep(3)\n' >"$TMP/idle.py"
printf 'import time\nb = bytearray(64 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\ntime.sleep(3)\n' >"$TMP/alloc.py"
printf '#include <unistd.h>\nint main(void) { sleep(3); return 0; }\n' >"$TMP/idle.c"

cat >"$TMP/peak.py" <<'PY'
import os, statistics, subprocess, sys, time
gavel, src, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def children_of():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids

def tree_pss_kb(root):
    kids, todo, total = children_of(), [root], 0
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                total += sum(int(l.split()[1]) for l in f if l.startswith("Pss:"))
        except OSError:
            pass
    return total

peaks = []
for _ in range(runs):
    p = subprocess.Popen([gavel, "run", "--wall", "20", "--time", "10", "--memory", "256", src],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    peak = 0
    while p.poll() is None:
        peak = max(peak, tree_pss_kb(p.pid))
        time.sleep(0.2)
    if p.returncode != 0:
        sys.exit("gavel run %s exited %d" % (src, p.returncode))
    peaks.append(peak)
print("%.1f" % (statistics.median(peaks) / 1024.0))
PY

idle=$(python3 "$TMP/peak.py" "$BUILD/gavel" "$TMP/idle.py" "$RUNS") || exit 1
alloc=$(python3 "$TMP/peak.py" "$BUILD/gavel" "$TMP/alloc.py" "$RUNS") || exit 1
cc=$(python3 "$TMP/peak.py" "$BUILD/gavel" "$TMP/idle.c" "$RUNS") || exit 1
echo "peak PSS of one sandbox's processes (median of $RUNS runs):"
echo "  python idle (baseline)   $idle MiB"
echo "  python 64 MiB touched    $alloc MiB  (+$(python3 -c "print('%.1f' % ($alloc - $idle))") MiB over idle: the program's 64)"
echo "  C, compile then idle     $cc MiB"
