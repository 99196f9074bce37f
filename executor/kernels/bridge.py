"""Gavel's kernel bridge: the program gavel-init runs in a kernel sandbox.

It starts ipykernel as its child (ipc transport under a private folder in
/tmp, a random HMAC key that never leaves the sandbox), speaks ZMQ to it,
and speaks the frame protocol of executor/kernels/README.md ("The bridge")
on its stdin and stdout: host commands in, `msg`/`state`/`ready` frames out.

Run with Debian's interpreter and its dist-packages:
    /usr/bin/python3 -I /box/bridge.py

Exit status: 0 when stdin ends (the host is done), 2 for a header line from
the host outside the grammar, 3 when the kernel process ended (the executor
decides whether to restart), 1 for the bridge's own failure.

Nothing but whole frames ever reaches the protocol channel: it is a private
duplicate of fd 1, and fd 1 itself is pointed at stderr at start, so a
stray print (ours or a library's) cannot corrupt the stream. Client and
kernel messages are untrusted: a malformed one is dropped, never fatal.
"""

import os
import sys

# The kernel's program (python3 -I -c): ipykernel_launcher with two changes
# the sandbox needs (AF_UNIX sockets only):
# - no debugger: debugpy listens on TCP, and importing it costs start time;
#   with the import refused ipykernel reports `debugger: false`;
# - the pipe that carries the output of forked children (multiprocessing)
#   to the IOPub thread is ipc under our folder instead of
#   tcp://127.0.0.1: libzmq aborts the whole kernel when it cannot list the
#   network interfaces (netlink) to resolve that address.
KERNEL_LAUNCHER = """
import os, sys
sys.modules["debugpy"] = None
import zmq
from zmq.eventloop.zmqstream import ZMQStream
from ipykernel.iostream import IOPubThread
PIPE = %r
def pipe_in(self):
    self._pipe_uuid = os.urandom(16)
    sock = self.socket.context.socket(zmq.PULL)
    sock.linger = 0
    sock.bind(PIPE)
    self._pipe_in = ZMQStream(sock, self.io_loop)
    self._pipe_in.on_recv(self._handle_pipe_msg)
def pipe_out(self):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PUSH)
    sock.linger = 3000
    sock.connect(PIPE)
    return ctx, sock
if hasattr(IOPubThread, "_setup_pipe_in") and hasattr(IOPubThread, "_setup_pipe_out"):
    IOPubThread._setup_pipe_in = pipe_in
    IOPubThread._setup_pipe_out = pipe_out
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""
KERNEL_ARGS = ("--HistoryManager.enabled=False",)


def _start_kernel():
    """Create the private folder, the connection file and the kernel child.

    Returns (popen, base dir, connection info dict). The folder name is
    random so that two bridges on one host (tests) never share sockets; in
    a sandbox /tmp is private and wiped between jobs anyway.
    """
    import json
    import subprocess

    base = "/tmp/gv-kernel-" + os.urandom(8).hex()
    # Sticky bit given at creation: jupyter_client otherwise chmods the
    # folder of the connection file, a call the program policy refuses.
    os.mkdir(base, 0o1700)
    dirs = {}
    for name in ("mpl", "ipython", "runtime", "data", "config", "fontconfig", "cache"):
        dirs[name] = os.path.join(base, name)
        os.mkdir(dirs[name], 0o700)
    # IPython's profile folder made in advance: on first use IPython copies a
    # README into startup/ with shutil.copy, whose chmod the program policy
    # refuses (EPERM), and the kernel dies. An existing README is kept.
    profile = os.path.join(dirs["ipython"], "profile_default")
    os.mkdir(profile, 0o755)
    for name in ("startup", "log", "security", "pid"):
        os.mkdir(os.path.join(profile, name), 0o700 if name in ("security", "pid") else 0o755)
    os.close(os.open(os.path.join(profile, "startup", "README"),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
    # Fontconfig (matplotlib runs fc-list) reads /etc/fonts/fonts.conf and
    # writes its cache under $XDG_CACHE_HOME; the sandbox's /etc has no
    # fonts and $HOME is read-only, so each matplotlib cell printed
    # "Fontconfig error". A config of our own: Debian's font folders, the
    # cache in this private folder.
    os.mkdir(os.path.join(dirs["cache"], "fontconfig"), 0o700)
    fonts_conf = os.path.join(dirs["fontconfig"], "fonts.conf")
    fd = os.open(fonts_conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
                "  <dir>/usr/share/fonts</dir>\n"
                "  <cachedir>%s</cachedir>\n</fontconfig>\n" % os.path.join(dirs["cache"], "fontconfig"))
    work = "/tmp/work"
    try:
        os.mkdir(work, 0o755)
    except FileExistsError:
        pass
    info = {
        "transport": "ipc",
        "ip": os.path.join(base, "k"),
        "shell_port": 1,
        "iopub_port": 2,
        "stdin_port": 3,
        "control_port": 4,
        "hb_port": 5,
        "key": os.urandom(32).hex(),
        "signature_scheme": "hmac-sha256",
        "kernel_name": "python3",
    }
    path = os.path.join(dirs["runtime"], "kernel.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f)

    env = dict(os.environ)
    env.update({
        "MPLCONFIGDIR": dirs["mpl"],
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        # Debian's matplotlib looks for its rc file in the cwd, $MATPLOTLIBRC,
        # $MPLCONFIGDIR and /etc/matplotlibrc only; the sandbox has no /etc.
        "MATPLOTLIBRC": "/usr/share/matplotlib/mpl-data/matplotlibrc",
        "FONTCONFIG_FILE": fonts_conf,
        "XDG_CACHE_HOME": dirs["cache"],
        "IPYTHONDIR": dirs["ipython"],
        "JUPYTER_RUNTIME_DIR": dirs["runtime"],
        "JUPYTER_DATA_DIR": dirs["data"],
        "JUPYTER_CONFIG_DIR": dirs["config"],
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # ipykernel exits when it is re-parented to pid 1 (the bridge died).
        "JPY_PARENT_PID": str(os.getpid()),
    })
    env.setdefault("HOME", "/tmp")
    env.setdefault("PATH", "/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    launcher = KERNEL_LAUNCHER % ("ipc://" + os.path.join(base, "pipe"),)
    argv = ["/usr/bin/python3", "-I", "-c", launcher, "-f", path]
    argv.extend(KERNEL_ARGS)
    # Its own session: the interrupt reaches its subprocesses too (as
    # jupyter_client's killpg does), and nothing it does signals us.
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=work, env=env,
                            close_fds=True, start_new_session=True)
    return proc, base, info


MAX_LINE = 128                    # a header line from the host, "\n" included
MAX_IN = 10 * 1024 * 1024         # a `msg` payload from the host
MAX_OUT = 16 * 1024 * 1024        # a payload to the host
RATE_MSGS = 1000                  # iopub messages per second, over the window
RATE_BYTES = 10 * 1000 * 1000     # iopub bytes per second, over the window
RATE_WINDOW = 3.0
DROPPABLE = frozenset(("stream", "display_data", "execute_result", "update_display_data"))
UNCOUNTED = frozenset(("status", "comm_open", "execute_input"))
INBOUND_CHANNELS = ("shell", "control", "stdin")
DELIM = b"<IDS|MSG>"
NUDGE_S = 0.1

EXIT_EOF, EXIT_BRIDGE, EXIT_GRAMMAR, EXIT_KERNEL = 0, 1, 2, 3

RESEED_CODE = (
    "exec('import os, sys, random\\n"
    "random.seed(os.urandom(32))\\n"
    "np = sys.modules.get(\"numpy\")\\n"
    "if np is not None:\\n"
    "    np.random.seed([int.from_bytes(os.urandom(4), \"little\") for _ in range(8)])\\n', {})"
)


class GrammarError(Exception):
    """A header line from the host outside the grammar."""


class KernelGone(Exception):
    """The kernel process ended."""


def _loads(b):
    """JSON of one message part, or None when it is not JSON."""
    import json
    try:
        return json.loads(bytes(b).decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def _u64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def parse_v1(payload):
    """(channel, [header, parent, metadata, content, *buffers]) or None.

    v1.kernel.websocket.jupyter.org: u64 LE count N, N u64 LE offsets, then
    the channel and the parts between consecutive offsets.
    """
    n = len(payload)
    if n < 8:
        return None
    count = _u64(payload, 0)
    if count < 6 or 8 * (count + 1) > n:
        return None
    offs = [_u64(payload, 8 * (i + 1)) for i in range(count)]
    # The last offset is the end of the message, as every serializer writes
    # it (jupyter_server ignores bytes past it; we refuse them).
    if offs[0] < 8 * (count + 1) or offs[-1] != n:
        return None
    for a, b in zip(offs, offs[1:]):
        if b < a:
            return None
    try:
        channel = bytes(payload[offs[0]:offs[1]]).decode("ascii")
    except UnicodeDecodeError:
        return None
    parts = [bytes(payload[offs[i]:offs[i + 1]]) for i in range(1, count - 1)]
    return channel, parts


def build_v1(channel, parts):
    ch = channel.encode()
    count = len(parts) + 2
    offs = [8 * (count + 1)]
    offs.append(offs[-1] + len(ch))
    for p in parts:
        offs.append(offs[-1] + len(p))
    head = count.to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offs)
    return b"".join([head, ch] + parts)


def parse_legacy_binary(b):
    """[json part, *buffers] of Jupyter's serialize_binary_message, or None."""
    n = len(b)
    if n < 4:
        return None
    count = int.from_bytes(b[0:4], "big")
    if count < 1 or 4 * (count + 1) > n:
        return None
    offs = [int.from_bytes(b[4 * (i + 1):4 * (i + 2)], "big") for i in range(count)]
    if offs[0] < 4 * (count + 1):
        return None
    offs.append(n)
    for a, c in zip(offs, offs[1:]):
        if c < a:
            return None
    return [bytes(b[offs[i]:offs[i + 1]]) for i in range(count)]


