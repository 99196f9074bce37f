"""End-to-end test of executor/kernels/bridge.py on the host (no sandbox).

Runs the bridge with a clean environment in a temporary folder, speaks the
frame protocol of executor/kernels/README.md on its stdin and stdout, and
checks what Jupyter clients rely on. Client messages are built and kernel
messages decoded with jupyter_server's own wire functions, so the bridge's
framing is checked against an implementation that is not its own.

    /usr/bin/python3 tests/kernels/test_bridge.py

Prints one line per check with its time; exit 0 when every check passed.

With --bwrap the bridge runs under bubblewrap in the sandbox's shape: uid
65534, no network (loopback neither), /usr read-only, no /etc but
/etc/alternatives, /tmp an empty tmpfs, the bridge at /box/bridge.py, cwd
/box read-only. No gVisor and no seccomp policy: that is for the
executor's integration tests. With --wrap=PROGRAM the bridge's command
line is given to PROGRAM (e.g. a helper that loads gavel-init's seccomp
policy and execs its arguments).
"""

import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from jupyter_server.base.zmqhandlers import (
    deserialize_binary_message,
    deserialize_msg_from_ws_v1,
    serialize_binary_message,
    serialize_msg_to_ws_v1,
)

HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE = os.path.join(HERE, "..", "..", "executor", "kernels", "bridge.py")
PYTHON = "/usr/bin/python3"
BWRAP = "--bwrap" in sys.argv[1:]
WRAP = [x[len("--wrap="):] for x in sys.argv[1:] if x.startswith("--wrap=")]

MSG_RE = re.compile(rb"msg (0|[1-9][0-9]{0,17}) (v1|json) (text|binary) (shell|control|stdin|iopub) (0|[1-9][0-9]{0,8})\n")
STATE_RE = re.compile(rb"state (starting|idle|busy)\n")


class Frame:
    def __init__(self, kind, conn=None, framing=None, opcode=None, channel=None, payload=b""):
        self.kind = kind
        self.conn = conn
        self.framing = framing
        self.opcode = opcode
        self.channel = channel
        self.payload = payload
        self.msg = None
        if kind == "msg":
            self.msg = decode(framing, opcode, channel, payload)

    @property
    def msg_type(self):
        return self.msg["header"]["msg_type"]

    @property
    def parent_id(self):
        return (self.msg.get("parent_header") or {}).get("msg_id")

    def __repr__(self):
        if self.kind == "msg":
            return "<msg %d %s %s %s %s>" % (self.conn, self.framing, self.opcode, self.channel, self.msg_type)
        return "<%s>" % self.kind


def decode(framing, opcode, channel, payload):
    """A kernel message from one frame, checked against its header."""
    if framing == "v1":
        assert opcode == "binary", "v1 frames are binary"
        ch, parts = deserialize_msg_from_ws_v1(payload)
        assert ch == channel, "v1 channel %r != frame channel %r" % (ch, channel)
        assert len(parts) >= 4
        msg = {k: json.loads(p) for k, p in zip(("header", "parent_header", "metadata", "content"), parts)}
        msg["buffers"] = [bytes(b) for b in parts[4:]]
        return msg
    if opcode == "text":
        msg = json.loads(payload.decode("utf-8"))
        assert msg["buffers"] == []
    else:
        msg = deserialize_binary_message(payload)
        msg["buffers"] = [bytes(b) for b in msg["buffers"]]
    assert msg.pop("channel") == channel
    return msg


