#!/usr/bin/python3
"""Kernel-side security probes: code run in a kernel through the kernel
gateway API, as any notebook user could (tests/kernels/kclient.py), each
deciding PASS (the sandbox held) or ESCAPED (it did not).

    tests/kernels/probes.py [BASE_URL TOKEN] [--only NAME[,NAME...]]
    tests/kernels/probes.py --selftest      (root: the probes' logic, no kernel)

BASE_URL and TOKEN (or GAVEL_KERNELS_URL and GAVEL_KERNELS_TOKEN): the
gateway (Gavel's frontend and a tenant key). With neither, a plain local
jupyter_server, where ipykernel runs on the host without a sandbox: most
probes must then print ESCAPED, which is how the probes' own logic is
checked (tests/kernels/README.md lists what each one shows there).

Each probe prints `ok N name: PASS detail` or `FAIL N name: ESCAPED
detail` (`FAIL N name: ERROR ...` when it could not decide); the exit
status is non-zero when one did not pass. Host-side inputs:
GAVEL_PROBE_HOST_PORTS (comma-separated TCP ports of this host to try from
the kernel at 127.0.0.1; default: BASE_URL's port and 22,80,443,5432,6379,
8080), a marker file this script writes in /tmp for the duration of the run.
"""

import json
import os
import secrets
import sys
import textwrap
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import kclient  # noqa: E402
from kclient import expect  # noqa: E402

WAIT = 120

# Every probe's code ends by printing one line: "PASS <detail>" or
# "ESCAPED <detail>". It runs in the kernel, in the kernel's Python.
PRELUDE = textwrap.dedent(
    """\
    import os as _os, sys as _sys
    def _verdict(ok, detail):
        print(("PASS " if ok else "ESCAPED ") + detail)
    """
)


def probe_net_testnet(_ctx):
    return """
import socket
try:
    s = socket.create_connection(("192.0.2.1", 80), timeout=3)
    s.close()
    _verdict(False, "connected to 192.0.2.1:80 (TEST-NET-1)")
except OSError as e:
    _verdict(True, f"192.0.2.1:80: {type(e).__name__} {e}")
"""


def probe_net_interfaces(_ctx):
    return """
def _read(p):
    try:
        with open(p) as f:
            return f.read().splitlines()
    except OSError as e:
        return None
dev = _read("/proc/net/dev")
route = _read("/proc/net/route")
ifaces = [l.split(":")[0].strip() for l in (dev or [])[2:] if ":" in l]
routes = [l.split() for l in (route or [])[1:] if l.strip()]
other = [i for i in ifaces if i != "lo"]
_verdict(not other and not routes,
         f"interfaces {ifaces or dev}, {len(routes)} IPv4 route(s)" + (f" (default via {routes[0][0]})" if routes else ""))
"""


def probe_net_host_loopback(ctx):
    return f"""
import socket
open_ports, closed = [], []
for port in {ctx['host_ports']!r}:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.close()
        open_ports.append(port)
    except OSError as e:
        closed.append(f"{{port}}: {{type(e).__name__}}")
_verdict(not open_ports, (f"connected to 127.0.0.1:{{open_ports}}" if open_ports else "none reachable") + f"; {{', '.join(closed)}}")
"""


def probe_dns(_ctx):
    return """
import socket
socket.setdefaulttimeout(5)
got = {}
for name in ("example.com", "pypi.org", "localhost.gavel-probe.invalid"):
    try:
        got[name] = sorted({a[4][0] for a in socket.getaddrinfo(name, 80)})[:2]
    except OSError as e:
        pass
real = {k: v for k, v in got.items() if not k.endswith(".invalid")}
_verdict(not real, f"resolved {real}" if real else "no name resolved")
"""