def build_legacy_binary(jpart, buffers):
    bufs = [jpart] + list(buffers)
    count = len(bufs)
    offs = [4 * (count + 1)]
    for p in bufs[:-1]:
        offs.append(offs[-1] + len(p))
    head = count.to_bytes(4, "big") + b"".join(o.to_bytes(4, "big") for o in offs)
    return b"".join([head] + bufs)


def parse_legacy(payload):
    """(channel, dict parts) of a legacy (json framing) client message, or None."""
    buffers = []
    if payload[:1] == b"\x00":
        bufs = parse_legacy_binary(memoryview(payload)[1:])
        if bufs is None:
            return None
        msg = _loads(bufs[0])
        buffers = bufs[1:]
    else:
        try:
            text = bytes(payload).decode("utf-8")
        except UnicodeDecodeError:
            return None
        msg = _loads(text.encode())
    if not isinstance(msg, dict) or not isinstance(msg.get("header"), dict):
        return None
    channel = msg.get("channel")
    if channel is None:
        channel = "shell"    # as jupyter_server does
    if not isinstance(channel, str):
        return None
    fields = [msg["header"]]
    for key in ("parent_header", "metadata", "content"):
        v = msg.get(key)
        fields.append({} if v is None else v)
    return channel, fields, buffers


def to_legacy(channel, parts):
    """(opcode, payload) of kernel message parts for the json framing, or None."""
    import json
    header = _loads(parts[0])
    if not isinstance(header, dict):
        return None
    msg = {"header": header}
    if "msg_id" in header:
        msg["msg_id"] = header["msg_id"]
    if "msg_type" in header:
        msg["msg_type"] = header["msg_type"]
    for key, p in zip(("parent_header", "metadata", "content"), parts[1:4]):
        v = _loads(p)
        if v is None:
            return None
        msg[key] = v
    msg["channel"] = channel
    buffers = parts[4:]
    try:
        if not buffers:
            msg["buffers"] = []
            return "text", json.dumps(msg).encode("ascii")
        return "binary", build_legacy_binary(json.dumps(msg).encode("ascii"), buffers)
    except (ValueError, RecursionError):
        return None


