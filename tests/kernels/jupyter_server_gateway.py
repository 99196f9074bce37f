#!/usr/bin/python3
"""A stock Jupyter Server using a kernel gateway: Debian's jupyter_server
1.23.3, unchanged, started with

    --gateway-url=BASE_URL --GatewayClient.auth_token=TOKEN

(jupyter_server/gateway/: its GatewayClient sends `Authorization: token
TOKEN` on every REST call and on the channels WebSocket, whose URL it
builds from GatewayClient.ws_url, BASE_URL with http turned into ws, and
which it opens with no subprotocol: legacy JSON framing). Then, as a user
of that server would, through *its* REST API and WebSocket
(tests/kernels/kclient.py): kernelspecs, start a kernel, run code,
interrupt, restart, a notebook session, shut down; and checks on the
gateway itself that each kernel really lives there.

    tests/kernels/jupyter_server_gateway.py [BASE_URL TOKEN]

BASE_URL and TOKEN (or GAVEL_KERNELS_URL and GAVEL_KERNELS_TOKEN): the
gateway, e.g. Gavel's frontend and a tenant key. With neither, the gateway
is a second plain local jupyter_server (development). Prints `ok N what` /
`FAIL N what` lines; exits non-zero when one failed. Run with
/usr/bin/python3 (Debian's jupyter_server, python3-websocket).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import kclient  # noqa: E402
from kclient import expect, wait_until  # noqa: E402

CHECKS = 9
WAIT = 120  # a sandboxed kernel on a loaded 2-core machine


def main():
    gw, gw_dev = kclient.target_from_args(sys.argv[1:], __doc__)
    c = kclient.Checks()
    # GatewayClient.request_timeout bounds every REST call it makes (the
    # kernel start included): generous, for a sandbox on a busy node.
    front = kclient.DevServer(
        extra=[
            f"--gateway-url={gw.base.rstrip('/')}",
            f"--GatewayClient.auth_token={gw.token}",
            f"--GatewayClient.request_timeout={WAIT}",
            "--GatewayClient.connect_timeout=30",
        ],
        log_name="front.log",
    )
    st = {}
    try:
        front.start()
        fs = front.server()
        print(f"# jupyter_server 1.23.3 at {front.url} using the gateway {gw.base}", flush=True)
        run(c, gw, fs, st)
    finally:
        for kid in st.get("cleanup", []):
            try:
                gw.request("DELETE", f"api/kernels/{kid}", expect=None)
            except Exception:  # noqa: BLE001
                pass
        log = front.log() if c.failed else ""
        front.stop()
        if gw_dev:
            gw_dev.stop()
        if log:
            print("# the jupyter_server's log, last lines:")
            for line in log.splitlines()[-25:]:
                print("#   " + line[:300])
    return c.finish()


def run(c, gw, fs, st):
    st["cleanup"] = []

    def specs():
        mine = fs.kernelspecs()
        theirs = gw.kernelspecs()
        expect(mine["default"] == theirs["default"], f"default {mine['default']} != gateway's {theirs['default']}")
        expect(set(mine["kernelspecs"]) == set(theirs["kernelspecs"]), f"{list(mine['kernelspecs'])} != {list(theirs['kernelspecs'])}")
        one = fs.request("GET", "api/kernelspecs/python3")[1]
        expect(one["name"] == "python3" and one["spec"]["language"].lower() == "python", one)
        return f"{sorted(mine['kernelspecs'])}, default {mine['default']}"

    c.check("GET api/kernelspecs and api/kernelspecs/python3 on the server: the gateway's specs", specs)

    def start():
        t0 = time.monotonic()
        k = fs.start("python3")
        st["kid"] = k["id"]
        st["cleanup"].append(k["id"])
        expect(gw.kernel(k["id"]) is not None, f"the gateway does not know {k['id']}")
        listed = [m["id"] for m in fs.kernels()]
        expect(k["id"] in listed, f"the server lists {listed}")
        return f"{(time.monotonic() - t0) * 1000:.0f} ms, id {k['id']}"

    if not c.check("POST api/kernels on the server: 201, the kernel is the gateway's (GET on the gateway: 200)", start):
        c.skip_rest("no kernel", CHECKS - 2)
        return
    kid = st["kid"]

    def connect():
        ch = fs.connect(kid, framing="json", auth="header", timeout=WAIT)
        st["ch"] = ch
        info = ch.wait_ready(WAIT)
        expect(info["content"]["language_info"]["name"] == "python", info["content"])
        r = ch.execute("print(6*7)")
        expect(r.status == "ok" and r.stdout() == "42\n", r.brief())
        r = ch.execute("1+1")
        expect(r.result() == "2", r.brief())
        r = ch.execute("1/0")
        expect(r.status == "error" and r.ename() == "ZeroDivisionError" and r.of("error"), r.brief())
        return f"{ch.frames['text']} text frames, {ch.frames['binary']} binary"

    if not c.check("the server's channels WebSocket (proxied to the gateway's): kernel_info, print(6*7) -> 42, 1+1 -> 2, 1/0 -> ZeroDivisionError", connect):
        c.skip_rest("no channels", CHECKS - 3)
        return
    ch = st["ch"]

    def interrupt():
        mid = ch.send("shell", "execute_request", {"code": "import time; time.sleep(60)", "silent": False,
                                                   "store_history": True, "user_expressions": {},
                                                   "allow_stdin": False, "stop_on_error": True})

        def started():
            m = ch.recv(1)
            return m and m["parent_header"].get("msg_id") == mid and m["header"]["msg_type"] == "execute_input"

        wait_until(started, 60, "execute_input of the sleep", step=0)
        time.sleep(0.3)
        t0 = time.monotonic()
        fs.interrupt(kid)
        reply = None
        while reply is None and time.monotonic() - t0 < 30:
            m = ch.recv(1)
            if m and m["parent_header"].get("msg_id") == mid and m["header"]["msg_type"] == "execute_reply":
                reply = m
        ms = (time.monotonic() - t0) * 1000
        print(f"# interrupt latency through the server: {ms:.0f} ms (POST interrupt to execute_reply)", flush=True)
        expect(reply and reply["content"]["ename"] == "KeyboardInterrupt", reply and reply["content"])
        expect(ms <= 2000, f"{ms:.0f} ms")
        # ipykernel aborts what reaches it while it still handles the
        # error of a stop_on_error request ("aborted" replies): a client
        # sends again, as notebooks let their user do.
        for _ in range(3):
            r = ch.execute("1+1")
            if r.status != "aborted":
                break
            time.sleep(0.5)
        expect(r.result() == "2", r.brief())
        return f"{ms:.0f} ms"

    c.check("POST api/kernels/{id}/interrupt on the server: time.sleep(60) ends in KeyboardInterrupt within 2 s", interrupt)

    def restart():
        r = ch.execute("x = 41")
        expect(r.status == "ok", r.brief())
        t0 = time.monotonic()
        m = fs.restart(kid)
        expect(m["id"] == kid, m)
        # As Jupyter clients do after a restart: a new WebSocket.
        ch.close()
        ch2 = fs.connect(kid, framing="json", auth="header", timeout=WAIT)
        st["ch"] = ch2
        ch2.wait_ready(WAIT)
        ms = (time.monotonic() - t0) * 1000
        r = ch2.execute("x")
        expect(r.status == "error" and r.ename() == "NameError", r.brief())
        return f"{ms:.0f} ms to kernel_info_reply"

    c.check("POST api/kernels/{id}/restart on the server: same id, a fresh kernel (x defined before: NameError)", restart)

    def model():
        m = fs.kernel(kid)
        expect(m and m["id"] == kid and m["execution_state"] in ("idle", "busy", "starting"), m)
        listed = [k["id"] for k in fs.kernels()]
        expect(kid in listed, listed)
        g = gw.kernel(kid)
        expect(g and isinstance(g.get("connections"), int) and g["connections"] >= 1, f"gateway's model {g}")
        return f"server: {m['execution_state']}, gateway: {g['connections']} connection(s)"

    c.check("the kernel's model on the server (refreshed from the gateway's: last_activity, execution_state, connections)", model)

    def session():
        s = fs.request("POST", "api/sessions", {"path": "probe.ipynb", "name": "probe.ipynb", "type": "notebook",
                                                 "kernel": {"name": "python3"}}, expect=(201,))[1]
        skid = s["kernel"]["id"]
        st["cleanup"].append(skid)
        expect(gw.kernel(skid) is not None, f"the gateway does not know the session's kernel {skid}")
        sch = fs.connect(skid, framing="json", auth="header", timeout=WAIT)
        try:
            sch.wait_ready(WAIT)
            r = sch.execute("print('from a session')")
            expect(r.stdout() == "from a session\n", r.brief())
        finally:
            sch.close()
        fs.request("DELETE", f"api/sessions/{s['id']}", expect=(204,))
        wait_until(lambda: gw.kernel(skid) is None, 30, "the session's kernel gone from the gateway")

    c.check("a notebook session (POST api/sessions, then DELETE): its kernel starts on the gateway, runs, and is deleted there", session)

    def shutdown():
        st["ch"].close()
        fs.delete(kid)
        expect(kid not in [k["id"] for k in fs.kernels()], "still listed by the server")
        wait_until(lambda: gw.kernel(kid) is None, 30, "the kernel gone from the gateway")
        expect(kid not in [k["id"] for k in gw.kernels()], "still listed by the gateway")

    c.check("DELETE api/kernels/{id} on the server: gone from the server's list and from the gateway (404)", shutdown)

    def unknown():
        status, _ = fs.request("GET", f"api/kernels/{kid}", expect=None)
        expect(status == 404, f"GET of the deleted kernel on the server: {status}")
        status, _ = fs.request("GET", "api/kernelspecs/no-such-kernel", expect=None)
        expect(status == 404, f"GET api/kernelspecs/no-such-kernel: {status}")

    c.check("the deleted kernel and an unknown kernelspec: 404 on the server", unknown)


if __name__ == "__main__":
    sys.exit(main())