def probe_host_files(ctx):
    # /home and /root: absent, or at least empty (nothing of the host's
    # in them). /proc/1/environ: pid 1 is the sandbox's init, whose
    # environment must not be readable (unless the probe is pid 1 itself).
    return f"""
found, notes = [], []
if _os.path.lexists({ctx['marker']!r}):
    found.append({ctx['marker']!r})
# A sandbox may have a passwd of its own (root and nobody only, Gavel's
# generated /etc); any other account is the host's.
try:
    with open("/etc/passwd") as f:
        users = [l.split(":")[0] for l in f if l.strip()]
    others = [u for u in users if u not in ("root", "nobody")]
    if others:
        found.append(f"/etc/passwd with the host's accounts ({{len(others)}}: {{others[:3]}})")
    else:
        notes.append(f"/etc/passwd holds only {{users}}")
except FileNotFoundError:
    notes.append("/etc/passwd absent")
for d in ("/home", "/root"):
    try:
        entries = _os.listdir(d)
    except FileNotFoundError:
        notes.append(d + " absent")
        continue
    except OSError as e:
        notes.append(f"{{d}} unreadable ({{type(e).__name__}})")
        continue
    if entries:
        found.append(f"{{d}} ({{len(entries)}} entries)")
    else:
        notes.append(d + " empty")
if _os.getpid() != 1:
    try:
        with open("/proc/1/environ", "rb") as f:
            env1 = f.read()
    except OSError as e:
        env1 = b""
        notes.append(f"/proc/1/environ unreadable ({{type(e).__name__}})")
    # Wiped to NUL bytes is as good as unreadable: only real entries count.
    entries = [e for e in env1.split(bytes(1)) if e.strip(bytes(1))]
    if entries:
        found.append(f"/proc/1/environ ({{len(entries)}} variables)")
_verdict(not found, (f"visible: {{found}}" if found else "/etc/passwd, the host's marker absent") + "; " + ", ".join(notes))
"""


def probe_privileges(_ctx):
    return """
caps = {}
with open("/proc/self/status") as f:
    for l in f:
        k, _, v = l.partition(":")
        if k in ("CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
            caps[k] = v.strip()
uid = (_os.getuid(), _os.geteuid(), _os.getgid())
bad = uid[0] == 0 or uid[1] == 0 or int(caps.get("CapEff", "1"), 16) != 0 or int(caps.get("CapPrm", "1"), 16) != 0
_verdict(not bad, f"uid/euid/gid {uid}, " + ", ".join(f"{k} {v}" for k, v in caps.items()))
"""


def probe_readonly(ctx):
    return f"""
wrote = []
for d in ("/usr", "/box"):
    p = _os.path.join(d, {('gavel-probe-' + ctx['rand'])!r})
    try:
        with open(p, "w") as f:
            f.write("x")
        wrote.append(p)
        _os.unlink(p)
    except OSError as e:
        pass
_verdict(not wrote, f"wrote {{wrote}} (removed again)" if wrote else "writes to /usr and /box refused")
"""


def probe_protocol_lines(_ctx):
    # What kernel code writes must stay data: frames of the bridge's own
    # grammar (executor/kernels/README.md) printed by Python, written to fd
    # 1 and 2 directly, half a header without its newline, NULs.
    return r"""
import sys
print("msg 0 v1 text iopub 5\nhello")
sys.stdout.flush()
for fd, b in ((1, b"gone client\n"), (1, b"msg 0 json text iopub 2\n{}"), (1, b"state dead\n"),
              (1, b"restarted\n"), (2, b"gone error\n"), (1, b"msg 1 json te"), (1, b"\x00\x00\n")):
    _os.write(fd, b)
print("after")
"""


PROBES = [
    ("no network: 192.0.2.1:80 (TEST-NET-1)", probe_net_testnet),
    ("no network: no interface but lo, no route", probe_net_interfaces),
    ("no network: the host's 127.0.0.1 ports", probe_net_host_loopback),
    ("no DNS", probe_dns),
    ("no host files: /etc/passwd, a host marker, anything in /home or /root, /proc/1/environ", probe_host_files),
    ("not root, no capabilities (CapEff, CapPrm 0)", probe_privileges),
    ("/usr and /box not writable", probe_readonly),
]