def serialize(framing, channel, parts):
    """(opcode, payload) for one framing, or None for a message it cannot carry."""
    if framing == "v1":
        return "binary", build_v1(channel, parts)
    return to_legacy(channel, parts)


def split_zmq(frames):
    """The [header, parent, metadata, content, *buffers] of a wire message, or None."""
    try:
        i = frames.index(DELIM)
    except ValueError:
        return None
    parts = frames[i + 2:]
    if len(parts) < 4:
        return None
    return parts


class RateLimit:
    """jupyter_server's iopub limits over a sliding window.

    Every iopub message but status, comm_open and execute_input counts; the
    bytes of the droppable types count towards the data rate. Over either
    limit only the droppable types are dropped, until the rate falls below
    80 % of it; an idle status resets the window.
    """

    def __init__(self):
        import collections
        self.queue = collections.deque()
        self.msgs = 0
        self.bytes = 0
        self.msgs_over = False
        self.bytes_over = False

    def reset(self):
        self.queue.clear()
        self.msgs = self.bytes = 0
        self.msgs_over = self.bytes_over = False

    def check(self, now, msg_type, size):
        """(drop, warning text or None) for one iopub message."""
        if msg_type in UNCOUNTED:
            return False, None
        while self.queue and self.queue[0][0] <= now:
            _, b = self.queue.popleft()
            self.msgs -= 1
            self.bytes -= b
        b = size if msg_type in DROPPABLE else 0
        self.msgs += 1
        self.bytes += b
        self.queue.append((now + RATE_WINDOW, b))
        warning = None
        msg_rate = self.msgs / RATE_WINDOW
        data_rate = self.bytes / RATE_WINDOW
        if msg_rate > RATE_MSGS:
            if not self.msgs_over:
                self.msgs_over = True
                warning = ("IOPub message rate exceeded: output is suspended until it falls "
                           "(limit %d messages/s over %g s).\n" % (RATE_MSGS, RATE_WINDOW))
        elif self.msgs_over and msg_rate < 0.8 * RATE_MSGS:
            self.msgs_over = False
        if data_rate > RATE_BYTES:
            if not self.bytes_over:
                self.bytes_over = True
                warning = ("IOPub data rate exceeded: output is suspended until it falls "
                           "(limit %d bytes/s over %g s).\n" % (RATE_BYTES, RATE_WINDOW))
        elif self.bytes_over and data_rate < 0.8 * RATE_BYTES:
            self.bytes_over = False
        if (self.msgs_over or self.bytes_over) and msg_type in DROPPABLE:
            # a dropped message does not count, as in jupyter_server
            self.queue.pop()
            self.msgs -= 1
            self.bytes -= b
            return True, warning
        return False, warning