class Bridge:
    """One bridge process and a thread reading its frames."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="gv-bridge-test-")
        self.err = open(os.path.join(self.tmp, "stderr"), "w+b")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
        argv = WRAP + [PYTHON, "-I", os.path.abspath(BRIDGE)]
        if BWRAP:
            argv = ["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
                    "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                    "--dir", "/etc", "--ro-bind", "/etc/alternatives", "/etc/alternatives",
                    "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
                    "--ro-bind", os.path.dirname(os.path.abspath(BRIDGE)), "/box", "--chdir", "/box",
                    "--unshare-all", "--uid", "65534", "--gid", "65534", "--clearenv",
                    "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "HOME", "/tmp",
                    "--new-session", "--die-with-parent"]
            for w in WRAP:
                argv += ["--ro-bind", os.path.abspath(w), os.path.abspath(w)]
            argv += WRAP + [PYTHON, "-I", "/box/bridge.py"]
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, cwd=self.tmp, env=env)
        self.frames = []
        self.bad = None
        self.cond = threading.Condition()
        self.session = uuid.uuid4().hex
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        f = self.proc.stdout
        try:
            while True:
                line = f.readline(200)
                if not line:
                    break
                if line == b"ready\n":
                    fr = Frame("ready")
                elif STATE_RE.fullmatch(line):
                    fr = Frame("state")
                    fr.state = line[6:-1].decode()
                else:
                    m = MSG_RE.fullmatch(line)
                    if not m:
                        raise AssertionError("bad header line %r" % line[:120])
                    n = int(m.group(5))
                    payload = f.read(n)
                    if len(payload) != n:
                        raise AssertionError("short payload")
                    fr = Frame("msg", int(m.group(1)), m.group(2).decode(), m.group(3).decode(),
                               m.group(4).decode(), payload)
                fr.t = time.monotonic()
                with self.cond:
                    self.frames.append(fr)
                    self.cond.notify_all()
        except Exception as e:   # the check that waits reports it
            with self.cond:
                self.bad = "frame stream broken: %r" % (e,)
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def mark(self):
        with self.cond:
            return len(self.frames)

    def wait(self, pred, timeout, start=0, what="frame"):
        end = time.monotonic() + timeout
        i = start
        with self.cond:
            while True:
                if self.bad:
                    raise AssertionError(self.bad)
                while i < len(self.frames):
                    if pred(self.frames[i]):
                        return self.frames[i]
                    i += 1
                left = end - time.monotonic()
                if left <= 0:
                    seen = ["%r/%s" % (f, (f.parent_id or "-")[:6]) if f.kind == "msg" else repr(f)
                            for f in self.frames[start:]]
                    raise AssertionError("timed out waiting for %s; since the request: %s"
                                         % (what, " ".join(seen[-30:]) or "nothing"))
                self.cond.wait(left)

    def since(self, start):
        with self.cond:
            if self.bad:
                raise AssertionError(self.bad)
            return list(self.frames[start:])

    def send(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def open(self, conn, framing):
        self.send(b"open %d %s\n" % (conn, framing.encode()))

    def msg(self, conn, payload):
        self.send(b"msg %d %d\n" % (conn, len(payload)) + payload)

    def request(self, conn, framing, channel, msg_type, content, buffers=()):
        m = make_msg(msg_type, content, self.session, buffers)
        self.msg(conn, encode(framing, channel, m))
        return m["header"]["msg_id"]

    def execute(self, conn, framing, code, **kw):
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": False}
        content.update(kw)
        return self.request(conn, framing, "shell", "execute_request", content)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")


def make_msg(msg_type, content, session, buffers=()):
    header = {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "username": "test", "session": session,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "version": "5.3"}
    return {"header": header, "parent_header": {}, "metadata": {}, "content": content, "buffers": list(buffers)}


def encode(framing, channel, msg):
    """A client's WebSocket message, as the frontend passes it on."""
    if framing == "v1":
        parts = [json.dumps(msg[k]).encode() for k in ("header", "parent_header", "metadata", "content")]
        return serialize_msg_to_ws_v1(parts + list(msg["buffers"]), channel)
    m = dict(msg, channel=channel)
    if m["buffers"]:
        return b"\x00" + serialize_binary_message(m)
    return json.dumps(m).encode()


# ---------------------------------------------------------------------------

RESULTS = []


def check(name):
    """Runs the decorated function at once as one check; the name is bound to its outcome."""
    def deco(fn):
        def run(*a):
            t = time.monotonic()
            try:
                fn(*a)
            except Exception as e:
                RESULTS.append(False)
                print("not ok %d - %s (%.2fs): %s: %s" % (len(RESULTS), name, time.monotonic() - t,
                                                       type(e).__name__, e), flush=True)
                return False
            RESULTS.append(True)
            print("ok %d - %s (%.2fs)" % (len(RESULTS), name, time.monotonic() - t), flush=True)
            return True
        return run()
    return deco


def is_reply(mid, conn=None, channel="shell"):
    return lambda f: (f.kind == "msg" and f.channel == channel and f.parent_id == mid
                      and (conn is None or f.conn == conn))


