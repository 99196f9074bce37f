"""A small Jupyter kernel gateway client for the kernel tests, written here.

Speaks what any Jupyter client speaks to a server (jupyter_server, Gavel):
REST under BASE/api/ with `Authorization: token T`, and the kernel's
channels WebSocket BASE/api/kernels/{id}/channels?session_id=..&token=T in
either framing: `json` (legacy: one JSON text frame per message, with a
"channel" key) or `v1` (subprotocol v1.kernel.websocket.jupyter.org: one
binary frame per message, offsets then channel, header, parent_header,
metadata, content and buffers). It never talks ZMQ and never signs
messages: the server does.

Only Debian's packages: the standard library and python3-websocket
(websocket-client). Run with /usr/bin/python3.

`dev_server()` starts a plain local jupyter_server (Debian's
python3-jupyter-server, ipykernel on the host, no sandbox): the server the
kernel tests are developed against, and the baseline of
tests/bench/kernels.py.
"""

import contextlib
import datetime
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import websocket

V1 = "v1.kernel.websocket.jupyter.org"
PYTHON = "/usr/bin/python3"


class HTTPError(Exception):
    def __init__(self, method, url, status, body):
        super().__init__(f"{method} {url}: {status} {body[:300]!r}")
        self.status = status
        self.body = body