class Conn:
    def __init__(self, conn_id, framing, ident):
        self.id = conn_id
        self.framing = framing
        self.ident = ident
        self.sockets = {}
        self.outstanding = 0     # shell requests sent, replies not yet back


class Bridge:
    def __init__(self, proc, base, info, out_fd):
        import hashlib
        import hmac
        import time
        import zmq

        self.zmq = zmq
        self.time = time
        self.proc = proc
        self.base = base
        self.out_fd = out_fd
        self.key = info["key"].encode()
        self.hmac = hmac.new(self.key, digestmod=hashlib.sha256)
        self.session = os.urandom(16).hex()
        self.ctx = zmq.Context()
        self.endpoint = {ch: "ipc://%s-%d" % (info["ip"], info[ch + "_port"])
                         for ch in ("shell", "iopub", "stdin", "control")}
        self.conns = {}
        self.sock_owner = {}     # socket -> (conn or None for ours, channel)
        self.private = set()     # msg_ids of our own requests (nudge, reseed)
        self.restore_check = None  # the reseed after a restore: `ready` at its reply
        self.state = "starting"
        self.ready = False
        self.seen_iopub = False
        self.seen_info_reply = False
        # The kernel's own kernel_info_reply content (from the nudge): a
        # client's kernel_info_request is answered from it while the
        # kernel is idle with no client request outstanding, as the
        # kernel itself would answer, without waking it. A class of
        # kernels restored at once, all asked at once, shares one CPU.
        self.info_content = None
        self.shell_outstanding = 0
        # One connection's sockets made and connected ahead (and so in a
        # template's image): a kernel's first client costs it no connects.
        self.spare = None
        self.rate = RateLimit()
        self.inbuf = bytearray()
        self.pending = None      # (conn id, len) of a `msg` whose payload is incomplete
        self.kernel_out = proc.stdout.fileno()
        os.set_blocking(self.kernel_out, False)

        self.sub = self._socket(zmq.SUB, "iopub", None)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.own_shell = self._socket(zmq.DEALER, "shell", None, b"gv-bridge-" + os.urandom(8).hex().encode())
        self.poller = None
        self._rebuild_poller()

    # ---- sockets -------------------------------------------------------

    def _socket(self, kind, channel, conn, ident=None):
        zmq = self.zmq
        s = self.ctx.socket(kind)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.RECONNECT_IVL, 10)
        if ident is not None:
            s.setsockopt(zmq.IDENTITY, ident)
        s.connect(self.endpoint[channel])
        self.sock_owner[s] = (conn, channel)
        return s

    def _rebuild_poller(self):
        zmq = self.zmq
        p = zmq.Poller()
        p.register(0, zmq.POLLIN)
        p.register(self.kernel_out, zmq.POLLIN)
        for s in self.sock_owner:
            p.register(s, zmq.POLLIN)
        self.poller = p

    # ---- output --------------------------------------------------------

    def write(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]

    def emit_state(self, state):
        if state != self.state:
            self.state = state
            self.write(b"state %s\n" % state.encode())

    def send_frame(self, conn_id, framing, opcode, channel, payload):
        head = b"msg %d %s %s %s %d\n" % (conn_id, framing.encode(), opcode.encode(),
                                          channel.encode(), len(payload))
        self.write(head + payload)

    def make_parts(self, msg_type, content, parent):
        import datetime
        import json
        header = {
            "msg_id": os.urandom(16).hex(),
            "msg_type": msg_type,
            "username": "kernel",
            "session": self.session,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z"),
            "version": "5.3",
        }
        return [json.dumps(x).encode() for x in (header, parent, {}, content)]

    def warn_parts(self, text, parent_part):
        parent = _loads(parent_part)
        if not isinstance(parent, dict):
            parent = {}
        return self.make_parts("stream", {"name": "stderr", "text": text}, parent)

    def deliver(self, conns, channel, parts, to_all):
        """Send one kernel message to a connection or, to_all, to every framing in use."""
        if to_all:
            targets = sorted({c.framing for c in conns})
        else:
            targets = [conns[0].framing]
        for framing in targets:
            out = serialize(framing, channel, parts)
            if out is None:
                continue
            opcode, payload = out
            if len(payload) > MAX_OUT:
                warn = self.warn_parts("Output of %d bytes dropped: a message may carry at most %d bytes.\n"
                                       % (len(payload), MAX_OUT), parts[1])
                out = serialize(framing, "iopub", warn)
                if out is None:
                    continue
                opcode, payload = out
                channel_out = "iopub"
            else:
                channel_out = channel
            self.send_frame(0 if to_all else conns[0].id, framing, opcode, channel_out, payload)

    # ---- kernel → host ---------------------------------------------------

    def on_iopub(self, frames):
        parts = split_zmq(frames)
        if parts is None:
            return
        header = _loads(parts[0])
        if not isinstance(header, dict):
            return
        self.seen_iopub = True
        msg_type = header.get("msg_type")
        parent = _loads(parts[1])
        parent_id = parent.get("msg_id") if isinstance(parent, dict) else None
        if msg_type == "status":
            content = _loads(parts[3])
            st = content.get("execution_state") if isinstance(content, dict) else None
            if parent_id in self.private:
                if st == "idle":
                    self.private.discard(parent_id)
                return
            if st == "idle":
                self.rate.reset()
            if self.ready and st in ("idle", "busy"):
                self.emit_state(st)
        elif parent_id in self.private:
            return
        if not self.conns:
            return
        conns = list(self.conns.values())
        size = sum(len(p) for p in parts)
        drop, warning = self.rate.check(self.time.monotonic(), msg_type, size)
        if warning is not None:
            self.deliver(conns, "iopub", self.warn_parts(warning, parts[1]), True)
        if not drop:
            self.deliver(conns, "iopub", parts, True)

    def on_reply(self, sock, frames):
        conn, channel = self.sock_owner[sock]
        parts = split_zmq(frames)
        if parts is None:
            return
        if conn is None:
            header = _loads(parts[0])
            if isinstance(header, dict) and header.get("msg_type") == "kernel_info_reply":
                self.seen_info_reply = True
                content = _loads(parts[3])
                if isinstance(content, dict) and content.get("status") == "ok":
                    self.info_content = parts[3]
            parent = _loads(parts[1])
            if (self.restore_check is not None and isinstance(parent, dict)
                    and parent.get("msg_id") == self.restore_check):
                # The kernel of this restored sandbox ran its reseed.
                self.restore_check = None
                self.write(b"ready\n")
                # The host of this sandbox never heard the state.
                self.write(b"state " + self.state.encode() + b"\n")
            return
        if channel == "shell" and conn.outstanding > 0:
            conn.outstanding -= 1
            self.shell_outstanding -= 1
        self.deliver([conn], channel, parts, False)

    # ---- host → kernel ---------------------------------------------------

    def sign(self, parts):
        h = self.hmac.copy()
        for p in parts[:4]:
            h.update(p)
        return h.hexdigest().encode()

    def to_kernel(self, sock, parts):
        try:
            sock.send_multipart([DELIM, self.sign(parts)] + parts, flags=self.zmq.NOBLOCK, copy=False)
        except self.zmq.Again:
            pass   # the kernel is not reading (1000 queued): drop, as a full socket would

    def private_request(self, msg_type, content):
        parts = self.make_parts(msg_type, content, {})
        self.private.add(_loads(parts[0])["msg_id"])
        if len(self.private) > 64:
            self.private.pop()
        self.to_kernel(self.own_shell, parts)
        return _loads(parts[0])["msg_id"]

    def on_client_msg(self, conn, payload):
        import json
        if conn.framing == "v1":
            got = parse_v1(payload)
            if got is None:
                return
            channel, parts = got
        else:
            got = parse_legacy(payload)
            if got is None:
                return
            channel, fields, buffers = got
            try:
                parts = [json.dumps(f).encode("ascii") for f in fields] + buffers
            except (ValueError, RecursionError):
                return
        if channel not in INBOUND_CHANNELS:
            return
        if channel == "shell":
            header = _loads(parts[0]) if len(parts) >= 4 and len(parts[0]) <= 4096 else None
            msg_type = header.get("msg_type") if isinstance(header, dict) else None
            if msg_type == "kernel_info_request" and self.answer_kernel_info(conn, parts):
                return
            # Requests owe a reply (comm_msg and its kin do not).
            if not isinstance(msg_type, str) or msg_type.endswith("_request"):
                conn.outstanding += 1
                self.shell_outstanding += 1
        self.to_kernel(conn.sockets[channel], parts)

    def answer_kernel_info(self, conn, parts):
        """A kernel_info_request answered from the kernel's own reply: only
        while it is idle and owes no client a shell reply, so that the
        answer's order and content are what the kernel would give."""
        if self.info_content is None or not self.ready or self.state != "idle" or self.shell_outstanding > 0:
            return False
        conns = list(self.conns.values())
        for state in ("busy", None, "idle"):
            if state is None:
                reply = self.make_parts("kernel_info_reply", {}, {})
                reply[1], reply[3] = parts[0], self.info_content
                self.deliver([conn], "shell", reply, False)
            else:
                status = self.make_parts("status", {"execution_state": state}, {})
                status[1] = parts[0]
                self.deliver(conns, "iopub", status, True)
        return True

    def new_conn(self, conn_id, framing):
        ident = b"gv-%s" % os.urandom(8).hex().encode()
        conn = Conn(conn_id, framing, ident)
        try:
            for ch in INBOUND_CHANNELS:
                conn.sockets[ch] = self._socket(self.zmq.DEALER, ch, conn, ident)
        except self.zmq.ZMQError:
            for s in conn.sockets.values():
                del self.sock_owner[s]
                s.close(linger=0)
            raise
        return conn

    def open_conn(self, conn_id, framing):
        if conn_id in self.conns:
            self.close_conn(conn_id)
        conn, self.spare = self.spare, None
        if conn is not None:
            # Nothing was ever sent on it: a new client's, as made now.
            conn.id, conn.framing = conn_id, framing
        else:
            conn = self.new_conn(conn_id, framing)
            self._rebuild_poller()
        self.conns[conn_id] = conn

    def close_conn(self, conn_id):
        conn = self.conns.pop(conn_id, None)
        if conn is None:
            return
        self.shell_outstanding -= conn.outstanding
        for s in conn.sockets.values():
            del self.sock_owner[s]
            s.close(linger=0)
        self._rebuild_poller()

    def command(self, line):
        """Handle one header line (without "\\n"); returns a `msg` (conn, len) to read."""
        words = line.split(b" ")
        verb = words[0]
        if verb == b"msg" and len(words) == 3:
            conn_id = _conn_id(words[1])
            n = _number(words[2])
            if n > MAX_IN:
                raise GrammarError()
            return conn_id, n
        if verb == b"open" and len(words) == 3:
            conn_id = _conn_id(words[1])
            if words[2] not in (b"v1", b"json"):
                raise GrammarError()
            try:
                self.open_conn(conn_id, words[2].decode())
            except self.zmq.ZMQError:
                pass   # out of descriptors: that connection gets nothing
        elif verb == b"close" and len(words) == 2:
            self.close_conn(_conn_id(words[1]))
        elif verb == b"ping" and len(words) == 2:
            _conn_id(words[1])
        elif line == b"interrupt":
            self.interrupt()
        elif line in (b"reseed", b"restored"):
            msg_id = self.private_request("execute_request", {
                "code": RESEED_CODE, "silent": True, "store_history": False,
                "user_expressions": {}, "allow_stdin": False, "stop_on_error": False})
            if line == b"restored":
                self.restore_check = msg_id
        else:
            raise GrammarError()
        return None

    def interrupt(self):
        import signal
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except OSError:
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except OSError:
                pass

    def on_stdin(self):
        """Read what the host sent; False at EOF."""
        data = os.read(0, 1 << 16)
        if not data:
            return False
        buf = self.inbuf
        buf += data
        while True:
            if self.pending is None:
                i = buf.find(b"\n", 0, MAX_LINE)
                if i < 0:
                    if len(buf) >= MAX_LINE:
                        raise GrammarError()
                    return True
                line = bytes(buf[:i])
                del buf[:i + 1]
                self.pending = self.command(line)
            else:
                conn_id, n = self.pending
                if len(buf) < n:
                    return True
                payload = bytes(buf[:n])
                del buf[:n]
                self.pending = None
                conn = self.conns.get(conn_id)
                if conn is not None:
                    try:
                        self.on_client_msg(conn, payload)
                    except Exception:   # a client message never ends the bridge
                        pass

    # ---- the loop ----------------------------------------------------------

    def drain_kernel_out(self):
        """Discard the kernel's own stdout/stderr; True while it is open."""
        try:
            while True:
                data = os.read(self.kernel_out, 1 << 16)
                if not data:
                    return False
                if len(data) < (1 << 16):
                    return True
        except BlockingIOError:
            return True

    def pump(self, timeout_ms, stdin_too):
        """One poll round; raises KernelGone when the kernel ended."""
        zmq = self.zmq
        events = dict(self.poller.poll(timeout_ms))
        for sock in list(self.sock_owner):
            if sock not in events or sock not in self.sock_owner:
                continue
            for _ in range(256):
                try:
                    frames = sock.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                try:
                    if sock is self.sub:
                        self.on_iopub(frames)
                    else:
                        self.on_reply(sock, frames)
                except (BrokenPipeError, OSError):
                    raise
                except Exception:   # a malformed kernel message never ends the bridge
                    pass
                if sock not in self.sock_owner:
                    break
        if self.kernel_out in events and not self.drain_kernel_out():
            raise KernelGone()
        if self.proc.poll() is not None:
            raise KernelGone()
        if stdin_too and 0 in events:
            return self.on_stdin()
        return True

    def start(self):
        """The nudge: kernel_info_request until both a reply and iopub arrive."""
        nudge_at = 0.0
        while not (self.seen_iopub and self.seen_info_reply):
            now = self.time.monotonic()
            if now >= nudge_at:
                self.private_request("kernel_info_request", {})
                nudge_at = now + NUDGE_S
            self.pump(max(1, int((nudge_at - now) * 1000)), False)
        try:
            self.spare = self.new_conn(None, "v1")
            self._rebuild_poller()
        except self.zmq.ZMQError:
            self.spare = None   # out of descriptors: the first open makes its own
        self.ready = True
        self.write(b"ready\n")
        self.state = "idle"
        self.write(b"state idle\n")

    def run(self):
        while self.pump(1000, True):
            pass

    def finish_kernel(self):
        """After the kernel ended: deliver what it sent last (shutdown_reply...)."""
        end = self.time.monotonic() + 0.3
        try:
            while self.time.monotonic() < end:
                events = dict(self.poller.poll(50))
                got = False
                for sock in list(self.sock_owner):
                    if sock in events:
                        got = True
                        try:
                            frames = sock.recv_multipart(self.zmq.NOBLOCK)
                        except self.zmq.Again:
                            continue
                        try:
                            if sock is self.sub:
                                self.on_iopub(frames)
                            else:
                                self.on_reply(sock, frames)
                        except (BrokenPipeError, OSError):
                            raise
                        except Exception:
                            pass
                if not got:
                    break
        except Exception:
            pass