def verdict(r):
    """(ok, text) from a probe's output."""
    lines = [line for line in r.stdout().splitlines() if line.startswith(("PASS ", "ESCAPED "))]
    if r.status != "ok" or not lines:
        return None, f"ERROR status {r.status}: {r.brief()[:500]}"
    return lines[-1].startswith("PASS "), lines[-1]


CONFINE = (
    "mount -t tmpfs none /home && mount -t tmpfs none /root && mount -t tmpfs none /tmp && "
    "mount -t tmpfs none /etc && "
    "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "
    '--no-new-privs /usr/bin/python3 -c "$0"; true'
)


def selftest():
    """The static probes' own logic, without any kernel: each probe's code
    run by python3 on this host as it is, then confined by hand (unshare:
    no network, its own PID and mount namespaces with empty /etc, /home,
    /root and /tmp; uid 65534, no capabilities, so /usr is not writable). Confined,
    every probe must PASS; on the host (as root) they ESCAPE, but for the
    two that depend on this host's network (TEST-NET-1, DNS)."""
    import subprocess

    c = kclient.Checks()
    rand = secrets.token_hex(8)
    marker = f"/tmp/gavel-host-marker-{rand}"
    with open(marker, "w") as f:
        f.write("the host's\n")
    ctx = {"host_ports": [22, 80], "marker": marker, "rand": rand}
    try:
        for name, fn in PROBES:
            code = PRELUDE + fn(ctx)
            host = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=60)
            conf = subprocess.run(["unshare", "--net", "--pid", "--fork", "--mount-proc", "--mount", "sh", "-c", CONFINE, code],
                                  capture_output=True, text=True, timeout=60)
            h = (host.stdout.strip().splitlines() or [host.stderr.strip()[-200:]])[-1]
            v = (conf.stdout.strip().splitlines() or [conf.stderr.strip()[-300:]])[-1]
            print(f"# {name}: on the host: {h[:300]}", flush=True)
            c.report(v.startswith("PASS "), f"selftest, confined: {name}: {v[:300]}", conf.stderr)
    finally:
        os.unlink(marker)
    return c.finish()


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--selftest"]:
        return selftest()
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1].split(",")
        del argv[i : i + 2]
    srv, dev = kclient.target_from_args(argv, __doc__)
    c = kclient.Checks()
    port = urllib.parse.urlsplit(srv.base).port or (443 if srv.base.startswith("https") else 80)
    env_ports = os.environ.get("GAVEL_PROBE_HOST_PORTS")
    ports = [int(p) for p in env_ports.split(",")] if env_ports else [port, 22, 80, 443, 5432, 6379, 8080]
    rand = secrets.token_hex(8)
    marker = f"/tmp/gavel-host-marker-{rand}"
    with open(marker, "w") as f:
        f.write("the host's\n")
    ctx = {"host_ports": sorted(set(ports)), "marker": marker, "rand": rand}
    kids = []
    escaped = 0

    def want(name):
        return only is None or any(o in name for o in only)

    def report(name, ok, text):
        nonlocal escaped
        if ok is True:
            c.report(True, f"{name}: {text}")
        else:
            escaped += ok is False
            c.report(False, f"{name}: {text}")

    def start(framing="json"):
        k = srv.start("python3")
        kids.append(k["id"])
        ch = srv.connect(k["id"], framing=framing, timeout=WAIT)
        ch.wait_ready(WAIT)
        return k["id"], ch

    try:
        kid, ch = start()
        for name, fn in PROBES:
            if not want(name):
                continue
            try:
                r = ch.execute(PRELUDE + fn(ctx), timeout=60)
                report(name, *verdict(r))
            except Exception as e:  # noqa: BLE001
                report(name, None, f"ERROR {type(e).__name__}: {e}")
        if want("protocol"):
            protocol_lines(srv, kid, ch, report)
        ch.close()
        srv.delete(kid)
        if want("/tmp"):
            tmp_isolation(srv, start, report, rand)
        if want("two kernels"):
            two_kernels(srv, start, report, rand)
        if want("bridge"):
            bridge_stdout(srv, start, report, rand)
    finally:
        for k in kids:
            try:
                srv.request("DELETE", f"api/kernels/{k}", expect=None)
            except Exception:  # noqa: BLE001
                pass
        os.unlink(marker)
        if dev:
            dev.stop()
    if dev and escaped:
        print(f"# {escaped} probe(s) ESCAPED: expected against a plain jupyter_server (no sandbox)")
    return c.finish()


