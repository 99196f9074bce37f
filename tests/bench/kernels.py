#!/usr/bin/python3
"""Benchmark of hosted notebook kernels, against a baseline measured in the
same run: ipykernel on this host without a sandbox, behind a plain local
jupyter_server (Debian's 1.23.3). Figures only, never a pass or a fail.

    tests/bench/kernels.py [BASE_URL TOKEN]

BASE_URL and TOKEN (or GAVEL_KERNELS_URL and GAVEL_KERNELS_TOKEN): the
kernel gateway measured, e.g. Gavel's frontend and a tenant key (its
quotas must allow 2 kernels at once). With neither, the measured server
is a second plain jupyter_server (how the script itself is checked: every
ratio near 1). Both are driven by the same client (tests/kernels/kclient.py,
legacy JSON framing; BENCH_FRAMING=v1 for the other), one or two kernels
at a time, the target's and the baseline's runs alternating so that the
machine's load drifts into both alike.

Figures (each with the load average when it was taken):
  1. kernel start: POST api/kernels to the kernel_info_reply on a fresh
     channels WebSocket, p50 and p99 over BENCH_KERNEL_STARTS (10) starts;
     the kernel is deleted after each (its DELETE timed too). With
     BENCH_KERNEL_COLD_CMD (a shell command run before each target start,
     which makes sure no kernel started ahead fits it, e.g. by changing
     the tenant's kernel memory), three times: 1a fresh sandboxes; then,
     after one start not counted, the target's own way (Gavel: kernels
     started ahead, executor.kernel_pool), 1b with BENCH_KERNEL_GAP_S (8)
     seconds between starts (time for the target to get ready for the
     next), 1c back to back.
  2. cell round trip, `1+1`: execute_request to execute_reply and idle,
     median and p99 over BENCH_CELL_N (50).
  3. cell round trip, `print('x'*1000000)` (1 MB of stream output), median
     over BENCH_BIG_N (5).
  4. idle memory per kernel and kernels per GiB, after BENCH_IDLE_S (10 s)
     idle with a WebSocket open. Baseline: the PSS of the ipykernel process
     (found by its connection file, named after the kernel id). Target:
     BENCH_KERNEL_MEM_CMD, a shell command run with the kernel id as $1
     that prints the kernel's memory in KiB (e.g. its sandbox cgroup's
     memory.current / 1024); a local plain jupyter_server (no BASE_URL) is
     measured as the baseline is; otherwise "n/a".
  5. idle CPU per kernel over the same window, in % of one core.
     Baseline: utime+stime of the ipykernel process. Target:
     BENCH_KERNEL_CPU_CMD, run with the kernel id as $1, printing the
     kernel's cumulative CPU time in microseconds (e.g. its cgroup's
     cpu.stat usage_usec), read at both ends of the window.
"""

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))
sys.dont_write_bytecode = True
import kclient  # noqa: E402

STARTS = int(os.environ.get("BENCH_KERNEL_STARTS", "10"))
CELL_N = int(os.environ.get("BENCH_CELL_N", "50"))
BIG_N = int(os.environ.get("BENCH_BIG_N", "5"))
IDLE_S = float(os.environ.get("BENCH_IDLE_S", "10"))
FRAMING = os.environ.get("BENCH_FRAMING", "json")
WAIT = 180


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def ratio(a, b):
    return f"{a / b:.2f}" if b and a == a and b == b else "n/a"


def ms(x):
    return f"{x * 1000:.1f} ms"


# -- per-kernel resources on this host ---------------------------------------