def _conn_id(word):
    if not (1 <= len(word) <= 18 and word.isdigit() and word[:1] != b"0"):
        raise GrammarError()
    return int(word)


def _number(word):
    if not (1 <= len(word) <= 9 and word.isdigit()) or (len(word) > 1 and word[:1] == b"0"):
        raise GrammarError()
    return int(word)


def _stop_kernel(proc):
    import signal
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            try:
                proc.kill()
            except OSError:
                pass
    try:
        proc.wait(timeout=5)
    except Exception:
        pass


def main():
    # The protocol channel is a private fd; fd 1 becomes stderr so that no
    # stray write of ours reaches the host as a frame.
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    proc, base, info = _start_kernel()
    os.write(out_fd, b"state starting\n")

    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_BRIDGE))

    status = EXIT_BRIDGE
    bridge = None
    try:
        bridge = Bridge(proc, base, info, out_fd)
        bridge.start()
        bridge.run()
        status = EXIT_EOF
    except GrammarError:
        status = EXIT_GRAMMAR
    except KernelGone:
        if bridge is not None:
            bridge.finish_kernel()
        status = EXIT_KERNEL
    except BrokenPipeError:
        status = EXIT_BRIDGE
    finally:
        _stop_kernel(proc)
        import shutil
        shutil.rmtree(base, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
