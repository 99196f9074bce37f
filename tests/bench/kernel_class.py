#!/usr/bin/python3
"""Benchmark of notebook kernels for a whole class on a kernel node, beside
judging on the same machine (tests/bench/bench_kernel_class.sh starts the
stack and runs this). Figures only, never a pass or a fail.

    tests/bench/kernel_class.py BASE_URL TOKEN

Environment (set by the wrapper):
  BENCH_KNODE_CG       the kernel node's cgroup, relative to each hierarchy
                       ("<cgroup parent>/<node>")
  BENCH_CLASS_IDLE     kernels started and left idle (100)
  BENCH_CLASS_SPIN     of them, kernels that then spin `while True: pass` (20)
  BENCH_CLASS_STARTS   kernels started at once through @jupyterlab/services (30)
  BENCH_IDLE_S         the idle window (30 s)
  BENCH_STOP_KNODE_CMD a shell command that stops the kernel node (for the
                       before-figure: a class start on judging slots)
  BENCH_BEFORE_STARTS  kernels started at once on judging slots (10; 0 skips)
  BENCH_WARM_CMD       a shell command that asks for BENCH_CLASS_STARTS kernels
                       warm ahead for the tenant (gavel tenant kernels-warm)

Figures, in this order:
  1. judging alone: 18 submissions of a C program that spins 0.69 s of CPU
     under a 1 s limit, 6 at once: how many AC, submit to verdict p50/max;
  2. BENCH_CLASS_IDLE kernels started through the REST API (10 at a time)
     until each says idle: how long, how many;
  3. their cost over BENCH_IDLE_S idle: CPU of the kernel node's cgroup in
     cores, memory per kernel (its worker cgroup) median and max;
  4. judging as in 1 while they idle;
  5. BENCH_CLASS_SPIN of them spinning: judging as in 1, and the kernel
     node's CPU in cores meanwhile (its ceiling);
  6. all deleted; then BENCH_CLASS_STARTS startNew at once with
     @jupyterlab/services (tests/js/jupyter_class_start.mjs): p50, p95, max;
     then again with the course's request for that many kernels warm ahead
     in place (BENCH_WARM_CMD), once they are all started ahead (and how
     long that took);
  7. the baselines: a bare `python3 -m ipykernel` started on the host
     (jupyter_client, to kernel_info_reply, median of 3), and, with the
     kernel node stopped, BENCH_BEFORE_STARTS startNew at once on judging
     slots (what every kernel did before kernel nodes).
"""

import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))
sys.dont_write_bytecode = True
import kclient  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KNODE_CG = os.environ.get("BENCH_KNODE_CG", "")
N_IDLE = int(os.environ.get("BENCH_CLASS_IDLE", "100"))
N_SPIN = int(os.environ.get("BENCH_CLASS_SPIN", "20"))
N_STARTS = int(os.environ.get("BENCH_CLASS_STARTS", "30"))
IDLE_S = float(os.environ.get("BENCH_IDLE_S", "30"))
N_BEFORE = int(os.environ.get("BENCH_BEFORE_STARTS", "10"))
# Only phase 6, the class (cold, then with the course's request): for
# working on start latency; the baselines of phase 7 are then not printed.
CLASS_ONLY = os.environ.get("BENCH_CLASS_ONLY") == "1"

SPIN_C = r"""#include <stdio.h>
#include <time.h>
int main(void)
{
	/* 0.69 s of CPU, whatever else runs: the job a 1 s limit must pass. */
	while ((double)clock() / CLOCKS_PER_SEC < 0.69)
		;
	puts("done");
	return 0;
}
"""


def say(line):
    print(line, flush=True)


def load():
    return os.getloadavg()[0]


# ---- cgroups: the kernel node's, v2 or v1 ----

def cg_dir(controller):
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return os.path.join("/sys/fs/cgroup", KNODE_CG)
    for name in ((controller,) if controller != "cpuacct" else ("cpuacct", "cpu,cpuacct", "cpu")):
        d = os.path.join("/sys/fs/cgroup", name, KNODE_CG)
        if os.path.isdir(d):
            return d
    return None


def cpu_usec():
    d = cg_dir("cpuacct")
    if d is None:
        return None
    if os.path.exists(os.path.join(d, "cpu.stat")) and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        for line in open(os.path.join(d, "cpu.stat")):
            if line.startswith("usage_usec"):
                return int(line.split()[1])
    return int(open(os.path.join(d, "cpuacct.usage")).read()) // 1000


