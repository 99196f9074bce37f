#!/usr/bin/python3
"""The adversarial suite's driver (started by tests/security/run.sh).

Each probe under tests/security/probes/ is a hostile program. The driver runs
it through the real CLI (`gavel run --json`, or for promises that span tests
`gavel judge --json` on the fixture problem made from tests/security/judge/),
exactly as a tenant's code would run, and checks the outcome: the expected status, no "ESCAPED" line, the
"DONE" line where the program should end normally, the run ending within its
limits plus slack, and host-side facts only the driver can see (no leftover
process, a TCP/Unix listener that nobody reached, canary files and
/etc/shadow unchanged, no secret marker or host environment value in any
output, host disk space unchanged).

Output is TAP: the plan first, then one "ok"/"not ok" line per probe with
"#" diagnostics under failures. Usage:

    run.sh                  every probe
    run.sh NAME|GLOB ...    only those (e.g. `run.sh sys_ptrace 'net*'`)
    run.sh --list           names and descriptions

Environment: BUILD (default build), GAVEL_SEC_BUDGET (seconds for the whole
suite, default 840: the test runner kills it at 900), GAVEL_SEC_KEEP=1 keeps
the temporary folder, GAVEL_SEC_VERBOSE=1 prints diagnostics for passes too.
"""
import ctypes
import fnmatch
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.dirname(HERE)
PROBES = os.path.join(SUITE, "probes")
ROOT = os.path.dirname(os.path.dirname(SUITE))
BUILD = os.environ.get("BUILD", "build")
GAVEL = os.path.join(ROOT, BUILD, "gavel") if not os.path.isabs(BUILD) else os.path.join(BUILD, "gavel")
BUDGET = float(os.environ.get("GAVEL_SEC_BUDGET", "840"))
SLACK = 10.0          # seconds a run may take beyond its limits
GRACE = 3.0           # seconds for sandbox processes to go after the CLI exits
SIGSYS = 31

# Language defaults (languages/*.yaml): wall seconds, compile wall seconds.
LANG_WALL = {".c": (5, 20), ".py": (5, 20), ".js": (5, 20), ".java": (10, 60)}

MB = 1 << 20


# ---------------------------------------------------------------- host side

class Listener:
    """A TCP listener on all addresses (IPv4 and IPv6) and an abstract Unix
    socket; counts every connection that reaches it."""

    def __init__(self):
        self.hits = []
        self.tcp = socket.create_server(("", 0), family=socket.AF_INET6, dualstack_ipv6=True)
        self.port = self.tcp.getsockname()[1]
        self.abstract = "gavel-secprobe-%s" % secrets.token_hex(6)
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract)
        self.unix.listen(8)
        for s in (self.tcp, self.unix):
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s):
        while True:
            try:
                c, addr = s.accept()
            except OSError:
                return
            self.hits.append(repr(addr) or "unix")
            c.close()


def host_ips():
    ips = []
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
        ips = [ip for ip in out.split() if ":" not in ip][:4]
    except (OSError, subprocess.SubprocessError):
        pass
    return ips