def is_iopub(mid, msg_type, framing=None):
    return lambda f: (f.kind == "msg" and f.channel == "iopub" and f.conn == 0 and f.parent_id == mid
                      and f.msg_type == msg_type and (framing is None or f.framing == framing))


def idle_after(b, mid, start, timeout=10):
    return b.wait(lambda f: f.kind == "msg" and f.framing == "v1" and f.channel == "iopub"
                  and f.parent_id == mid and f.msg_type == "status"
                  and f.msg["content"]["execution_state"] == "idle", timeout, start, "idle of " + mid)


def main():
    unknown = [x for x in sys.argv[1:] if x != "--bwrap" and not x.startswith("--wrap=")]
    if unknown or len(WRAP) > 1:
        print("usage: test_bridge.py [--bwrap] [--wrap=PROGRAM]", file=sys.stderr)
        return 2
    t_all = time.monotonic()
    parser_checks()
    a = Bridge()
    b = None
    try:
        run_checks(a)
        b = Bridge()
        run_checks_b(a, b)
        finish(a, b)
    finally:
        for x in (a, b):
            if x is not None and x.proc.poll() is None:
                x.proc.kill()
                x.proc.wait()
    ok = all(RESULTS)
    print("1..%d" % len(RESULTS))  # TAP's plan, last: the count is known at the end
    print("# %s: %d checks, %d failed, %.1fs" % ("PASS" if ok else "FAIL", len(RESULTS),
                                               RESULTS.count(False), time.monotonic() - t_all))
    if not ok:
        for x in (a, b):
            if x is not None and x.stderr().strip():
                print("--- bridge stderr ---\n" + x.stderr()[-3000:])
    return 0 if ok else 1


def load_bridge_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gavel_bridge", BRIDGE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parser_checks():
    br = load_bridge_module()

    @check("parsers: v1 and legacy binary")
    def _():
        parts = [b'{"msg_type": "x"}', b"{}", b"{}", b'{"a": 1}', b"", b"\x00buf"]
        v1 = serialize_msg_to_ws_v1(parts, "shell")
        assert br.parse_v1(v1) == ("shell", parts)
        assert br.build_v1("iopub", parts) == serialize_msg_to_ws_v1(parts, "iopub")
        bad = [b"", b"\x06" + b"\x00" * 6, v1[:-1], v1[:40],
               (7).to_bytes(8, "little") + v1[8:],                    # one offset more than written
               (5).to_bytes(8, "little") + v1[8:],                    # fewer than 4 parts
               v1[:8] + (0).to_bytes(8, "little") + v1[16:],          # first offset inside the table
               v1[:16] + (10 ** 6).to_bytes(8, "little") + v1[24:],   # channel end past the end
               v1[:32] + (1).to_bytes(8, "little") + v1[40:],         # going backwards
               serialize_msg_to_ws_v1(parts, "sh\xe9ll")]
        for x in bad:
            assert br.parse_v1(x) is None, x[:64]
        msg = {"header": {"msg_id": "1", "msg_type": "comm_msg"}, "parent_header": {}, "metadata": {},
               "content": {}, "channel": "shell", "buffers": [b"ab", b"", b"cde"]}
        legacy = serialize_binary_message(msg)
        got = br.parse_legacy_binary(legacy)
        assert got[1:] == [b"ab", b"", b"cde"] and json.loads(got[0])["channel"] == "shell"
        assert br.build_legacy_binary(got[0], got[1:]) == legacy
        for x in (b"", b"\x00\x00\x00\x00", b"\x00\x00\x00\x02\x00\x00\x00\x0c", legacy[:8],
                  legacy[:4] + b"\x00\x00\x00\x01" + legacy[8:], legacy[:8] + b"\xff\xff\xff\xff" + legacy[12:]):
            assert br.parse_legacy_binary(x) is None, x[:32]
        out = br.to_legacy("iopub", [b'{"msg_id": "m", "msg_type": "stream"}', b"{}", b"{}", b'{"text": "\xff\\ud800"}'])
        assert out[0] == "text" and out[1].isascii()
        assert json.loads(out[1])["content"]["text"] == "\ufffd\ud800"