class Server:
    """The REST side of a Jupyter server: BASE_URL and its token."""

    def __init__(self, base_url, token, timeout=120):
        self.base = base_url.rstrip("/") + "/"
        self.token = token
        self.timeout = timeout

    def url(self, path):
        return self.base + path.lstrip("/")

    def ws_base(self):
        u = urllib.parse.urlsplit(self.base)
        scheme = {"http": "ws", "https": "wss"}[u.scheme]
        return urllib.parse.urlunsplit((scheme, u.netloc, u.path, "", ""))

    def request(self, method, path, body=None, expect=(200,), timeout=None, headers=None):
        """One REST call; returns (status, parsed JSON or None)."""
        data = None if body is None else json.dumps(body).encode()
        h = {"Authorization": f"token {self.token}"}
        if data is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        req = urllib.request.Request(self.url(path), data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        if expect and status not in expect:
            raise HTTPError(method, path, status, raw)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw

    def kernelspecs(self):
        return self.request("GET", "api/kernelspecs")[1]

    def kernels(self):
        return self.request("GET", "api/kernels")[1]

    def kernel(self, kid):
        """The kernel's model, or None when the server says 404."""
        status, m = self.request("GET", f"api/kernels/{kid}", expect=(200, 404))
        return m if status == 200 else None

    def start(self, name="python3"):
        return self.request("POST", "api/kernels", {"name": name}, expect=(201,))[1]

    def interrupt(self, kid):
        self.request("POST", f"api/kernels/{kid}/interrupt", expect=(204,))

    def restart(self, kid):
        return self.request("POST", f"api/kernels/{kid}/restart", expect=(200,))[1]

    def delete(self, kid):
        self.request("DELETE", f"api/kernels/{kid}", expect=(204,))

    def connect(self, kid, framing="json", auth="query", timeout=None):
        c = Channels(self, kid, framing=framing, auth=auth)
        c.open(timeout=timeout or self.timeout)
        return c


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


class Result:
    """What one execute_request produced."""

    def __init__(self, reply, iopub):
        self.reply = reply
        self.iopub = iopub

    @property
    def status(self):
        return self.reply["content"]["status"] if self.reply else None

    def of(self, msg_type):
        return [m for m in self.iopub if m["header"]["msg_type"] == msg_type]

    def stdout(self):
        return "".join(m["content"]["text"] for m in self.of("stream") if m["content"]["name"] == "stdout")

    def result(self):
        r = self.of("execute_result")
        return r[0]["content"]["data"].get("text/plain") if r else None

    def ename(self):
        c = self.reply["content"] if self.reply else {}
        return c.get("ename")

    def brief(self):
        return json.dumps(
            {
                "reply": self.reply and self.reply["content"],
                "iopub": [(m["header"]["msg_type"], m["content"]) for m in self.iopub],
            }
        )[:1200]


class Channels:
    """One channels WebSocket of one kernel."""

    def __init__(self, server, kid, framing="json", auth="query"):
        assert framing in ("json", "v1")
        self.server = server
        self.kid = kid
        self.framing = framing
        self.auth = auth
        self.session = uuid.uuid4().hex
        self.ws = None
        self.frames = {"text": 0, "binary": 0}
        self.bytes_in = 0

    def url(self):
        q = {"session_id": self.session}
        if self.auth == "query":
            q["token"] = self.server.token
        return f"{self.server.ws_base()}api/kernels/{self.kid}/channels?{urllib.parse.urlencode(q)}"

    def open(self, timeout=120):
        opts = {}
        if self.auth == "header":
            opts["header"] = [f"Authorization: token {self.server.token}"]
        if self.framing == "v1":
            opts["subprotocols"] = [V1]
        self.ws = websocket.create_connection(self.url(), timeout=timeout, **opts)
        if self.framing == "v1" and self.ws.getsubprotocol() != V1:
            raise RuntimeError(f"server selected subprotocol {self.ws.getsubprotocol()!r}")
        if self.framing == "json" and self.ws.getsubprotocol():
            raise RuntimeError(f"server selected {self.ws.getsubprotocol()!r} though none was offered")

    def close(self):
        if self.ws:
            with contextlib.suppress(Exception):
                self.ws.close(timeout=2)
            self.ws = None

    # -- frames
    def send(self, channel, msg_type, content, metadata=None):
        header = {
            "msg_id": uuid.uuid4().hex,
            "msg_type": msg_type,
            "username": "gavel-test",
            "session": self.session,
            "date": _now(),
            "version": "5.3",
        }
        msg = {"header": header, "parent_header": {}, "metadata": metadata or {}, "content": content}
        if self.framing == "json":
            msg["channel"] = channel
            msg["buffers"] = []
            self.ws.send(json.dumps(msg))
        else:
            self.ws.send_binary(encode_v1(channel, msg))
        return header["msg_id"]

    def recv(self, timeout):
        """The next message as a dict with its "channel", or None at timeout."""
        self.ws.settimeout(max(timeout, 0.001))
        try:
            opcode, data = self.ws.recv_data()
        except websocket.WebSocketTimeoutException:
            return None
        self.bytes_in += len(data)
        if opcode == websocket.ABNF.OPCODE_TEXT:
            self.frames["text"] += 1
            return json.loads(data)
        if opcode == websocket.ABNF.OPCODE_BINARY:
            self.frames["binary"] += 1
            if self.framing == "v1":
                return decode_v1(data)
            return decode_legacy_binary(data)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            raise ConnectionError("WebSocket closed by the server")
        return self.recv(timeout)

    # -- requests
    def request(self, channel, msg_type, content, reply_type, timeout=60):
        """Sends a request, returns (reply, iopub messages of it) once the
        reply and the kernel's idle status for it have both arrived."""
        mid = self.send(channel, msg_type, content)
        reply, iopub, idle = None, [], False
        deadline = time.monotonic() + timeout
        while reply is None or not idle:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{msg_type}: reply {reply is not None}, idle {idle} after {timeout} s")
            m = self.recv(left)
            if m is None:
                continue
            if m.get("parent_header", {}).get("msg_id") != mid:
                continue
            if m["channel"] == "iopub":
                iopub.append(m)
                if m["header"]["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                    idle = True
            elif m["header"]["msg_type"] == reply_type:
                reply = m
        return reply, iopub

    def kernel_info(self, timeout=60):
        return self.request("shell", "kernel_info_request", {}, "kernel_info_reply", timeout)[0]

    def wait_ready(self, timeout=120):
        """kernel_info until it is answered (a kernel just started or
        restarted may miss the first one), as Jupyter clients do."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no kernel_info_reply in {timeout} s")
            mid = self.send("shell", "kernel_info_request", {})
            end = time.monotonic() + min(5, left)
            while time.monotonic() < end:
                m = self.recv(end - time.monotonic())
                if m and m["header"]["msg_type"] == "kernel_info_reply" and m["parent_header"].get("msg_id") == mid:
                    return m

    def execute(self, code, timeout=60):
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        return Result(*self.request("shell", "execute_request", content, "execute_reply", timeout))


def encode_v1(channel, msg):
    parts = [json.dumps(msg[k]).encode() for k in ("header", "parent_header", "metadata", "content")]
    parts += list(msg.get("buffers") or [])
    ch = channel.encode()
    nbuf = 1 + 1 + len(parts) + 1  # count, offsets (channel start, each part start, end)
    offsets = [8 * nbuf]
    offsets.append(offsets[-1] + len(ch))
    for p in parts:
        offsets.append(offsets[-1] + len(p))
    head = struct.pack("<Q", len(offsets)) + b"".join(struct.pack("<Q", o) for o in offsets)
    return head + ch + b"".join(parts)


def decode_v1(data):
    n = struct.unpack_from("<Q", data, 0)[0]
    if n < 6 or 8 * (n + 1) > len(data):
        raise ValueError(f"v1 frame: {n} offsets in {len(data)} bytes")
    offs = [struct.unpack_from("<Q", data, 8 * (i + 1))[0] for i in range(n)]
    if offs[0] != 8 * (n + 1) or any(b < a for a, b in zip(offs, offs[1:])) or offs[-1] > len(data):
        raise ValueError(f"v1 frame: bad offsets {offs[:8]} for {len(data)} bytes")
    chunks = [data[offs[i] : offs[i + 1]] for i in range(n - 1)]
    msg = {k: json.loads(c) for k, c in zip(("header", "parent_header", "metadata", "content"), chunks[1:5])}
    msg["channel"] = chunks[0].decode()
    msg["buffers"] = chunks[5:]
    return msg


def decode_legacy_binary(data):
    # jupyter_server's serialize_binary_message: a big-endian count of
    # offsets, the offsets, then the JSON message and its buffers.
    n = struct.unpack_from(">I", data, 0)[0]
    offs = [struct.unpack_from(">I", data, 4 * (i + 1))[0] for i in range(n)] + [len(data)]
    msg = json.loads(data[offs[0] : offs[1]])
    msg["buffers"] = [data[offs[i] : offs[i + 1]] for i in range(1, n)]
    return msg


# -- check lines --------------------------------------------------------------


class Checks:
    """`ok <n> <what>` / `FAIL <n> <what>` lines (with `# ` detail lines
    after a failure), as tests/js/jupyter_services_run.mjs prints them."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def report(self, ok, what, detail=""):
        self.n += 1
        print(f"{'ok' if ok else 'FAIL'} {self.n} {what}", flush=True)
        if not ok:
            self.failed += 1
            for line in str(detail).splitlines()[-12:]:
                print(f"# {line}"[:600], flush=True)

    def check(self, what, fn, *args):
        """Runs fn(*args): passed when it returns without raising; a string
        it returns is shown after the name. Returns True when it passed."""
        import traceback

        try:
            note = fn(*args)
        except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
            self.report(False, what, f"{type(e).__name__}: {e}\n" + traceback.format_exc(limit=3))
            return False
        self.report(True, what + (f" ({note})" if isinstance(note, str) and note else ""))
        return True

    def skip_rest(self, what, count):
        for _ in range(count):
            self.report(False, f"{what} (not run)")

    def finish(self):
        print(f"# {self.n - self.failed} of {self.n} checks passed", flush=True)
        return 1 if self.failed else 0


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def wait_until(cond, timeout, what, step=0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        time.sleep(step)


# -- a plain jupyter_server on this host ------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    # SIGTERM when the test that started the server dies (killed by a
    # timeout, a broken pipe): jupyter stops and shuts its kernels down.
    import ctypes

    PR_SET_PDEATHSIG = 1
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class DevServer:
    """A plain jupyter_server (Debian's 1.23) in a temporary folder, with a
    random token, on a free port of 127.0.0.1. `extra` are more command
    line options (e.g. --gateway-url=...)."""

    def __init__(self, extra=(), module="jupyter_server", log_name="server.log"):
        self.extra = list(extra)
        self.module = module
        self.log_name = log_name
        self.dir = None
        self.proc = None
        self.token = secrets.token_hex(16)
        self.port = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def server(self):
        return Server(self.url, self.token)

    def start(self, timeout=60):
        self.dir = tempfile.mkdtemp(prefix="gavel-kclients-dev.")
        env = dict(os.environ)
        env.update(
            JUPYTER_RUNTIME_DIR=f"{self.dir}/runtime",
            JUPYTER_CONFIG_DIR=f"{self.dir}/config",
            JUPYTER_DATA_DIR=f"{self.dir}/data",
            JUPYTER_PLATFORM_DIRS="0",
            PYDEVD_DISABLE_FILE_VALIDATION="1",
            IPYTHONDIR=f"{self.dir}/ipython",
            MPLCONFIGDIR=f"{self.dir}/mpl",
        )
        for _ in range(5):
            self.port = free_port()
            args = [
                PYTHON, "-m", self.module,
                f"--port={self.port}", "--ip=127.0.0.1", "--no-browser",
                f"--ServerApp.token={self.token}" if self.module == "jupyter_server"
                else f"--NotebookApp.token={self.token}",
                f"--notebook-dir={self.dir}" if self.module == "notebook" else f"--ServerApp.root_dir={self.dir}",
                "--port-retries=0",
            ]
            if os.geteuid() == 0:
                args.append("--allow-root")
            args += self.extra
            log = open(os.path.join(self.dir, self.log_name), "ab")
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, cwd=self.dir, start_new_session=True, preexec_fn=_die_with_parent)
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                        return self
                except OSError:
                    time.sleep(0.2)
            if self.proc.poll() is None:
                break
        raise RuntimeError(f"{self.module} did not start: {self.log()[-2000:]}")

    def log(self):
        with contextlib.suppress(OSError), open(os.path.join(self.dir, self.log_name), errors="replace") as f:
            return f.read()
        return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # jupyter asks; twice stops, shutting kernels down
            time.sleep(0.2)
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                pass
        if self.proc:
            # The kernels it started are in its session (process group).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.proc.wait(5)
        if self.dir and not os.environ.get("GAVEL_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def target_from_args(argv, usage):
    """(Server, DevServer or None) from `BASE_URL TOKEN` or the environment
    (GAVEL_KERNELS_URL, GAVEL_KERNELS_TOKEN); with neither, a plain local
    jupyter_server is started (development mode)."""
    base = argv[0] if argv else os.environ.get("GAVEL_KERNELS_URL")
    token = argv[1] if len(argv) > 1 else os.environ.get("GAVEL_KERNELS_TOKEN")
    if base and token is None:
        sys.exit(usage)
    if base:
        return Server(base, token), None
    dev = DevServer().start()
    print(f"# no BASE_URL given: a plain local jupyter_server at {dev.url} (ipykernel on the host, no sandbox)", flush=True)
    return dev.server(), dev


def _serve(state_file, extra):
    """`kclient.py serve STATE_FILE [jupyter_server options...]`: a plain
    jupyter_server until SIGTERM/SIGINT; writes "URL TOKEN\\n" to STATE_FILE
    once it listens (for the shell wrappers)."""
    dev = DevServer(extra=extra).start()
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    try:
        tmp = state_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{dev.url} {dev.token} {dev.dir}\n")
        os.rename(tmp, state_file)
        while not stop and dev.proc.poll() is None:
            time.sleep(0.2)
    finally:
        dev.stop()


def _start_and_run(base, token, code):
    """`kclient.py start-and-run BASE TOKEN CODE`: starts a kernel and
    prints its id, waits until it answers, sends CODE to run (without
    waiting for it to end), then closes the WebSocket (for the shell tests
    that watch what the service does with the kernel then)."""
    server = Server(base, token)
    kid = server.start()["id"]
    print(kid, flush=True)
    ch = server.connect(kid)
    try:
        ch.wait_ready()
        ch.send("shell", "execute_request", {"code": code, "silent": False, "store_history": False,
                                             "user_expressions": {}, "allow_stdin": False,
                                             "stop_on_error": False})
        # The request is in once the kernel says it is busy with it.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = ch.recv(deadline - time.monotonic())
            if m and m["channel"] == "iopub" and m["header"]["msg_type"] == "status" \
                    and m["content"]["execution_state"] == "busy":
                break
    except ConnectionError:
        pass  # the code ended the kernel already (what some callers want)
    finally:
        ch.close()


USAGE = """usage: kclient.py serve STATE_FILE [jupyter_server options...]
       kclient.py start-and-run BASE_URL TOKEN CODE"""

if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        _serve(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 5 and sys.argv[1] == "start-and-run":
        _start_and_run(*sys.argv[2:])
    else:
        sys.exit(USAGE)
