# py_escape (Python) — the same promises seen through an interpreter with a
# rich standard library: clean environment, no host files, no network, no
# privileged calls through ctypes, and a shell spawned from Python is just as
# confined. stdin: "PORT <n>" (the driver's host listener).
import ctypes
import ctypes.util
import os
import socket
import subprocess
import sys

escapes = 0


def say(tag, msg):
    global escapes
    if tag == "ESCAPED":
        escapes += 1
    print(tag, msg, flush=True)


params = dict(l.split(" ", 1) for l in sys.stdin.read().splitlines() if " " in l)

extra = sorted(k for k in os.environ if k not in ("PATH", "LANG", "HOME"))
for k in os.environ:
    print("ENV", k, flush=True)
if any(w in k for k in os.environ for w in ("GAVEL", "DATABASE", "REDIS", "PG", "SECRET", "TOKEN")):
    say("ESCAPED", "environment carries host variables: %s" % extra)
else:
    say("INFO", "environment names: %s" % sorted(os.environ))

for path in ("/etc/shadow", "/root/.ssh/authorized_keys", "/work/main/Makefile", "/proc/1/mem"):
    try:
        with open(path, "rb") as f:
            f.read(16)
        say("ESCAPED", "read " + path)
    except OSError as e:
        say("BLOCKED", "read %s: %s" % (path, e))

for path in ("/root", "/home", "/work", "/var/lib/postgresql"):
    try:
        entries = os.listdir(path)
        if entries:
            say("ESCAPED", "listed %s: %s" % (path, entries[:5]))
    except OSError as e:
        say("BLOCKED", "list %s: %s" % (path, e))

port = int(params.get("PORT", "0"))
for host, p in (("127.0.0.1", port), ("169.254.169.254", 80), ("8.8.8.8", 53)):
    if not p:
        continue
    try:
        socket.create_connection((host, p), timeout=1).close()
        say("ESCAPED", "connected to %s:%d" % (host, p))
    except socket.timeout:
        say("ESCAPED", "connect to %s:%d still pending after 1 s: a route exists" % (host, p))
    except OSError as e:
        say("BLOCKED", "connect %s:%d: %s" % (host, p, e))

# Each call below may be killed by seccomp (SIGSYS): "TRY <i>" goes first,
# and the driver re-runs with "SKIP <i+1>" to reach the rest.
skip = int(params.get("SKIP", "0"))
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
for i, (name, call) in enumerate((
    ("mount", lambda: libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None)),
    ("unshare(CLONE_NEWUSER)", lambda: libc.unshare(0x10000000)),
    ("setuid(0)", lambda: libc.setuid(0)),
    ("chroot", lambda: libc.chroot(b"/tmp")),
)):
    if i < skip:
        continue
    print("TRY %d %s" % (i, name), flush=True)
    r = call()
    if r == 0:
        say("ESCAPED", name + " succeeded")
    else:
        say("BLOCKED", "%s errno=%d" % (name, ctypes.get_errno()))

try:
    out = subprocess.run(["/bin/sh", "-c", "id -u; cat /etc/shadow; ls /work"],
                         capture_output=True, timeout=5)
    text = out.stdout.decode(errors="replace")
    uid = text.split("\n", 1)[0].strip()
    if uid == "0":
        say("ESCAPED", "a shell runs as root")
    if "root:" in text or len(text.splitlines()) > 1:
        say("ESCAPED", "shell read host files: %r" % text[:80])
    else:
        say("BLOCKED", "shell: uid %s, nothing read (rc %d)" % (uid, out.returncode))
except Exception as e:  # no shell, or spawning refused: also fine
    say("BLOCKED", "shell: %s" % e)

print("DONE escaped=%d" % escapes, flush=True)