def run_checks(a):
    @check("start: starting, ready, idle")
    def _():
        a.wait(lambda f: f.kind == "state" and f.state == "idle", 30, 0, "ready")
        kinds = [(f.kind, getattr(f, "state", None)) for f in a.since(0)]
        assert kinds[:3] == [("state", "starting"), ("ready", None), ("state", "idle")], kinds
        ready = a.since(0)[1].t - a.t0
        print("     bridge start to ready: %.2fs" % ready)
    if not _:
        raise SystemExit(1)

    a.open(1, "v1")
    a.open(2, "json")

    @check("kernel_info v1")
    def _():
        s = a.mark()
        mid = a.request(1, "v1", "shell", "kernel_info_request", {})
        t = time.monotonic()
        f = a.wait(is_reply(mid, 1), 5, s, "kernel_info_reply")
        assert f.msg_type == "kernel_info_reply" and f.framing == "v1" and f.opcode == "binary"
        assert f.msg["content"]["language_info"]["name"] == "python"
        assert not f.msg["content"].get("debugger"), "the debugger needs TCP: it must be off"
        print("     kernel_info round trip: %.3fs" % (f.t - t))

    @check("kernel_info json")
    def _():
        s = a.mark()
        mid = a.request(2, "json", "shell", "kernel_info_request", {})
        f = a.wait(is_reply(mid, 2), 5, s, "kernel_info_reply")
        assert f.msg_type == "kernel_info_reply" and f.framing == "json" and f.opcode == "text"

    @check("kernel_info while idle: the kernel's own reply, busy and idle around it, to every framing")
    def _():
        s = a.mark()
        mid = a.request(2, "json", "shell", "kernel_info_request", {})
        f = a.wait(is_reply(mid, 2), 5, s, "kernel_info_reply")
        assert f.msg["content"]["language_info"]["name"] == "python" and f.msg["content"]["status"] == "ok"
        assert f.msg["parent_header"]["msg_id"] == mid
        for fr in ("v1", "json"):
            # The idle status may come after the reply: wait for it.
            a.wait(lambda x: is_iopub(mid, "status", fr)(x) and x.msg["content"]["execution_state"] == "idle",
                   5, s, "idle status " + fr)
            states = [x.msg["content"]["execution_state"] for x in a.since(s)
                      if is_iopub(mid, "status", fr)(x)]
            assert states == ["busy", "idle"], (fr, states)

    @check("kernel_info while a request runs: answered after it, in the kernel's order")
    def _():
        s = a.mark()
        busy = a.execute(1, "v1", "import time\ntime.sleep(0.5)")
        a.wait(is_iopub(busy, "execute_input", "v1"), 10, s, "execute_input")
        mid = a.request(2, "json", "shell", "kernel_info_request", {})
        info = a.wait(is_reply(mid, 2), 10, s, "kernel_info_reply")
        done = a.wait(is_reply(busy, 1), 10, s, "execute_reply")
        assert done.t <= info.t, "kernel_info_reply came before the running request's reply"
        idle_after(a, mid, s)

    @check("1+1: execute_result 2, both framings")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "1+1")
        r = a.wait(is_reply(mid), 10, s, "execute_reply")
        assert r.conn == 1 and r.msg["content"]["status"] == "ok", r
        for fr in ("v1", "json"):
            e = a.wait(is_iopub(mid, "execute_result", fr), 5, s, "execute_result " + fr)
            assert e.msg["content"]["data"]["text/plain"] == "2"
        idle_after(a, mid, s)
        time.sleep(0.1)
        got = a.since(s)
        assert not [f for f in got if f.kind == "msg" and f.conn == 2], "conn 2 got conn 1's reply"
        states = [f.state for f in got if f.kind == "state"]
        assert "busy" in states and states[-1] == "idle", states

    @check("print streams")
    def _():
        s = a.mark()
        mid = a.execute(2, "json", "print('hello, stream')")
        f = a.wait(is_iopub(mid, "stream", "json"), 10, s, "stream")
        assert f.msg["content"] == {"name": "stdout", "text": "hello, stream\n"}, f.msg["content"]
        r = a.wait(is_reply(mid), 10, s, "execute_reply")
        assert r.conn == 2 and r.opcode == "text"

    @check("output of a forked child (multiprocessing)")
    def _():
        s = a.mark()
        code = ("import multiprocessing\n"
                "p = multiprocessing.get_context('fork').Process(target=print, args=('from the child',))\n"
                "p.start(); p.join()\n")
        mid = a.execute(2, "json", code)
        idle_after(a, mid, s)
        text = "".join(f.msg["content"]["text"] for f in a.since(s) if is_iopub(mid, "stream", "json")(f))
        assert text == "from the child\n", text

    @check("exception: error reply and iopub")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "1/0")
        r = a.wait(is_reply(mid, 1), 10, s, "execute_reply")
        assert r.msg["content"]["status"] == "error" and r.msg["content"]["ename"] == "ZeroDivisionError"
        e = a.wait(is_iopub(mid, "error", "json"), 5, s, "error")
        assert e.msg["content"]["ename"] == "ZeroDivisionError"

    @check("matplotlib: display_data image/png")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
        f = a.wait(is_iopub(mid, "display_data", "v1"), 40, s, "display_data")
        png = f.msg["content"]["data"].get("image/png")
        import base64
        assert png and base64.b64decode(png)[:8] == b"\x89PNG\r\n\x1a\n", list(f.msg["content"]["data"])
        r = a.wait(is_reply(mid, 1), 10, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok", r.msg["content"]

    @check("interrupt ends sleep(60) < 1 s")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "import time\ntime.sleep(60)")
        a.wait(is_iopub(mid, "execute_input", "v1"), 10, s, "execute_input")
        time.sleep(0.2)
        t = time.monotonic()
        a.send(b"interrupt\n")
        r = a.wait(is_reply(mid, 1), 5, s, "execute_reply")
        took = r.t - t
        assert r.msg["content"]["status"] == "error" and r.msg["content"]["ename"] == "KeyboardInterrupt"
        assert took < 1.0, "took %.2fs" % took
        print("     interrupt to reply: %.3fs" % took)

    @check("input() round trip on stdin")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "answer = input('name? ')", allow_stdin=True)
        f = a.wait(lambda f: f.kind == "msg" and f.channel == "stdin", 10, s, "input_request")
        assert f.conn == 1 and f.msg_type == "input_request" and f.msg["content"]["prompt"] == "name? "
        m = make_msg("input_reply", {"value": "gavel"}, a.session)
        m["parent_header"] = f.msg["header"]
        a.msg(1, encode("v1", "stdin", m))
        r = a.wait(is_reply(mid, 1), 10, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok", r.msg["content"]
        s2 = a.mark()
        mid2 = a.execute(2, "json", "answer")
        e = a.wait(is_iopub(mid2, "execute_result", "json"), 10, s2, "execute_result")
        assert e.msg["content"]["data"]["text/plain"] == "'gavel'"
        assert not [x for x in a.since(s) if x.channel == "stdin" and x.conn != 1]

    @check("kernel output cannot forge frames")
    def _():
        s = a.mark()
        code = ("import os, sys\n"
                "print('msg 0 v1 text iopub 5\\nhello')\n"
                "os.write(1, b'state idle\\nready\\nmsg 1 v1 binary shell 3\\nabc')\n"
                "os.write(2, b'state busy\\n')\n"
                "sys.__stdout__.write('msg 0 json text iopub 2\\n{}\\n'); sys.__stdout__.flush()\n"
                "sys.__stderr__.write('ready\\n'); sys.__stderr__.flush()\n"
                "os.system('echo state idle; echo msg 0 v1 binary iopub 1 >&2')\n")
        mid = a.execute(1, "v1", code)
        r = a.wait(is_reply(mid, 1), 10, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok", r.msg["content"]
        idle_after(a, mid, s)
        time.sleep(0.3)
        got = a.since(s)
        assert not [f for f in got if f.kind == "ready"]
        text = "".join(f.msg["content"].get("text", "") for f in got
                       if f.kind == "msg" and f.framing == "v1" and f.msg_type == "stream")
        assert "msg 0 v1 text iopub 5\nhello" in text, text
        # a fresh request still gets exactly its reply
        s = a.mark()
        mid = a.request(1, "v1", "shell", "kernel_info_request", {})
        a.wait(is_reply(mid, 1), 5, s, "kernel_info_reply")

    @check("comm with buffers (v1, legacy binary)")
    def _():
        s = a.mark()
        setup = ("def _gv_target(comm, msg):\n"
                 "    @comm.on_msg\n"
                 "    def _echo(m):\n"
                 "        comm.send({'n': len(m['buffers'])}, buffers=[bytes(x)[::-1] for x in m['buffers']])\n"
                 "get_ipython().kernel.comm_manager.register_target('gv_echo', _gv_target)\n")
        mid = a.execute(1, "v1", setup)
        r = a.wait(is_reply(mid, 1), 10, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok", r.msg["content"]
        comm_id = uuid.uuid4().hex
        a.request(1, "v1", "shell", "comm_open", {"comm_id": comm_id, "target_name": "gv_echo", "data": {}})
        for conn, framing, buf in ((1, "v1", b"\x00\x01binary\xff"), (2, "json", b"\xfe\x00legacy")):
            s = a.mark()
            mid = a.request(conn, framing, "shell", "comm_msg", {"comm_id": comm_id, "data": {"x": 1}},
                            buffers=[buf])
            for fr in ("v1", "json"):
                f = a.wait(is_iopub(mid, "comm_msg", fr), 10, s, "comm_msg echo " + fr)
                assert f.msg["content"]["data"] == {"n": 1}, f.msg["content"]
                assert f.msg["buffers"] == [buf[::-1]], f.msg["buffers"]
                if fr == "json":
                    assert f.opcode == "binary"

    @check("malformed inbound dropped")
    def _():
        s = a.mark()
        good = make_msg("kernel_info_request", {}, a.session)
        v1 = encode("v1", "shell", good)
        junk = [
            (1, b""), (1, b"\x00"), (1, os.urandom(64)),
            (1, (2 ** 63).to_bytes(8, "little") + v1[8:]),            # offset count huge
            (1, v1[:8] + (10 ** 12).to_bytes(8, "little") + v1[16:]),   # first offset past the end
            (1, v1[:-5]),                                              # last offset past the end
            (1, v1[:24] + (1).to_bytes(8, "little") + v1[32:]),       # offsets going backwards
            (1, encode("v1", "iopub", good)),                          # channel not allowed
            (1, encode("v1", "heartbeat", good)),
            (1, serialize_msg_to_ws_v1([b"{", b"[", b"\xff", b"null"], "shell")),   # not JSON
            (2, b"not json"), (2, b"\xff\xfe"), (2, b"[]"), (2, b'{"header": 3}'),
            (2, json.dumps(dict(good, channel="iopub")).encode()),
            (2, json.dumps(dict(good, channel=["shell"])).encode()),
            (2, b"\x00"), (2, b"\x00" + os.urandom(40)),
            (2, b"\x00" + (5).to_bytes(4, "big") + os.urandom(8)),
            (2, b"\x00" + (1).to_bytes(4, "big") + (100).to_bytes(4, "big") + b"{}"),
            (2, b'{"header": {"msg_type": "kernel_info_request"}, "channel": "shell", "content": ' + b"[" * 100000 + b"}"),
            (7, v1),                                                   # connection never opened
        ]
        for conn, payload in junk:
            a.msg(conn, payload)
        for conn, framing in ((1, "v1"), (2, "json")):
            mid = a.request(conn, framing, "shell", "kernel_info_request", {})
            a.wait(is_reply(mid, conn), 5, s, "kernel_info_reply after junk")
        assert a.proc.poll() is None

    @check("rate limit: drops output, warns once")
    def _():
        s = a.mark()
        # 6000 stream messages as fast as the kernel can send them (print
        # and display are slower than the limit on a loaded machine)
        code = ("k = get_ipython().kernel\np = k.get_parent()\nfor i in range(6000):\n"
                "    k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': '%d\\n' % i}, parent=p)\n"
                "from IPython.display import display\ndisplay('after')\n")
        mid = a.execute(1, "v1", code)
        r = a.wait(is_reply(mid, 1), 30, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok", r.msg["content"]
        # The idle of this cell may never come: the kernel's IOPub socket
        # is a ZeroMQ PUB, which drops what is over its high-water mark
        # (1000) when the bridge reads slower than 6000 sends (a loaded
        # machine: seen with 3004 frames). The next cell's idle shows that
        # the bridge goes on, and that the limit was reset.
        mid2 = a.execute(1, "v1", "1")
        try:
            idle_after(a, mid2, s, timeout=60)
        except AssertionError:
            got = [f for f in a.since(s) if f.kind == "msg" and f.framing == "v1"]
            raise AssertionError("no idle after the flood: %d frames, statuses %r" % (len(got), [
                (f.parent_id[:6], f.msg["content"]) for f in got if f.msg_type == "status"]))
        got = [f for f in a.since(s) if f.kind == "msg" and f.framing == "v1" and f.parent_id == mid]
        shown = [f for f in got if f.msg_type == "stream" and f.msg["content"]["name"] == "stdout"]
        warns = [f for f in got if f.msg_type == "stream" and "rate exceeded" in f.msg["content"]["text"]]
        assert len(warns) == 1 and 900 < len(shown) < 6000, (len(warns), len(shown))
        print("     %d of 6000 stream messages passed" % len(shown))
        assert [f for f in got if f.msg_type == "status"], "status dropped"

    @check("17 MB output dropped with a warning")
    def _():
        s = a.mark()
        mid = a.execute(1, "v1", "print('x' * 17000000)")
        r = a.wait(is_reply(mid, 1), 30, s, "execute_reply")
        assert r.msg["content"]["status"] == "ok"
        idle_after(a, mid, s, 30)
        got = [f for f in a.since(s) if f.kind == "msg" and f.parent_id == mid and f.msg_type == "stream"]
        assert got and all(len(f.payload) < 1 << 24 for f in got)
        assert all("dropped" in f.msg["content"]["text"] for f in got), [f.msg["content"]["text"][:80] for f in got]

    @check("close: no more frames for that framing")
    def _():
        a.send(b"close 2\nping 1\n")
        s = a.mark()
        mid = a.execute(1, "v1", "print(2)")
        idle_after(a, mid, s)
        time.sleep(0.1)
        assert not [f for f in a.since(s) if f.kind == "msg" and (f.framing == "json" or f.conn == 2)]


def run_checks_b(a, b):
    @check("second bridge ready")
    def _():
        b.wait(lambda f: f.kind == "ready", 30, 0, "ready")
        print("     bridge start to ready: %.2fs" % (b.since(0)[1].t - b.t0))
        b.open(5, "v1")

    @check("reseed: random and numpy differ, invisibly")
    def _():
        values = {}
        for x in (a, b):
            s = x.mark()
            mid = x.execute(1 if x is a else 5, "v1",
                            "import random, numpy\nrandom.seed(7)\nnumpy.random.seed(7)")
            x.wait(is_reply(mid), 10, s, "seed reply")
            idle_after(x, mid, s)
            s = x.mark()
            x.send(b"reseed\n")
            time.sleep(0.5)
            assert not x.since(s), "reseed was visible: %r" % x.since(s)
            mid = x.execute(1 if x is a else 5, "v1", "(random.random(), float(numpy.random.random()))")
            e = x.wait(is_iopub(mid, "execute_result"), 10, s, "values")
            values[x] = e.msg["content"]["data"]["text/plain"]
        import random
        import numpy
        random.seed(7)
        numpy.random.seed(7)
        seeded = repr((random.random(), float(numpy.random.random())))
        assert values[a] != values[b] and seeded not in values.values(), (values, seeded)

    @check("restored: reseeds, then says ready and its state again, and nothing else")
    def _():
        s = b.mark()
        b.send(b"restored\n")
        r = b.wait(lambda f: f.kind == "ready", 10, s, "ready after restored")
        st = b.wait(lambda f: f.kind == "state", 10, s, "state after ready")
        assert st.t >= r.t and st.state == "idle", st.state
        time.sleep(0.3)
        assert all(f.kind in ("ready", "state") for f in b.since(s)), b.since(s)


def finish(a, b):
    @check("bad header line: exit 2")
    def _():
        a.send(b"frobnicate 1\n")
        assert a.proc.wait(timeout=10) == 2

    @check("kernel exit: bridge exit 3")
    def _():
        b.execute(5, "v1", "import os; os._exit(0)")
        assert b.proc.wait(timeout=10) == 3

    @check("stdin EOF: exit 0, kernel gone")
    def _():
        c = Bridge()
        c.wait(lambda f: f.kind == "ready", 30, 0, "ready")
        c.open(9, "json")
        s = c.mark()
        mid = c.execute(9, "json", "import os; os.getpid()")
        pid = int(c.wait(is_iopub(mid, "execute_result"), 10, s, "pid").msg["content"]["data"]["text/plain"])
        assert c.close() == 0
        if not BWRAP:   # its own pid namespace: the pid means nothing here, and it ended with bwrap
            assert not os.path.exists("/proc/%d" % pid), "kernel %d still there" % pid


if __name__ == "__main__":
    sys.exit(main())