def set_subreaper():
    """Orphans of the CLI (sandbox processes it failed to reap or kill) are
    re-parented to us, so that we can see and count them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except OSError:
        return False


def proc_table():
    table = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                stat = f.read().decode(errors="replace")
            rest = stat[stat.rindex(")") + 2:].split()
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            table[int(d)] = (int(rest[1]), rest[0], cmd)
        except (OSError, ValueError, IndexError):
            continue
    return table


def descendants(root):
    table = proc_table()
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        for pid, (ppid, state, cmd) in table.items():
            if ppid == p and pid not in out:
                out[pid] = (state, cmd)
                todo.append(pid)
    return out


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def leftovers_after(grace):
    """Processes still below us `grace` seconds after the CLI exited; they
    are killed (they are what the run left behind) and reported."""
    deadline = time.monotonic() + grace
    while True:
        reap()
        live = {p: v for p, v in descendants(os.getpid()).items() if v[0] != "Z"}
        if not live or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    for pid in live:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.2)
    reap()
    return ["pid %d: %s" % (p, v[1][:120]) for p, v in sorted(live.items())]


def file_state(path):
    try:
        st = os.lstat(path)
        with open(path, "rb") as f:
            data = f.read()
        return (st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest()), data
    except OSError as e:
        return ("missing", str(e)), None


def dir_state(path):
    out = []
    for dp, dns, fns in os.walk(path):
        for n in sorted(fns):
            out.append((os.path.relpath(os.path.join(dp, n), path), file_state(os.path.join(dp, n))[0]))
        dns.sort()
    return out


class Host:
    """Host-side fixtures shared by every probe run."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="gavel-secprobe.")
        os.chmod(self.tmp, 0o755)
        self.token = "GAVEL-SECPROBE-" + secrets.token_hex(12)
        # Secret answers a sandbox must never see: in the driver's folder
        # and (per run) next to the submitted source.
        with open(os.path.join(self.tmp, "gavel-secprobe-secret.ans"), "w") as f:
            f.write(self.token + "\n")
        self.canary_dir = os.path.join(self.tmp, "canary")
        os.makedirs(os.path.join(self.canary_dir, "sub"))
        for rel in ("a", "sub/b"):
            with open(os.path.join(self.canary_dir, rel), "w") as f:
                f.write("canary %s %s\n" % (rel, secrets.token_hex(8)))
        self.canary_file = os.path.join(self.tmp, "canary-file")
        with open(self.canary_file, "w") as f:
            f.write("canary file %s\n" % secrets.token_hex(8))
        self.canary_before = (file_state(self.canary_file)[0], dir_state(self.canary_dir))
        self.shadow_before, self.shadow_data = file_state("/etc/shadow")
        self.shadow_secrets = []
        if self.shadow_data:
            for line in self.shadow_data.decode(errors="replace").splitlines():
                f = line.split(":")
                if len(f) > 1 and len(f[1]) >= 13:  # a real password hash
                    self.shadow_secrets.append(f[1])
        self.hostname = socket.gethostname()
        try:
            with open("/etc/machine-id") as f:
                self.machine_id = f.read().strip()
        except OSError:
            self.machine_id = ""
        self.listener = Listener()
        self.ips = host_ips()
        self.env = dict(os.environ)
        # Host secrets the sandbox must not inherit; their values carry the
        # token, which no output may contain.
        self.env.update({
            "SECPROBE_GAVEL_TOKEN": self.token,
            "DATABASE_URL": "postgres://secprobe:%s@127.0.0.1:1/gavel" % self.token,
            "REDIS_URL": "redis://:%s@127.0.0.1:1/0" % self.token,
            "PGPASSWORD": self.token,
            "AWS_SECRET_ACCESS_KEY": self.token,
        })
        self.subreaper = set_subreaper()

    def restore_shadow(self):
        """Called only if a probe run changed /etc/shadow: put it back."""
        if self.shadow_data is not None:
            with open("/etc/shadow", "wb") as f:
                f.write(self.shadow_data)

    def cleanup(self):
        if os.environ.get("GAVEL_SEC_KEEP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)


# ------------------------------------------------------------------ probes

class Probe:
    def __init__(self, name, src, promise, expect=("OK",), args=(), stdin=None, done=True,
                 blocked=False, checks=(), bound=None, judge=False):
        self.name, self.src, self.promise = name, src, promise
        self.expect, self.args, self.stdin = tuple(expect), list(args), stdin
        self.done, self.blocked, self.checks, self.bound_override = done, blocked, list(checks), bound
        # judge: run as a submission of the fixture problem (`gavel judge`,
        # JUDGE_TESTS tests in one sandbox, a validator that accepts a test
        # only if the probe printed DONE and no ESCAPED); expect is then
        # the judgement's verdict.
        self.judge = judge
        if judge and expect == ("OK",):
            self.expect = ("AC",)

    def ext(self):
        return ".java" if os.path.isdir(os.path.join(PROBES, self.src)) else os.path.splitext(self.src)[1]

    def bound(self):
        if self.bound_override:
            return self.bound_override
        if self.judge:
            # Two compiles (probe, validator), then every test at the
            # fixture's 4 s limit (wall at most a few times that).
            return 2 * 10 + JUDGE_TESTS * 8 + SLACK
        wall, compile_wall = LANG_WALL[self.ext()]
        if "--wall" in self.args:
            wall = float(self.args[self.args.index("--wall") + 1])
        # Compiles of these small probes take seconds; the compile wall
        # limit is the ceiling for compiler attacks, which set `bound`.
        compile_allow = 30 if self.ext() == ".java" else 10
        return wall + compile_allow + SLACK


# Checks: functions (host, result, outputs) -> list of failure strings.

def c_stdout_is(text):
    def check(host, res, out):
        return [] if res.get("stdout") == text else ["stdout is %r, expected %r" % (res.get("stdout", "")[:80], text)]
    return check


def c_env_only_path_lang_home(host, res, out):
    names = [l[4:].split("=", 1)[0] for l in res.get("stdout", "").splitlines() if l.startswith("ENV ")]
    extra = [n for n in names if n not in ("PATH", "LANG", "HOME")]
    fails = ["environment has variables beyond PATH/LANG/HOME: %s" % extra] if extra else []
    if "PATH" not in names:
        fails.append("environment lacks PATH (names: %s)" % names)
    return fails


def c_host_identity(host, res, out):
    fails = []
    for line in res.get("stdout", "").splitlines():
        tag, _, value = line.partition(" ")
        if tag in ("HOSTNAME", "ETC_HOSTNAME") and value.strip() == host.hostname:
            fails.append("%s is the host's (%s)" % (tag, value))
        if tag in ("MACHINE_ID", "DBUS_MACHINE_ID") and host.machine_id and value.strip() == host.machine_id:
            fails.append("%s is the host's" % tag)
        if tag == "MOUNT":
            for leak in (ROOT, host.tmp, "/var/lib/postgresql", "/run/gavel"):
                if leak in value:
                    fails.append("mount table reveals host path %s: %s" % (leak, value[:160]))
    return fails


def c_listener_untouched(host, res, out):
    return ["the host listener was reached: %s" % host.listener.hits] if host.listener.hits else []


def c_cpu_near(limit_s):
    def check(host, res, out):
        t = res.get("time_ms")
        if not isinstance(t, int):
            return ["time_ms missing"]
        # A spin's TLE comes from the host's backstop at 2 x limit + 200 ms
        # (executor/sandbox/cputime.h: a tighter one turns memory-heavy
        # programs' MLE into TLE), which reports that much CPU; a limit that
        # does not bind shows far more (up to the wall limit).
        lo, hi = int(limit_s * 900), int(limit_s * 2000 + 400)
        return [] if lo <= t <= hi else ["time_ms %d not near the %g s limit (%d..%d)" % (t, limit_s, lo, hi)]
    return check


def c_cpu_at_least(limit_s):
    def check(host, res, out):
        t = res.get("time_ms")
        return [] if isinstance(t, int) and t >= limit_s * 900 else ["time_ms %r below the %g s limit" % (t, limit_s)]
    return check


def c_wall_between(lo_s, hi_s):
    def check(host, res, out):
        w = res.get("wall_ms")
        if not isinstance(w, int):
            return ["wall_ms missing"]
        return [] if lo_s * 1000 <= w <= hi_s * 1000 else ["wall_ms %d outside %g..%g s" % (w, lo_s, hi_s)]
    return check


def c_len_at_most(field, limit):
    def check(host, res, out):
        n = len((res.get(field) or "").encode("utf-8", "surrogatepass"))
        return [] if n <= limit else ["%s is %d bytes, above the %d cap" % (field, n, limit)]
    return check


def c_memory_near(limit_mb):
    def check(host, res, out):
        m = res.get("memory_kb")
        if not isinstance(m, int):
            return ["memory_kb missing"]
        return [] if m <= limit_mb * 1024 * 1.5 + 16 * 1024 else ["memory_kb %d far above the %d MB limit" % (m, limit_mb)]
    return check


def c_exit_code(code):
    def check(host, res, out):
        return [] if res.get("exit_code") == code else ["exit_code %r, expected %d" % (res.get("exit_code"), code)]
    return check


def c_stdout_has(text):
    def check(host, res, out):
        return [] if text in (res.get("stdout") or "") else ["stdout lacks %r" % text]
    return check


def c_stdout_lacks(text):
    def check(host, res, out):
        return ["stdout holds %r: the forgery was believed" % text] if text in (res.get("stdout") or "") else []
    return check


EVIDENCE_INIT_RE = re.compile(r"EVIDENCE init (\d+) boot (-?\d+) state (\S)")


def c_same_init(host, res, out):
    """Judged kill_init: every test reports init's start time and the
    sandbox's boot instant (validator message); all must be the same init
    of the same sandbox (boot instants within 50 ms: two reads of two
    clocks), so the signals of one test did not end the init that ran the
    next. A replaced sandbox boots later: its instant differs by far more."""
    seen = []
    for t in res.get("tests") or []:
        m = EVIDENCE_INIT_RE.search(t.get("message") or "")
        if not m:
            return ["test %s carries no init evidence (message %r)" % (t.get("name"), (t.get("message") or "")[:120])]
        seen.append((t.get("name"), int(m.group(1)), int(m.group(2))))
    if len(seen) != JUDGE_TESTS:
        return ["init evidence from %d tests, expected %d" % (len(seen), JUDGE_TESTS)]
    starts = {s[1] for s in seen}
    boots = [s[2] for s in seen]
    if len(starts) != 1 or max(boots) - min(boots) > 50:
        return ["not the same gavel-init in every test (name, start ticks, boot ms): %s" % seen]
    return []


EVIDENCE_STATE_RE = re.compile(r"EVIDENCE test (\d+) planted (\d+) things")


def c_state_planted(host, res, out):
    """Judged state probe: test k says it is test k and planted something
    (a probe that planted nothing would find nothing in the next test)."""
    tests = res.get("tests") or []
    for k, t in enumerate(tests, 1):
        m = EVIDENCE_STATE_RE.search(t.get("message") or "")
        if not m or int(m.group(1)) != k or int(m.group(2)) == 0:
            return ["test %s: no evidence that test %d planted anything (message %r)"
                    % (t.get("name"), k, (t.get("message") or "")[:120])]
    return []


EVIDENCE_TEMPLATE_RE = re.compile(r"EVIDENCE test (\d+) planted (\d+) template (\d+)")


def c_template_planted(host, res, out):
    """Judged py_template: test k says it is test k, planted something, and
    ran forked from a fork server's template (its parent, running the
    stub), the same one in every test: without one the probe proves
    nothing."""
    tests = res.get("tests") or []
    templates = set()
    for k, t in enumerate(tests, 1):
        m = EVIDENCE_TEMPLATE_RE.search(t.get("message") or "")
        if not m or int(m.group(1)) != k or int(m.group(2)) == 0 or int(m.group(3)) == 0:
            return ["test %s: no evidence that test %d planted anything from a fork server's template (message %r)"
                    % (t.get("name"), k, (t.get("message") or "")[:120])]
        templates.add(int(m.group(3)))
    if len(tests) != JUDGE_TESTS or len(templates) != 1:
        return ["%d tests from templates %s: expected %d tests from one" % (len(tests), sorted(templates), JUDGE_TESTS)]
    return []


def c_no_shadow_in_output(host, res, out):
    if any(h in out for h in host.shadow_secrets):
        return ["a host /etc/shadow password hash appears in the output"]
    return []


# Where `gavel run` / `gavel judge` put each sandbox's work dir, the host
# folder bound at /box (cli/local_engine.c CLI_STATE_DIR "/work";
# executor/sandbox/session.c: <work_root>/<sandbox id>/box).
WORK_ROOT = "/run/gavel/cli/work"


def tree_bytes(path):
    """Bytes allocated under path (st_blocks, links not followed); 0 if it
    is missing. Files vanish while we walk: those are skipped."""
    total = 0
    for dp, dns, fns in os.walk(path):
        for n in fns + dns:
            try:
                total += os.lstat(os.path.join(dp, n)).st_blocks * 512
            except OSError:
                pass
    return total


def existing_ancestor(path):
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


class DiskWatch:
    """Host disk while the probe runs, sampled every 0.1 s: free space on
    /, /tmp, the checkout and the file system holding the CLI's work root,
    and the bytes allocated under the work root itself, where every
    sandbox's /box lives on the host. The check fails if free space ever
    dropped, or the work root grew, by more than 256 MiB, and also if no
    sandbox folder ever appeared under the work root during the run: then
    the watch was not looking where /box lives."""

    LIMIT = 256 * MB

    def __init__(self):
        self.before, self.lowest, self.stop = {}, {}, None
        self.tree_before = self.tree_peak = 0
        self.sandboxes_seen = set()

    def paths(self):
        return ("/", "/tmp", ROOT, existing_ancestor(WORK_ROOT))

    def sample(self):
        for p in self.paths():
            free = shutil.disk_usage(p).free
            self.lowest[p] = min(self.lowest.get(p, free), free)
        try:
            self.sandboxes_seen.update(os.listdir(WORK_ROOT))
        except OSError:
            pass
        self.tree_peak = max(self.tree_peak, tree_bytes(WORK_ROOT))

    def pre(self, host):
        self.before = {p: shutil.disk_usage(p).free for p in self.paths()}
        self.lowest = dict(self.before)
        self.tree_before = self.tree_peak = tree_bytes(WORK_ROOT)
        try:
            self.existing = set(os.listdir(WORK_ROOT))
        except OSError:
            self.existing = set()
        self.sandboxes_seen = set()
        self.stop = threading.Event()

        def loop():
            while not self.stop.wait(0.1):
                self.sample()
        threading.Thread(target=loop, daemon=True).start()

    def check(self, host, res, out):
        if self.stop:
            self.stop.set()
        self.sample()
        fails = []
        for p, free in self.before.items():
            drop = free - self.lowest.get(p, free)
            if drop > self.LIMIT:
                fails.append("host free space on %s dropped by %d MiB during the run" % (p, drop // MB))
        grew = self.tree_peak - self.tree_before
        if grew > self.LIMIT:
            fails.append("the work root %s (where /box lives) grew by %d MiB during the run" % (WORK_ROOT, grew // MB))
        if not (self.sandboxes_seen - self.existing):
            fails.append("no sandbox folder appeared under %s during the run: the disk watch did not see where "
                         "/box lives" % WORK_ROOT)
        return fails


def stdin_net(host):
    s = "PORT %d\nABSTRACT %s\n" % (host.listener.port, host.listener.abstract)
    return s + "".join("HOSTIP %s\n" % ip for ip in host.ips)


def stdin_paths(host):
    return "REPO %s\nTMPDIR %s\n" % (ROOT, host.tmp)


def stdin_canary(host):
    return "CANARY_FILE %s\nCANARY_DIR %s\n" % (host.canary_file, host.canary_dir)


SYSCALL_GROUPS = [
    ("ptrace", "ptrace: PTRACE_TRACEME, attach/seize pid 1, process_vm_readv, pidfd_getfd"),
    ("mount", "mount family: tmpfs, bind, remount / and /usr, proc, fsopen, open_tree"),
    ("umount", "umount2 of /box, /tmp, /proc, /usr, /etc"),
    ("unshare", "unshare of user, mount, net, pid, uts, ipc, cgroup namespaces"),
    ("setns", "setns into pid 1's or own namespaces"),
    ("clone_ns", "clone() with CLONE_NEWPID / NEWUSER / NEWNET / NEWNS"),
    ("clone3", "clone3() with namespace flags (a filter cannot see its flags)"),
    ("setuid", "setuid/setresuid/setgid/setgroups/setfsuid to 0, capset, ambient caps"),
    ("mknod", "mknod of char devices 1:3 and 1:1 and block device 8:0"),
    ("modules", "init_module, finit_module, delete_module"),
    ("kexec", "kexec_load, kexec_file_load"),
    ("reboot", "reboot(CAD_OFF)"),
    ("swapon", "swapon/swapoff"),
    ("ioperm", "iopl(3), ioperm"),
    ("chroot", "chroot(/tmp), chroot(/)"),
    ("pivot_root", "pivot_root"),
    ("bpf", "bpf map create and program load"),
    ("io_uring", "io_uring_setup"),
    ("keyctl", "add_key, keyctl, request_key"),
    ("userfaultfd", "userfaultfd(), /dev/userfaultfd"),
    ("perf_event", "perf_event_open, software and hardware"),
    ("int80", "i386 ABI via int $0x80: getuid32, getuid, unshare, exit"),
    ("x32", "x32 ABI (nr | 0x40000000): getuid, getpid, unshare"),
    ("open_by_handle", "open_by_handle_at (the 'shocker' escape)"),
    ("privileged_misc", "clock_settime, sethostname, acct, fanotify, NNP off, vhangup, quotactl"),
]

disk_watch = DiskWatch()


def make_probes():
    P = []
    add = P.append
    add(Probe("hello", "hello.c", "baseline: a plain program runs and is OK", checks=[c_stdout_is("hello\n")], done=False))
    add(Probe("identity", "identity.c", "non-root uid/gid, no capabilities, no_new_privs, seccomp filter, own pid namespace"))
    add(Probe("env", "env.c", "environment is only PATH, LANG, HOME; no host secrets (the CLI was given some)",
              checks=[c_env_only_path_lang_home]))
    add(Probe("host_files", "host_files.c", "no host files: shadow, homes, /work, PostgreSQL/Redis data, host /etc, identity",
              stdin=stdin_paths, checks=[c_host_identity]))
    add(Probe("answers", "answers.c", "no answers or other tests' data visible anywhere (marker search)",
              args=["--time", "8", "--wall", "20"]))
    add(Probe("answers_judge", "answers.c", "judged on a problem of 4 tests whose answers are the marker: "
              "no answer and no other test's input visible in any test", judge=True))
    add(Probe("fds", "fds.c", "only fds 0-2 inherited, none a terminal (TIOCSTI)"))
    add(Probe("net", "net.c", "no network: host listener, metadata, public addresses, host Unix sockets unreachable",
              args=["--wall", "15"], stdin=stdin_net, checks=[c_listener_untouched]))
    add(Probe("raw_sockets", "raw_sockets.c", "no raw/packet/netlink/vsock/alg sockets"))
    for g, what in SYSCALL_GROUPS:
        add(Probe("sys_" + g, "syscalls.c", "denied syscalls: " + what, stdin="GROUP %s\n" % g, blocked=True))
    add(Probe("write_ro", "write_ro.c", "root, /usr, /etc, /pch read-only", blocked=True))
    add(Probe("chmod_chown", "chmod_chown.c", "no chown/chmod of others' files or to root", blocked=True))
    add(Probe("chmod_own", "chmod_own.c", "an ordinary run cannot chmod, rename, link or re-time even its own files "
              "(only a Jobe run's toolchains may)", blocked=True))
    add(Probe("proc_init", "proc_init.c", "gavel-init's /proc entries and host-wide /proc, /sys knobs out of reach", blocked=True))
    add(Probe("dev_files", "dev_files.c", "no host devices: /dev/mem, kmsg, tty, disks, kvm; no /sys/firmware; no syslog", blocked=True))
    add(Probe("forge_init_pipe", "forge_init_pipe.c",
              "the program cannot write into gavel-init's result pipe: a forged OK result is not believed",
              expect=("RE",), done=False, checks=[c_exit_code(3), c_stdout_lacks("FORGED-BY-PROGRAM")]))
    add(Probe("kill_init", "kill_init.c", "signals to gavel-init change nothing: the run still reports OK",
              checks=[c_stdout_has("EVIDENCE init ")]))
    add(Probe("state_judge", "state.c", "judged (4 tests, one sandbox): files in every writable dir, System V and "
              "POSIX IPC objects planted by one test are gone in the next", judge=True, checks=[c_state_planted]))
    add(Probe("py_template_judge", "py_template.py", "judged (4 tests, one sandbox): Python tests forked from one "
              "template: a module, fd, environment variable, signal disposition, cwd, umask or /tmp file planted by "
              "one test is gone in the next; the template (uid 0) is out of reach", judge=True,
              checks=[c_template_planted]))
    add(Probe("kill_init_judge", "kill_init.c", "judged (4 tests, one sandbox): after every test's signals to gavel-init, "
              "the next test runs under the same init in the same sandbox", judge=True, checks=[c_same_init]))
    add(Probe("box_artifacts", "box_artifacts.c", "the compiled program and job record cannot be changed for later tests"))
    add(Probe("symlinks", "symlinks.c", "links/FIFOs/sparse files planted in the work dir are never followed by the host",
              stdin=stdin_canary))
    add(Probe("rlimits", "rlimits.c", "finite rlimits that the program cannot raise", blocked=True))
    add(Probe("forge_frames", "forge_frames.c", "program output is data, never protocol: forged frames do not change the verdict",
              expect=("RE",), done=False, checks=[c_exit_code(3), c_stdout_has("result 71\nphase:test\n")]))
    add(Probe("daemon", "daemon.c", "processes left behind do not outlive the run", args=["--wall", "10"]))
    add(Probe("fork_exit", "fork_exit.c", "process limit is finite; run ends when the program does; sleepers killed",
              args=["--wall", "10"], checks=[c_wall_between(0, 5)]))
    add(Probe("fork_bomb", "fork_bomb.c", "a fork bomb is contained: TLE, nothing left, next run works",
              expect=("TLE",), done=False, args=["--time", "2", "--wall", "6"]))
    add(Probe("hello_after_fork_bomb", "hello.c", "the engine still works after a fork bomb",
              checks=[c_stdout_is("hello\n")], done=False))
    add(Probe("mem_bomb", "mem_bomb.c", "a memory bomb ends MLE near the limit",
              expect=("MLE",), done=False, args=["--memory", "64", "--wall", "10"], checks=[c_memory_near(64)]))
    add(Probe("mem_bomb_py", "mem_bomb.py", "a Python memory bomb ends MLE",
              expect=("MLE",), done=False, args=["--memory", "64", "--wall", "10"], checks=[c_memory_near(64)]))
    add(Probe("disk_fill", "disk_fill.c", "/tmp and the work dir stop at a size limit; host disk unaffected",
              expect=("OK", "RE", "OLE", "MLE"), done=False, args=["--memory", "256", "--time", "10", "--wall", "30"],
              checks=[disk_watch.check]))
    add(Probe("stdout_flood", "stdout_flood.c", "an endless stdout ends OLE, capped, well before the wall limit",
              expect=("OLE",), done=False, args=["--wall", "20"],
              checks=[c_len_at_most("stdout", 64 * MB + 4096), c_wall_between(0, 19)]))
    add(Probe("stderr_flood", "stderr_flood.c", "an endless stderr ends (OLE or TLE) with stderr capped",
              expect=("OLE", "TLE"), done=False, args=["--time", "2", "--wall", "10"],
              checks=[c_len_at_most("stderr", 64 * MB + 4096)]))
    add(Probe("sleep_wall", "sleep_wall.c", "sleeping past the time limit ends TLE once idle for the time limit",
              expect=("TLE",), done=False, args=["--time", "1", "--wall", "2"], checks=[c_wall_between(0.9, 1.9)]))
    add(Probe("cpu_spin", "cpu_spin.c", "a CPU spin ignoring SIGXCPU ends TLE with CPU time near the limit",
              expect=("TLE",), done=False, args=["--time", "1", "--wall", "10"], checks=[c_cpu_near(1)]))
    add(Probe("cpu_threads", "cpu_threads.c", "CPU time counts every thread: TLE",
              expect=("TLE", "RE"), done=False, args=["--time", "1", "--wall", "10"]))
    add(Probe("tree_cpu", "tree_limits.js", "children's CPU time counts: spinning children end the run TLE",
              expect=("TLE",), done=False, stdin="GROUP cpu\n", args=["--time", "1", "--wall", "10"],
              checks=[c_cpu_near(1), c_wall_between(0, 5)]))
    add(Probe("tree_mem", "tree_limits.js", "children's memory counts: two 200 MiB children under 256 MiB end MLE",
              expect=("MLE",), done=False, stdin="GROUP mem\n", args=["--time", "10", "--memory", "256", "--wall", "20"]))
    add(Probe("tree_cpu_spread", "tree_limits.js", "CPU spread over six children, each under the limit: TLE near it",
              expect=("TLE",), done=False, stdin="GROUP cpu_spread\n", args=["--time", "1", "--wall", "10"],
              checks=[c_cpu_near(1), c_wall_between(0, 5)]))
    add(Probe("tree_cpu_churn", "tree_limits.js", "CPU of short-lived, already reaped children counts: TLE near the limit",
              expect=("TLE",), done=False, stdin="GROUP cpu_churn\n", args=["--time", "1", "--wall", "10"],
              checks=[c_cpu_near(1), c_wall_between(0, 5)]))
    add(Probe("tree_mem_spread", "tree_limits.js", "memory spread over eight 48 MiB children under 256 MiB: MLE near the limit",
              expect=("MLE",), done=False, stdin="GROUP mem_spread\n", args=["--time", "10", "--memory", "256", "--wall", "20"],
              checks=[c_memory_near(256)]))
    add(Probe("hello_after_resources", "hello.c", "the engine still works after the resource attacks",
              checks=[c_stdout_is("hello\n")], done=False))
    add(Probe("cc_include_zero", "cc_include_zero.c", "#include \"/dev/zero\" ends CE within the compile limits",
              expect=("CE",), done=False, bound=20 + SLACK + 10))
    add(Probe("cc_include_random", "cc_include_random.c", "#include \"/dev/random\" ends CE within the compile limits",
              expect=("CE",), done=False, bound=20 + SLACK + 10))
    add(Probe("cc_include_shadow", "cc_include_shadow.c", "#include \"/etc/shadow\" is CE and shows no host secret",
              expect=("CE",), done=False, bound=20 + SLACK + 10, checks=[c_no_shadow_in_output]))
    add(Probe("cc_big_object", "cc_big_object.c", "a 1 GiB object file fails the compile (CE) without filling the host",
              expect=("CE",), done=False, bound=20 + SLACK + 10, checks=[disk_watch.check]))
    add(Probe("py_escape", "py_escape.py", "Python: clean env, no host files, no network, no ctypes privileges, confined shell",
              stdin=stdin_net, checks=[c_listener_untouched]))
    add(Probe("java_escape", "java_escape", "Java: clean env, no host files, no network, confined subprocess",
              stdin=stdin_net, args=["--time", "5", "--wall", "20"], checks=[c_listener_untouched]))
    add(Probe("hello_final", "hello.c", "the engine still works at the end of the suite",
              checks=[c_stdout_is("hello\n")], done=False))
    return P


# ------------------------------------------------------------------ running

def prepare_source(probe, rundir):
    """The submitted file: probe.h inlined (a submission is one file), next
    to secret answer files a leaky sandbox would expose."""
    src = os.path.join(PROBES, probe.src)
    if os.path.isdir(src):  # Java: the folder holds Main.java
        dst = os.path.join(rundir, "Main.java")
        shutil.copyfile(os.path.join(src, "Main.java"), dst)
    else:
        with open(src, encoding="utf-8") as f:
            text = f.read()
        if '#include "probe.h"' in text:
            with open(os.path.join(PROBES, "probe.h"), encoding="utf-8") as f:
                text = text.replace('#include "probe.h"', f.read(), 1)
        dst = os.path.join(rundir, "probe-" + probe.name + os.path.splitext(probe.src)[1])
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
    return dst


JUDGE_FIXTURE = os.path.join(SUITE, "judge")
JUDGE_TESTS = 4
JUDGE_NAMES = ["sample/1"] + ["secret/%02d" % i for i in range(1, JUDGE_TESTS)]


def make_problem(host, rundir, stdin_text):
    """The fixture problem for one judged probe run, in rundir/problem:
    tests/security/judge/ (problem.yaml, the validator) and JUDGE_TESTS
    tests. Input k is "TEST k", "INPUT <its own random marker>" and the
    probe's stdin lines; every answer is the suite's secret marker, which
    the probe must never find, nor another test's input marker."""
    pdir = os.path.join(rundir, "problem")
    shutil.rmtree(pdir, ignore_errors=True)
    shutil.copytree(JUDGE_FIXTURE, pdir)
    for k, name in enumerate(JUDGE_NAMES, 1):
        base = os.path.join(pdir, "data", name)
        os.makedirs(os.path.dirname(base), exist_ok=True)
        with open(base + ".in", "w") as f:
            f.write("TEST %d\nINPUT GAVEL-SECIN-%s\n%s" % (k, secrets.token_hex(12), stdin_text))
        with open(base + ".ans", "w") as f:
            f.write(host.token + "\n")
    return pdir


def run_gavel(host, probe, rundir, stdin_text, timeout):
    """One `gavel run --json`. Returns a dict: rc, elapsed, timed_out,
    result (parsed JSON or None), raw stdout/stderr, leftovers."""
    source = prepare_source(probe, rundir)
    for name in ("secret.ans", "gavel-secprobe-expected.out"):
        with open(os.path.join(rundir, name), "w") as f:
            f.write(host.token + "\n")
    if probe.judge:
        cmd = [GAVEL, "judge", "--json", make_problem(host, rundir, stdin_text), source]
    else:
        stdin_path = os.path.join(rundir, "stdin.txt")
        with open(stdin_path, "w") as f:
            f.write(stdin_text)
        cmd = [GAVEL, "run", "--json"] + probe.args + ["--stdin", stdin_path, source]
    t0 = time.monotonic()
    timed_out = False
    try:
        p = subprocess.Popen(cmd, cwd=rundir, env=host.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return {"rc": None, "elapsed": 0, "timed_out": False, "result": None, "stdout": b"",
                "stderr": str(e).encode(), "leftovers": [], "cmd": cmd}
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except OSError:
                pass
            try:
                out, err = p.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            out, err = b"", b""
    elapsed = time.monotonic() - t0
    leftovers = leftovers_after(GRACE)
    result = None
    try:
        result = json.loads(out.decode("utf-8", "surrogateescape"))
        if not isinstance(result, dict):
            result = None
    except ValueError:
        result = None
    return {"rc": p.returncode, "elapsed": elapsed, "timed_out": timed_out, "result": result,
            "stdout": out, "stderr": err, "leftovers": leftovers, "cmd": cmd}


TRY_RE = re.compile(r"^TRY (\d+) (.*)$")


def host_facts(host, fails):
    """Host-side facts checked after every probe, whatever its mode."""
    if host.listener.hits:
        fails.append("the host listener was reached: %s" % host.listener.hits)
        host.listener.hits.clear()
    now = (file_state(host.canary_file)[0], dir_state(host.canary_dir))
    if now != host.canary_before:
        fails.append("host canary files changed: %s" % (now,))
    shadow_now = file_state("/etc/shadow")[0]
    if shadow_now != host.shadow_before:
        fails.append("HOST /etc/shadow CHANGED during this probe (restored from the driver's copy)")
        host.restore_shadow()
        host.shadow_before = file_state("/etc/shadow")[0]


def judged_outcome(host, probe, run, fails, diag):
    """Checks of a `gavel judge --json` run: the verdict, every test there
    and (for an expected AC) accepted by the validator, no ESCAPED and no
    secret marker anywhere in what the CLI printed."""
    res = run["result"]
    text = (run["stdout"] + b"\n" + run["stderr"]).decode("utf-8", "replace")
    if host.token in text:
        fails.append("the secret answer marker appears in the judge's output")
    if "ESCAPED" in text:
        esc = [l for l in text.splitlines() if "ESCAPED" in l]
        fails.append("escape: " + " | ".join(esc[:4]))
    if res is None:
        fails.append("no JSON result from gavel judge")
        diag.append("gavel stdout: %r" % run["stdout"][:300])
        diag.append("gavel stderr: %r" % run["stderr"][-600:])
        return
    verdict = res.get("verdict")
    tests = res.get("tests") or []
    if verdict not in probe.expect:
        fails.append("verdict %s, expected %s (message: %s)" % (verdict, "/".join(probe.expect),
                                                                (res.get("message") or "")[:200]))
    names = [t.get("name") for t in tests]
    if names != JUDGE_NAMES:
        fails.append("tests judged %s, expected %s" % (names, JUDGE_NAMES))
    if probe.expect == ("AC",):
        for t in tests:
            if t.get("verdict") != "AC":
                fails.append("test %s: %s (%s)" % (t.get("name"), t.get("verdict"), (t.get("message") or "")[:200]))
    for check in probe.checks:
        fails.extend(check(host, res, text))
    diag.append("verdict %s; compile output %r" % (verdict, (res.get("compile_output") or "")[:300]))
    for t in tests:
        diag.append("test %s: %s time_ms %s memory_kb %s message %r" % (t.get("name"), t.get("verdict"),
                    t.get("time_ms"), t.get("memory_kb"), (t.get("message") or "")[:250]))


def judge_probe(host, probe, deadline):
    """Runs a probe (re-running past attempts that seccomp killed) and
    returns (ok, summary, diagnostics)."""
    rundir = tempfile.mkdtemp(prefix=probe.name + ".", dir=host.tmp)
    os.chmod(rundir, 0o755)
    base_stdin = probe.stdin(host) if callable(probe.stdin) else (probe.stdin or "")
    fails, diag = [], []
    killed_attempts = []
    skip = 0
    if any(c == disk_watch.check for c in probe.checks):
        disk_watch.pre(host)
    if probe.judge:
        run = run_gavel(host, probe, rundir, base_stdin, probe.bound())
        diag.append("judge: %.1fs, gavel exit %s%s" % (run["elapsed"], run["rc"],
                                                       ", TIMED OUT" if run["timed_out"] else ""))
        if run["timed_out"]:
            fails.append("gavel judge did not finish within %.0f s: host not responsive" % probe.bound())
        if run["leftovers"]:
            fails.append("processes outlived the judgement (killed by the driver): %s" % run["leftovers"])
        judged_outcome(host, probe, run, fails, diag)
        host_facts(host, fails)
        shutil.rmtree(rundir, ignore_errors=True)
        return dedup(fails, diag)
    for round_ in range(60):
        if time.monotonic() > deadline:
            return False, "suite time budget exhausted during this probe", diag
        stdin_text = base_stdin + ("SKIP %d\n" % skip if skip else "")
        run = run_gavel(host, probe, rundir, stdin_text, probe.bound())
        res = run["result"]
        diag.append("run %d: %.1fs, gavel exit %s%s" % (round_ + 1, run["elapsed"], run["rc"],
                                                        ", TIMED OUT" if run["timed_out"] else ""))
        if run["timed_out"]:
            fails.append("gavel did not finish within %.0f s (limits + %.0f s slack): host not responsive"
                         % (probe.bound(), SLACK))
        if run["leftovers"]:
            fails.append("processes outlived the run (killed by the driver): %s" % run["leftovers"])
        if res is None:
            fails.append("no JSON result from gavel")
            diag.append("gavel stdout: %r" % run["stdout"][:300])
            diag.append("gavel stderr: %r" % run["stderr"][-600:])
            break
        out_text = "\n".join(str(res.get(k) or "") for k in ("stdout", "stderr", "compile_output", "message"))
        status = res.get("status")
        lines = (res.get("stdout") or "").splitlines()
        # A seccomp kill right after "TRY k": that attempt was blocked; run
        # again from attempt k+1 so that the rest of the probe runs too.
        tries = [TRY_RE.match(l) for l in lines]
        last_try = next((m for m in reversed(tries) if m), None)
        last_line = lines[-1] if lines else ""
        if (status == "RE" and res.get("signal") == SIGSYS and last_try and TRY_RE.match(last_line)
                and "DONE" not in lines[-1]):
            killed_attempts.append("BLOCKED %s (killed by SIGSYS)" % last_try.group(2))
            skip = int(last_try.group(1)) + 1
            for l in lines:
                if l.startswith("ESCAPED"):
                    fails.append(l)
            continue
        if status not in probe.expect:
            fails.append("status %s, expected %s (message: %s)" % (status, "/".join(probe.expect),
                                                                  (res.get("message") or "")[:200]))
            if last_try and TRY_RE.match(last_line):
                fails.append("the program ended (exit %s, signal %s) right after trying %s"
                             % (res.get("exit_code"), res.get("signal"), last_try.group(2)))
        if "ESCAPED" in out_text:
            esc = [l for l in out_text.splitlines() if "ESCAPED" in l]
            fails.append("escape: " + " | ".join(esc[:6]))
        if host.token in out_text:
            fails.append("the host's secret marker / environment value appears in the output")
        if probe.done and not any(l.startswith("DONE") for l in lines):
            fails.append("the probe did not run to its end (no DONE line)")
        if probe.blocked and not killed_attempts and not any(l.startswith("BLOCKED") for l in lines):
            fails.append("no attack was even attempted (no BLOCKED line)")
        for check in probe.checks:
            fails.extend(check(host, res, out_text))
        diag.append("status %s exit_code %s signal %s time_ms %s wall_ms %s memory_kb %s message %r"
                    % (status, res.get("exit_code"), res.get("signal"), res.get("time_ms"), res.get("wall_ms"),
                       res.get("memory_kb"), (res.get("message") or "")[:120]))
        for k in ("stdout", "stderr", "compile_output"):
            v = res.get(k) or ""
            if v:
                diag.append("%s (%d bytes): %r" % (k, len(v), v[:1500] if k == "stdout" else v[:600]))
        break
    else:
        fails.append("too many seccomp-killed re-runs")
    diag.extend(killed_attempts)
    host_facts(host, fails)
    shutil.rmtree(rundir, ignore_errors=True)
    return dedup(fails, diag)


def dedup(fails, diag):
    """(ok, summary, diagnostics) with repeated failures said once."""
    seen, uniq = set(), []
    for f in fails:
        if f not in seen:
            seen.add(f)
            uniq.append(f)
    return not uniq, "; ".join(uniq), diag


def main(argv):
    probes = make_probes()
    if argv and argv[0] in ("--list", "-l"):
        for p in probes:
            print("%-24s %s" % (p.name, p.promise))
        return 0
    if argv:
        chosen = [p for p in probes if any(fnmatch.fnmatchcase(p.name, a) for a in argv)]
        unknown = [a for a in argv if not any(fnmatch.fnmatchcase(p.name, a) for p in probes)]
        if unknown:
            print("unknown probe(s): %s (see --list)" % " ".join(unknown), file=sys.stderr)
            return 2
        probes = chosen
    print("1..%d" % len(probes), flush=True)
    if not (os.path.isfile(GAVEL) and os.access(GAVEL, os.X_OK)):
        for i, p in enumerate(probes, 1):
            print("not ok %d - %s: %s missing (the suite cannot run without the CLI)" % (i, p.name, GAVEL))
        return 1
    host = Host()
    if not host.subreaper:
        print("# warning: PR_SET_CHILD_SUBREAPER failed: leftover processes may go unnoticed")
    start = time.monotonic()
    deadline = start + BUDGET
    failed = 0
    try:
        for i, p in enumerate(probes, 1):
            if time.monotonic() > deadline:
                print("not ok %d - %s: suite time budget (%.0f s) exhausted before this probe" % (i, p.name, BUDGET))
                failed += 1
                continue
            t0 = time.monotonic()
            ok, summary, diag = judge_probe(host, p, deadline)
            took = time.monotonic() - t0
            if ok:
                print("ok %d - %s (%.1fs)" % (i, p.name, took), flush=True)
                if os.environ.get("GAVEL_SEC_VERBOSE") == "1":
                    for d in diag:
                        for line in d.splitlines() or [""]:
                            print("#   " + line[:4000])
            else:
                failed += 1
                print("not ok %d - %s: %s" % (i, p.name, summary[:600]), flush=True)
                print("#   promise: %s" % p.promise)
                for d in diag:
                    for line in d.splitlines() or [""]:
                        print("#   " + line[:2000])
                sys.stdout.flush()
    finally:
        host.cleanup()
    print("# %d of %d probes failed, %.0f s" % (failed, len(probes), time.monotonic() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
