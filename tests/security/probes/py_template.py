# py_template — a Python test's process is forked from a template
# interpreter started once per submission (executor/init/forkserver.c):
# nothing a test does to its own interpreter may reach the next test, and
# the template itself must be out of the test's reach. Judged (the
# fixture under tests/security/judge/ runs it as a submission: 4 tests,
# one sandbox), every test first looks for what earlier tests planted,
# then plants it again for the tests after it:
#   - a module in sys.modules, an attribute on a module and on builtins
#     (the module cache the template shares with every fork), sys.path and
#     sys.argv entries, the recursion limit, the garbage collector off;
#   - an environment variable (os.environ and putenv);
#   - an inheritable open fd;
#   - signal dispositions (SIGUSR1 ignored, a SIGTERM handler) and a
#     blocked signal;
#   - the working directory and the umask;
#   - a file in /tmp;
# it checks its own capability sets (all empty), no_new_privs and seccomp
# mode, and it attacks the template (its parent, uid 0): signals, its /proc
# mem, its pipes to init through /proc/<pid>/fd, its cwd and root. Anything found or any attack that works is
# ESCAPED. It must find the template (or the fork server is not in use and
# the probe proves nothing) and plant something: both go into its
# EVIDENCE line, which the driver checks across the tests.
# Stdin: "TEST <k>" (the test's number).
import builtins
import gc
import os
import signal
import sys

escaped = 0
planted = 0


def out(line):
    print(line, flush=True)


def escape(what):
    global escaped
    escaped += 1
    out("ESCAPED " + what)


def check(cond, what):
    if cond:
        escape(what)
    else:
        out("BLOCKED " + what)


k = 0
for line in sys.stdin:
    if line.startswith("TEST "):
        k = int(line.split()[1])

# --- what an earlier test may have left in this interpreter
check("gavel_planted" in sys.modules, "a module planted in sys.modules")
check(hasattr(os, "gavel_planted"), "an attribute planted on the os module")
check(hasattr(builtins, "gavel_planted"), "a builtin planted")
check("/gavel-planted" in sys.path, "a sys.path entry")
check(sys.argv != ["main.py"], "sys.argv is %r" % (sys.argv,))
check(sys.getrecursionlimit() != 1000, "the recursion limit")
check(not gc.isenabled(), "the garbage collector off")
check("GAVEL_PLANTED" in os.environ, "an environment variable (os.environ)")
with open("/proc/self/environ", "rb") as f:
    check(b"GAVEL_PLANTED" in f.read(), "an environment variable (putenv)")
fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
check(fds[:3] != [0, 1, 2] or len(fds) > 4, "open fds %s (0-2 and the listing's own only)" % fds)
check(signal.getsignal(signal.SIGUSR1) != signal.SIG_DFL, "SIGUSR1's disposition")
check(signal.getsignal(signal.SIGTERM) != signal.SIG_DFL, "a SIGTERM handler")
check(signal.pthread_sigmask(signal.SIG_BLOCK, []) != set(), "a blocked signal")
check(os.getcwd() != "/box", "the working directory %s" % os.getcwd())
mask = os.umask(0o022)
check(mask == 0o137, "the umask")
check(os.path.exists("/tmp/gavel-planted"), "a file in /tmp")

# --- this process is sandboxed as an exec'd program is: no capability in
# any set (the bounding set included), no_new_privs, a seccomp filter
with open("/proc/self/status") as f:
    status = dict(ln.split(":", 1) for ln in f if ":" in ln)
for key in ("CapInh", "CapPrm", "CapEff", "CapBnd"):
    check(int(status.get(key, "1"), 16) != 0, "%s is %r" % (key, status.get(key)))
# gVisor's status has no NoNewPrivs or Seccomp line: prctl says.
import ctypes
prctl = ctypes.CDLL(None, use_errno=True).prctl
check(prctl(39, 0, 0, 0, 0) != 1, "no_new_privs is off")  # PR_GET_NO_NEW_PRIVS
check(prctl(21, 0, 0, 0, 0) != 2, "no seccomp filter")  # PR_GET_SECCOMP

# --- the template: our parent, root, running the fork server's stub
template = os.getppid()
try:
    with open("/proc/%d/cmdline" % template, "rb") as f:
        cmd = f.read()
    with open("/proc/%d/status" % template) as f:
        uid = [ln.split()[1:] for ln in f if ln.startswith("Uid:")][0]
except OSError as e:
    cmd, uid = b"", []
    out("INFO parent %d unreadable: %s" % (template, e))
if template == 1 or b"_gv_serve" not in cmd:
    out("INFO no fork server: parent %d is %r" % (template, cmd[:60]))
    template = 0
else:
    check(uid != ["0", "0", "0", "0"], "the template runs as uid %s, not 0" % uid)
    for sig in (0, signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(template, sig)
            escape("signal %d to the template" % sig)
        except OSError as e:
            out("BLOCKED signal %d to the template (%s)" % (sig, e.strerror))
    # Its pipes to init: 3 the requests, 4 the replies (a forged 'W' would
    # be a forged exit status and CPU time). Its fd 0 is this test's own
    # stdin file, which /proc/self/fd/0 reopens too (PROTOCOL.md): no
    # attack. gVisor lists another uid's fd and fdinfo folders; their
    # names are no secret, but no entry may open.
    for path, mode in (("mem", "r+b"), ("mem", "rb"), ("fd/3", "wb"), ("fd/3", "rb"), ("fd/4", "wb"),
                       ("fd/4", "rb"), ("fd/1", "wb"), ("fd/2", "wb")):
        try:
            with open("/proc/%d/%s" % (template, path), mode):
                escape("opened the template's /proc/%s (%s)" % (path, mode))
        except OSError as e:
            out("BLOCKED the template's /proc/%s (%s)" % (path, e.strerror))
    for path in ("cwd", "root", "map_files"):
        try:
            os.listdir("/proc/%d/%s" % (template, path))
            escape("listed the template's /proc/%s" % path)
        except OSError as e:
            out("BLOCKED the template's /proc/%s (%s)" % (path, e.strerror))

# --- plant everything for the next test
plants = [
    lambda: sys.modules.__setitem__("gavel_planted", type(sys)("gavel_planted")),
    lambda: setattr(os, "gavel_planted", 1),
    lambda: setattr(builtins, "gavel_planted", 1),
    lambda: sys.path.append("/gavel-planted"),
    lambda: sys.argv.append("gavel-planted"),
    lambda: sys.setrecursionlimit(1234),
    lambda: gc.disable(),
    lambda: os.environ.__setitem__("GAVEL_PLANTED", "1"),
    lambda: os.set_inheritable(os.open("/box/main.py", os.O_RDONLY), True),
    lambda: signal.signal(signal.SIGUSR1, signal.SIG_IGN),
    lambda: signal.signal(signal.SIGTERM, lambda *a: None),
    lambda: signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2]),
    lambda: os.chdir("/tmp"),
    lambda: os.umask(0o137),
    lambda: open("/tmp/gavel-planted", "w").close(),
]
for plant in plants:
    try:
        plant()
        planted += 1
    except Exception as e:
        out("INFO could not plant: %s" % e)
out("EVIDENCE test %d planted %d template %d" % (k, planted, template))
out("DONE escaped=%d" % escaped)