def kernel_memory_kib():
    """Memory of each worker cgroup of the kernel node that holds a kernel."""
    d = cg_dir("memory")
    if d is None:
        return []
    out = []
    for w in sorted(os.listdir(d)):
        p = os.path.join(d, w)
        if not os.path.isdir(p):
            continue
        for f in ("memory.current", "memory.usage_in_bytes"):
            if os.path.exists(os.path.join(p, f)):
                b = int(open(os.path.join(p, f)).read())
                if b > 16 << 20:  # an empty worker's cgroup holds next to nothing
                    out.append(b // 1024)
                break
    return out


def cores_over(seconds):
    c0, t0 = cpu_usec(), time.monotonic()
    time.sleep(seconds)
    c1, t1 = cpu_usec(), time.monotonic()
    if c0 is None or c1 is None:
        return None
    return (c1 - c0) / 1e6 / (t1 - t0)


# ---- judging ----

def submit(server, i):
    body = json.dumps({"language": "c", "source": SPIN_C, "limits": {"time_ms": 1000},
                       "tests": [{"input": "", "expected": "done\n"}]}).encode()
    t0 = time.monotonic()
    req = urllib.request.Request(server.url("v1/submissions?wait=true"), data=body, method="POST",
                                 headers={"Authorization": "token " + server.token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        d = json.load(r)
    while d.get("status") not in ("done", "failed", "cancelled"):
        time.sleep(0.2)
        with urllib.request.urlopen(urllib.request.Request(
                server.url("v1/submissions/" + d["id"]),
                headers={"Authorization": "token " + server.token}), timeout=60) as r:
            d = json.load(r)
    return d.get("verdict"), time.monotonic() - t0


def judging(server, label):
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda i: submit(server, i), range(18)))
    ac = sum(1 for v, _ in got if v == "AC")
    secs = sorted(s for _, s in got)
    others = sorted({v for v, _ in got if v != "AC"}, key=str)
    say("%-44s %2d of 18 AC%s, submit to verdict p50 %.2f s, max %.2f s (load %.1f)"
        % (label, ac, (" (others: %s)" % ", ".join(map(str, others))) if others else "",
           statistics.median(secs), secs[-1], load()))


# ---- kernels through the REST API ----

def start_idle(server, n):
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        kids = [k for k in pool.map(lambda i: try_start(server), range(n)) if k]
    idle = set()
    deadline = time.monotonic() + 60 + 10 * n
    while len(idle) < len(kids) and time.monotonic() < deadline:
        for kid in kids:
            if kid not in idle:
                try:
                    if server.kernel(kid).get("execution_state") == "idle":
                        idle.add(kid)
                except Exception:
                    pass
        time.sleep(1)
    return kids, len(idle), time.monotonic() - t0


def try_start(server):
    try:
        return server.start()["id"]
    except Exception as e:
        say("# a kernel start was refused: %s" % e)
        return None


def spin(server, kid):
    ch = kclient.Channels(server, kid)
    ch.open(timeout=60)
    ch.send("shell", "execute_request", {"code": "while True: pass", "silent": False,
                                         "store_history": False, "user_expressions": {},
                                         "allow_stdin": False, "stop_on_error": True})
    return ch


def class_start(base, token, n):
    p = subprocess.run(["node", os.path.join(ROOT, "tests/js/jupyter_class_start.mjs"), base, token, str(n)],
                       cwd=os.path.join(ROOT, "tests/js"), capture_output=True, text=True, timeout=900)
    lines = p.stdout.strip().splitlines()
    keep = os.environ.get("BENCH_KEEP_LOGS")
    if keep:  # each kernel's times and id, beside the daemons' logs
        with open(os.path.join(keep, "class-%d.txt" % int(time.time())), "w") as f:
            f.write(p.stdout)
    for line in lines:
        if "failed" in line:
            say(line)
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        say("# the class start printed no figures: %s" % (p.stderr.strip()[-500:] or p.stdout[-500:]))
        return None


def class_line(label, r):
    if not r:
        say("%-44s n/a" % label)
        return
    say("%-44s %d of %d up, p50 %.2f s, p95 %.2f s, slowest %.2f s%s (load %.1f)"
        % (label, r["ok"], r["n"], (r["p50_ms"] or 0) / 1000, (r["p95_ms"] or 0) / 1000,
           (r["max_ms"] or 0) / 1000, ", %d wrong answers" % r["wrong"] if r["wrong"] else "", load()))
    if r.get("startnew_p50_ms") is not None:
        say("%-44s p50 %.2f s, slowest %.2f s (started at %d ms since the epoch)"
            % ("   of which POST /api/kernels (startNew)", r["startnew_p50_ms"] / 1000,
               r["startnew_max_ms"] / 1000, r["started_at_ms"]))


def host_ipykernel_start():
    code = ("import time, jupyter_client\n"
            "t = time.monotonic()\n"
            "km, kc = jupyter_client.manager.start_new_kernel(kernel_name='python3', startup_timeout=60)\n"
            "print(time.monotonic() - t)\n"
            "kc.stop_channels(); km.shutdown_kernel(now=True)\n")
    times = []
    for _ in range(3):
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=120)
        try:
            times.append(float(p.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            say("# the host ipykernel did not start: %s" % p.stderr.strip()[-300:])
            return None
    return statistics.median(times)


def main():
    base, token = sys.argv[1], sys.argv[2]
    server = kclient.Server(base, token)
    say("# %d CPUs; idle kernels %d, spinning %d, class starts %d; kernel node cgroup %s"
        % (os.cpu_count(), N_IDLE, N_SPIN, N_STARTS, KNODE_CG))
    if not CLASS_ONLY:
        idle_and_judging(server)
    else:
        # The node's image made first, as it is on a node in service.
        kids, up, took = start_idle(server, 1)
        say("%-44s %d of 1 idle in %.0f s" % ("   one kernel first (the node's image)", up, took))
        for kid in kids:
            server.delete(kid)
        time.sleep(5)
    class_phase(base, token)
    if CLASS_ONLY:
        return
    host = host_ipykernel_start()
    say("%-44s %s" % ("7. baseline: python3 -m ipykernel on the host",
                      "%.2f s to kernel_info_reply (median of 3)" % host if host else "n/a"))
    if N_BEFORE and os.environ.get("BENCH_STOP_KNODE_CMD"):
        subprocess.run(["bash", "-c", os.environ["BENCH_STOP_KNODE_CMD"]], timeout=120)
        time.sleep(20)  # the scheduler counts the node dead, then kernels take judging slots
        class_line("   baseline: %d at once on judging slots" % N_BEFORE, class_start(base, token, N_BEFORE))


def idle_and_judging(server):
    judging(server, "1. judging alone")

    kids, up, took = start_idle(server, N_IDLE)
    say("%-44s %d of %d idle in %.0f s (load %.1f)" % ("2. kernels started, 10 at a time", up, N_IDLE, took, load()))
    time.sleep(5)
    cores = cores_over(IDLE_S)
    mem = kernel_memory_kib()
    if mem:
        say("%-44s %.3f cores for all %d; memory per kernel median %.1f MiB, max %.1f MiB (%d measured)"
            % ("3. idle, over %.0f s" % IDLE_S, cores if cores is not None else float("nan"), up,
               statistics.median(mem) / 1024, max(mem) / 1024, len(mem)))
    else:
        say("3. idle: no cgroup of the kernel node found under %s" % KNODE_CG)
    judging(server, "4. judging beside %d idle kernels" % up)

    chans = []
    for kid in kids[:N_SPIN]:
        try:
            chans.append(spin(server, kid))
        except Exception as e:
            say("# a kernel would not spin: %s" % e)
    time.sleep(3)
    spin_cores = cores_over(5)
    judging(server, "5. judging beside %d spinning kernels" % len(chans))
    say("%-44s %.2f cores" % ("   the kernel node while they spin", spin_cores if spin_cores is not None else float("nan")))
    for ch in chans:
        ch.close()

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda k: server.delete(k), kids))
    say("%-44s %.1f s" % ("   all %d deleted" % len(kids), time.monotonic() - t0))
    time.sleep(5)


def class_phase(base, token):
    if os.environ.get("BENCH_CLASS_COLD") != "0":
        class_line("6. a class: %d startNew at once" % N_STARTS, class_start(base, token, N_STARTS))
    if os.environ.get("BENCH_WARM_CMD"):
        time.sleep(5)
        t0 = time.monotonic()
        subprocess.run(["bash", "-c", os.environ["BENCH_WARM_CMD"]], timeout=60, check=True,
                       stdout=subprocess.DEVNULL)
        deadline = t0 + 60 + 10 * N_STARTS
        while len(kernel_memory_kib()) < N_STARTS and time.monotonic() < deadline:
            time.sleep(1)
        # Ready once the node's CPU settles: kernels starting use it all.
        while time.monotonic() < deadline and (cores_over(2) or 0) > 0.2:
            pass
        say("%-44s %d of %d in %.0f s" % ("   the course's request: started ahead", len(kernel_memory_kib()),
                                           N_STARTS, time.monotonic() - t0))
        class_line("   the class again, with the request", class_start(base, token, N_STARTS))


if __name__ == "__main__":
    main()