def local_kernel_pid(kid):
    """The ipykernel process of a local jupyter_server's kernel: its command
    line names its connection file, kernel-<id>.json."""
    want = f"kernel-{kid}.json"
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if want.encode() in f.read():
                    return int(d)
        except OSError:
            continue
    return None


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_usec(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime
        return ticks * 1_000_000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def hook(var, kid):
    cmd = os.environ.get(var)
    if not cmd:
        return None
    r = subprocess.run(["sh", "-c", cmd, "hook", kid], capture_output=True, text=True, timeout=30)
    try:
        return float(r.stdout.split()[0])
    except (IndexError, ValueError):
        print(f"# {var} printed {r.stdout[:100]!r} (stderr {r.stderr[:200]!r})", flush=True)
        return None


class Side:
    def __init__(self, name, server, local):
        self.name = name
        self.s = server
        self.local = local  # a jupyter_server on this host: its kernels are host processes

    def memory_kib(self, kid):
        v = hook("BENCH_KERNEL_MEM_CMD", kid) if self.name == "target" else None
        if v is None and self.local:
            pid = local_kernel_pid(kid)
            v = pss_kib(pid) if pid else None
        return v

    def cpu_us(self, kid):
        v = hook("BENCH_KERNEL_CPU_CMD", kid) if self.name == "target" else None
        if v is None and self.local:
            pid = local_kernel_pid(kid)
            v = cpu_usec(pid) if pid else None
        return v


# -- figures --------------------------------------------------------------------


def start_once(side, before=None):
    if before and side.name == "target":
        subprocess.run(["sh", "-c", before], check=True, timeout=60, stdout=subprocess.DEVNULL)
    t0 = time.monotonic()
    k = side.s.start("python3")
    t_post = time.monotonic()
    ch = side.s.connect(k["id"], framing=FRAMING, timeout=WAIT)
    ch.wait_ready(WAIT)
    t_ready = time.monotonic()
    ch.close()
    side.s.delete(k["id"])
    return t_ready - t0, t_post - t0, time.monotonic() - t_ready


def fig_starts(sides, label="1.", before=None, gap=0):
    res = {s.name: ([], [], []) for s in sides}
    for _ in range(STARTS):
        time.sleep(gap)
        for s in sides:
            ready, post, delete = start_once(s, before)
            res[s.name][0].append(ready)
            res[s.name][1].append(post)
            res[s.name][2].append(delete)
    t, b = res["target"], res["baseline"]
    print(f"{label} kernel start, POST to kernel_info_reply, {STARTS} starts (load {loadavg()})")
    for name, (r, p, d) in res.items():
        print(f"   {name:8}: p50 {ms(pct(r, 50))}, p99 {ms(pct(r, 99))} (the POST alone: p50 {ms(pct(p, 50))}; "
              f"DELETE p50 {ms(pct(d, 50))})")
    print(f"   ratio target/baseline: p50 {ratio(pct(t[0], 50), pct(b[0], 50))}, p99 {ratio(pct(t[0], 99), pct(b[0], 99))}",
          flush=True)


def fig_cells(sides):
    chans = {}
    try:
        for s in sides:
            k = s.s.start("python3")
            ch = s.s.connect(k["id"], framing=FRAMING, timeout=WAIT)
            ch.wait_ready(WAIT)
            ch.execute("1+1")  # warm
            chans[s.name] = (s, k["id"], ch)
        small = {n: [] for n in chans}
        for _ in range(CELL_N):
            for n, (_, _, ch) in chans.items():
                t0 = time.monotonic()
                r = ch.execute("1+1", timeout=60)
                small[n].append(time.monotonic() - t0)
                assert r.result() == "2", r.brief()
        print(f"2. cell round trip `1+1`, {CELL_N} cells (load {loadavg()})")
        for n, xs in small.items():
            print(f"   {n:8}: median {ms(statistics.median(xs))}, p99 {ms(pct(xs, 99))}")
        print(f"   ratio target/baseline: median {ratio(statistics.median(small['target']), statistics.median(small['baseline']))}, "
              f"p99 {ratio(pct(small['target'], 99), pct(small['baseline'], 99))}", flush=True)
        big = {n: [] for n in chans}
        got = {}
        for _ in range(BIG_N):
            for n, (_, _, ch) in chans.items():
                t0 = time.monotonic()
                r = ch.execute("print('x'*1000000)", timeout=120)
                big[n].append(time.monotonic() - t0)
                got[n] = len(r.stdout())
        print(f"3. cell round trip `print('x'*1000000)`, {BIG_N} cells (load {loadavg()})")
        for n, xs in big.items():
            print(f"   {n:8}: median {ms(statistics.median(xs))} ({got[n]} bytes of stdout received)")
        print(f"   ratio target/baseline: median {ratio(statistics.median(big['target']), statistics.median(big['baseline']))}",
              flush=True)

        # 4, 5: both kernels idle, a WebSocket open on each.
        cpu0 = {n: s.cpu_us(kid) for n, (s, kid, _) in chans.items()}
        t0 = time.monotonic()
        time.sleep(IDLE_S)
        wall = time.monotonic() - t0
        cpu1 = {n: s.cpu_us(kid) for n, (s, kid, _) in chans.items()}
        mem = {n: s.memory_kib(kid) for n, (s, kid, _) in chans.items()}
        print(f"4. idle memory per kernel after {IDLE_S:.0f} s idle (load {loadavg()})")
        for n in chans:
            m = mem[n]
            if m:
                print(f"   {n:8}: {m / 1024:.1f} MiB, {1024 * 1024 / m:.1f} kernels per GiB")
            else:
                print(f"   {n:8}: n/a (set BENCH_KERNEL_MEM_CMD)")
        print(f"   ratio target/baseline: {ratio(mem['target'] or float('nan'), mem['baseline'] or float('nan'))}")
        print(f"5. idle CPU per kernel over {wall:.1f} s")
        cpu = {}
        for n in chans:
            if cpu0[n] is not None and cpu1[n] is not None:
                cpu[n] = (cpu1[n] - cpu0[n]) / 1e6 / wall * 100
                print(f"   {n:8}: {cpu[n]:.2f} % of a core")
            else:
                cpu[n] = float("nan")
                print(f"   {n:8}: n/a (set BENCH_KERNEL_CPU_CMD)")
        print(f"   ratio target/baseline: {ratio(cpu['target'], cpu['baseline'])}", flush=True)
    finally:
        for s, kid, ch in chans.values():
            ch.close()
            try:
                s.s.request("DELETE", f"api/kernels/{kid}", expect=None)
            except Exception:  # noqa: BLE001
                pass


def main():
    target, target_dev = kclient.target_from_args(sys.argv[1:], __doc__)
    base_dev = kclient.DevServer(log_name="baseline.log").start()
    try:
        sides = [Side("target", target, target_dev is not None), Side("baseline", base_dev.server(), True)]
        print(f"# target {target.base}, baseline {base_dev.url} (plain jupyter_server, ipykernel on the host); "
              f"framing {FRAMING}; {os.cpu_count()} CPUs", flush=True)
        cold = os.environ.get("BENCH_KERNEL_COLD_CMD")
        if cold:
            fig_starts(sides, "1a. fresh sandbox:", cold)
            start_once(sides[0])
            gap = float(os.environ.get("BENCH_KERNEL_GAP_S", "8"))
            fig_starts(sides, f"1b. the target's way (Gavel: started ahead), {gap:g} s apart:", gap=gap)
            fig_starts(sides, "1c. the target's way, back to back:")
        else:
            fig_starts(sides)
        fig_cells(sides)
    finally:
        base_dev.stop()
        if target_dev:
            target_dev.stop()


if __name__ == "__main__":
    sys.exit(main())