def protocol_lines(srv, kid, ch, report):
    name = "kernel output shaped like the bridge's frames stays data (print, os.write to fd 1 and 2)"
    try:
        r = ch.execute(PRELUDE + probe_protocol_lines(None), timeout=60)
        out = r.stdout()
        # ipykernel forwards what reaches fd 1 and 2 from a thread of its
        # own: some may come after the reply and the idle status.
        end = time.monotonic() + 2
        while time.monotonic() < end:
            m = ch.recv(end - time.monotonic())
            if m and m["header"]["msg_type"] == "stream":
                out += m["content"].get("text", "")
        expect(r.status == "ok", r.brief())
        expect("msg 0 v1 text iopub 5\nhello\n" in out, f"the printed lines are not in the output: {out!r}")
        # print() and writes to fd 1 reach the client as two streams
        # (ipykernel captures the fd apart): every piece must be there,
        # in any order between the two.
        # (print() writes its newline apart, so "after" may be cut from it)
        for piece in ("after", "gone client\n", "state dead\n", "restarted\n", "msg 1 json te"):
            expect(piece in out, f"output cut: {piece!r} missing from {out!r}")
        kinds = sorted({m["header"]["msg_type"] for m in r.iopub})
        expect(set(kinds) <= {"status", "execute_input", "stream"}, f"unexpected iopub messages {kinds}")
        time.sleep(1)
        again = ch.execute("1+1", timeout=60)
        expect(again.result() == "2", f"the next execute: {again.brief()}")
        m = srv.kernel(kid)
        expect(m is not None, "the kernel is gone (GET api/kernels/{id}: 404)")
        report(name, True, f"PASS the session went on ({len(out)} bytes of output, then 1+1 -> 2 on the same WebSocket)")
    except Exception as e:  # noqa: BLE001
        report(name, False, f"ESCAPED {type(e).__name__}: {e}")


def tmp_isolation(srv, start, report, rand):
    name = "/tmp of a deleted kernel is gone: a new kernel cannot see its file"
    path = f"/tmp/gavel-kernel-probe-{rand}"
    try:
        kid, ch = start()
        r = ch.execute(f"open({path!r}, 'w').write('left by the first kernel'); print(open({path!r}).read())")
        expect(r.stdout() == "left by the first kernel\n", r.brief())
        ch.close()
        srv.delete(kid)
        kid2, ch2 = start()
        r = ch2.execute(PRELUDE + f"""
p = {path!r}
seen = _os.path.exists(p)
if seen:
    _os.unlink(p)
_verdict(not seen, "the first kernel's file is visible (removed now)" if seen else "not there")
""")
        ch2.close()
        srv.delete(kid2)
        report(name, *verdict(r))
    except Exception as e:  # noqa: BLE001
        report(name, None, f"ERROR {type(e).__name__}: {e}")


