#!/usr/bin/env bash
# CodeRunner-style runs through the Jobe API (issue 30), on its own stack
# (tests/lib/stack.sh: PostgreSQL, Redis, gavel-scheduler, one
# gavel-executor with BENCH_CONC workers, gavel-frontend), everything
# stopped and removed on exit. Not part of `make test`: timings on a
# shared machine are noisy, so the baseline is measured in the same run.
#
# The run is what a CodeRunner "C program" question with a Python
# template costs: a Python 3 program that writes the student's C answer
# into its working directory, compiles it with gcc and runs the binary on
# 3 inputs (3 tests of the question), all by subprocess, and prints the
# outputs. It is POSTed to /jobe/index.php/restapi/runs as Moodle does,
# BENCH_RUNS times, BENCH_CONC clients at once (each waits for its 200);
# beside it the same program runs bare on the host (python3, the same
# gcc, a fresh folder per run), as many times with as many at once. Each
# side prints runs per second (runs / wall time of the batch) and the
# p50 and p95 latency of one run, and the ratios; the load average too.
# Every answer is checked (outcome 15, the three sums) after the clock
# stops.
#
#   sudo BUILD=build tests/bench/bench_coderunner.sh
#
# Environment: BUILD, BENCH_RUNS (24), BENCH_CONC (space-separated
# concurrencies, "1 2 4"), BENCH_WARM (2 runs first, not counted).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUNS=${BENCH_RUNS:-24}
CONCS=${BENCH_CONC:-1 2 4}
WARM=${BENCH_WARM:-2}

bail() { echo "bench_coderunner: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in curl psql redis-cli python3 setsid gcc; do command -v $c >/dev/null || bail "$c missing"; done
MAXC=1
for n in $CONCS; do
	case "$n" in '' | *[!0-9]*) bail "BENCH_CONC: '$n' is not a count" ;; esac
	[ "$n" -gt "$MAXC" ] && MAXC=$n
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup bench-coderunner
stack_tenant "${TAG}_m" --quota requests_per_second=1000 --quota burst=1000 --quota max_queued=1000 \
	--quota max_running="$MAXC"
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=("$!")
GAVEL_EXECUTOR_NODE_NAME=node-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=$MAXC GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	stack_start_executor executor.log
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=300s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend
stack_wait_healthy 90 "$PID_FE" "$PID_EXEC"
wait_for 60 bash -c "curl -s '$B/jobe/index.php/restapi/languages' | grep -q python3" ||
	bail "the executor published no languages"

python3 - "$B" "$KEY" "$RUNS" "$WARM" "$TMP" $CONCS <<'PY'
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

base, key, runs, warm, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
concs = [int(c) for c in sys.argv[6:]]

# The question template with the student's answer in it: what CodeRunner
# sends as the run's sourcecode.
TEMPLATE = r'''
import subprocess
ANSWER = """#include <stdio.h>
int main(void)
{
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2)
        return 1;
    printf("%ld\\n", a + b);
    return 0;
}
"""
with open("answer.c", "w") as f:
    f.write(ANSWER)
cc = subprocess.run(["/usr/bin/gcc", "-std=c99", "-Wall", "-o", "answer", "answer.c"], capture_output=True, text=True)
if cc.returncode != 0:
    print("COMPILE ERROR", cc.stderr)
else:
    for stdin in ["1 2\n", "40 2\n", "-5 5\n"]:
        r = subprocess.run(["./answer"], input=stdin, capture_output=True, text=True, timeout=5)
        print(r.stdout.strip(), end=" ")
    print()
'''
WANT = "3 42 0 \n"
PARAMS = {"numprocs": 20, "cputime": 20, "memorylimit": 1000}


def jobe_run(_i):
    u = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = json.dumps({"run_spec": {"language_id": "python3", "sourcecode": TEMPLATE, "parameters": PARAMS}})
    conn.request("POST", "/jobe/index.php/restapi/runs", body=body,
                 headers={"Content-Type": "application/json", "X-API-KEY": key})
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    if resp.status != 200:
        return "%d %s" % (resp.status, text[:300])
    r = json.loads(text)
    if r.get("outcome") != 15 or r.get("stdout") != WANT:
        return "outcome %s stdout %r stderr %r cmpinfo %r" % (r.get("outcome"), r.get("stdout"),
                                                              r.get("stderr", "")[:200], r.get("cmpinfo", "")[:200])
    return None


def bare_run(i):
    d = os.path.join(tmp, "bare-%d-%d" % (os.getpid(), i))
    os.mkdir(d)
    try:
        r = subprocess.run([sys.executable, "-c", TEMPLATE], cwd=d, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": d})
        if r.returncode != 0 or r.stdout != WANT:
            return "exit %d stdout %r stderr %r" % (r.returncode, r.stdout, r.stderr[:200])
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def batch(fn, n, conc, first=0):
    """n runs of fn, conc at once: (runs/s, latencies in s, failures)."""
    lat, fails = [], []
    lock = threading.Lock()
    nxt = [first]

    def worker():
        while True:
            with lock:
                i = nxt[0]
                if i >= first + n:
                    return
                nxt[0] += 1
            t = time.monotonic()
            err = fn(i)
            d = time.monotonic() - t
            with lock:
                lat.append(d)
                if err:
                    fails.append(err)

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return n / (time.monotonic() - t0), sorted(lat), fails


def pct(lat, p):
    return lat[min(len(lat) - 1, int(round(p / 100.0 * (len(lat) - 1))))]


print("CodeRunner-style runs: a Python template compiling a C answer with gcc and running it on 3 inputs")
print("%d runs per figure, load average %s" % (runs, open("/proc/loadavg").read().split()[0]))
for fn in (jobe_run, bare_run):
    _, _, f = batch(fn, warm, 1, first=10000)
    if f:
        sys.exit("warm-up %s failed: %s" % (fn.__name__, f[0]))
bad = 0
print("%-8s %-6s %10s %9s %9s   %s" % ("at once", "side", "runs/s", "p50 s", "p95 s", "(load)"))
for conc in concs:
    res = {}
    for name, fn in (("bare", bare_run), ("jobe", jobe_run), ("bare", bare_run)):
        rate, lat, fails = batch(fn, runs, conc, first=conc * 100000)
        prev = res.get(name)
        # bare runs before and after Gavel: their mean, so that the
        # load's drift over the batch is not carried into the ratio
        res[name] = (rate, lat) if not prev else ((prev[0] + rate) / 2, sorted(prev[1] + lat))
        print("%-8d %-6s %10.2f %9.3f %9.3f   (%s)%s" % (conc, name, rate, pct(lat, 50), pct(lat, 95),
                                                       open("/proc/loadavg").read().split()[0],
                                                       "  %d FAILED: %s" % (len(fails), fails[0]) if fails else ""))
        bad += len(fails)
    (jr, jl), (br, bl) = res["jobe"], res["bare"]
    print("%-8d ratio  %10.2f %9.2f %9.2f   (Gavel / bare: runs/s, p50, p95)" %
          (conc, jr / br, pct(jl, 50) / pct(bl, 50), pct(jl, 95) / pct(bl, 95)))
sys.exit(1 if bad else 0)
PY