def two_kernels(srv, start, report, rand):
    """Two kernels at once: the second cannot see the first's processes
    (its own command line and a child it started, tagged) and its socket
    carries none of the first's messages."""
    name = "two kernels: neither sees the other's processes or messages"
    tag = f"gavel-probe-{rand}"
    try:
        kid_a, a = start("json")
        kid_b, b = start("v1")
        ra = a.execute(
            "import subprocess, sys, os\n"
            f"_child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {tag!r}])\n"
            "print(open('/proc/self/cmdline','rb').read().replace(b'\\0', b' ').decode().strip())\n"
        )
        a_cmd = ra.stdout().strip()
        expect(ra.status == "ok" and a_cmd, ra.brief())
        info_b = b.kernel_info()
        b_session = info_b["header"]["session"]
        rb = b.execute(PRELUDE + f"""
mine = _os.getpid()
seen = []
for d in _os.listdir("/proc"):
    if not d.isdigit() or int(d) == mine:
        continue
    try:
        with open(f"/proc/{{d}}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\\0", b" ").decode(errors="replace").strip()
    except OSError:
        continue
    if {tag!r} in cmd or cmd == {a_cmd!r}:
        seen.append((int(d), cmd[:80]))
_verdict(not seen, f"sees the other kernel's processes: {{seen}}" if seen else "the other kernel's processes are not visible")
""")
        # A's output, while B listens: nothing of it may reach B.
        ra2 = a.execute(f"print({tag!r} * 3)")
        expect(ra2.stdout().strip() == tag * 3, ra2.brief())
        leaked = []
        end = time.monotonic() + 2
        while time.monotonic() < end:
            m = b.recv(end - time.monotonic())
            if m:
                leaked.append(m)
        ok, text = verdict(rb)
        foreign = [m["header"]["msg_type"] for m in leaked if m["header"].get("session") != b_session or tag * 3 in str(m["content"])]
        if ok and foreign:
            ok, text = False, f"ESCAPED the other kernel's messages reached this socket: {foreign}"
        a.execute("_child.kill()")
        a.close()
        b.close()
        srv.delete(kid_a)
        srv.delete(kid_b)
        report(name, ok, text)
    except Exception as e:  # noqa: BLE001
        report(name, None, f"ERROR {type(e).__name__}: {e}")


def bridge_stdout(srv, start, report, rand):
    """Kernel code runs as the bridge's own uid, so it may reach the
    bridge's stdout (the frames to the host) through /proc/<parent>/fd/1.
    What it writes there must harm only its own kernel: a malformed frame
    ends that kernel, and another kernel of the same tenant runs on,
    receiving nothing of it."""
    name = "bridge's stdout written by kernel code: only its own kernel is harmed"
    tag = f"gavel-forged-{rand}"
    try:
        kid_a, a = start("json")
        kid_b, b = start("json")
        frame = '{"forged": "%s"}' % tag
        forged = f"msg 0 json text iopub {len(frame)}\n{frame}gone client\nstate dead\n".encode()
        code = f"""
import os
try:
    fd = os.open(f"/proc/{{os.getppid()}}/fd/1", os.O_WRONLY)
except OSError as e:
    print("refused", e)
else:
    os.write(fd, {forged!r})
    print("written")
"""
        a.send("shell", "execute_request", {"code": code, "silent": False, "store_history": False,
                                            "user_expressions": {}, "allow_stdin": False, "stop_on_error": False})
        # A's session may end now; B must carry on and hear nothing of A.
        seen_a = []
        end = time.monotonic() + 5
        try:
            while time.monotonic() < end:
                m = a.recv(end - time.monotonic())
                if m:
                    seen_a.append(m)
        except Exception:  # noqa: BLE001  (A's WebSocket closed: its kernel ended)
            pass
        leaked = []
        end = time.monotonic() + 1
        while time.monotonic() < end:
            m = b.recv(end - time.monotonic())
            if m:
                leaked.append(m)
        rb = b.execute("1+1", timeout=60)
        a_alive = srv.kernel(kid_a) is not None
        forged_b = [m for m in leaked if tag in json.dumps(m)]
        ok = rb.result() == "2" and not forged_b
        a.close()
        b.close()
        srv.delete(kid_b)
        if a_alive:
            srv.delete(kid_a)
        outs = " ".join(str(m.get("content", {}).get("text", "")).strip() for m in seen_a
                        if m.get("header", {}).get("msg_type") == "stream")
        report(name, ok, (f"PASS the other kernel ran on (1+1 -> 2, nothing of the forgery reached it); the writer "
                          f"said {outs[:60]!r} and its kernel {'runs on' if a_alive else 'ended'}") if ok else
               f"ESCAPED the other kernel: 1+1 -> {rb.brief()}, forged messages on its socket: {len(forged_b)}")
    except Exception as e:  # noqa: BLE001
        report(name, None, f"ERROR {type(e).__name__}: {e}")


if __name__ == "__main__":
    sys.exit(main())
