#!/usr/bin/python3
"""`jupyter nbconvert --execute` through a local jupyter_server pointed at
a kernel gateway, as a notebook pipeline runs it: Debian's nbconvert 6.5
and nbclient 0.7, unchanged, with nbclient's kernel manager set to
jupyter_server's GatewayKernelManager (`--ExecutePreprocessor.
kernel_manager_class=jupyter_server.gateway.managers.GatewayKernelManager`,
JUPYTER_GATEWAY_URL) and pointed at a local jupyter_server 1.23 that
itself runs with `--gateway-url=BASE_URL --GatewayClient.auth_token=TOKEN`.
Both of jupyter_server's gateway clients are in the path: nbclient's
messages reach the gateway relayed, without a `channel` key (Jupyter's
own server takes those as shell). The local server runs without a token:
GatewayKernelClient 1.23 opens its WebSocket with no credentials.

    tests/kernels/nbconvert_gateway.py [BASE_URL TOKEN]

Checks: the notebook executes; `print(6*7)` shows 42; a matplotlib cell
shows a PNG; no cell prints a Fontconfig error (or anything) on stderr;
the kernel is gone from the gateway afterwards. Prints `ok N what` /
`FAIL N what`; exits non-zero when one failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import kclient  # noqa: E402
from kclient import expect  # noqa: E402

CHECKS = 5
WAIT = 120
CELLS = ["print(6*7)", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"]


def notebook(path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3",
          "display_name": "Python 3", "language": "python"}},
          "cells": [{"cell_type": "code", "id": "c%d" % i, "metadata": {}, "execution_count": None,
                     "outputs": [], "source": src} for i, src in enumerate(CELLS)]}
    with open(path, "w") as f:
        json.dump(nb, f)


def main():
    gw, gw_dev = kclient.target_from_args(sys.argv[1:], __doc__)
    c = kclient.Checks()
    front = kclient.DevServer(
        extra=[f"--gateway-url={gw.base.rstrip('/')}", f"--GatewayClient.auth_token={gw.token}",
               f"--GatewayClient.request_timeout={WAIT}", "--GatewayClient.connect_timeout=30",
               "--ServerApp.disable_check_xsrf=True"],
        log_name="front.log")
    front.token = ""  # no credentials on GatewayKernelClient's WebSocket
    work = tempfile.mkdtemp(prefix="gavel-nbconvert.")
    out = {}
    before = {k["id"] for k in gw.kernels()}
    try:
        front.start()
        print(f"# jupyter_server 1.23.3 at {front.url} using the gateway {gw.base}", flush=True)
        notebook(os.path.join(work, "in.ipynb"))

        def execute():
            env = dict(os.environ, JUPYTER_GATEWAY_URL=front.url.rstrip("/"),
                       JUPYTER_GATEWAY_REQUEST_TIMEOUT=str(WAIT), JUPYTER_GATEWAY_CONNECT_TIMEOUT="30")
            t0 = time.monotonic()
            p = subprocess.run(
                [kclient.PYTHON, "-m", "nbconvert", "--execute", "--to", "notebook", "--output", "out.ipynb",
                 f"--ExecutePreprocessor.timeout={WAIT}",
                 "--ExecutePreprocessor.kernel_manager_class=jupyter_server.gateway.managers.GatewayKernelManager",
                 "in.ipynb"], cwd=work, env=env, capture_output=True, text=True, timeout=3 * WAIT)
            expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-1500:]}")
            with open(os.path.join(work, "out.ipynb")) as f:
                out["nb"] = json.load(f)
            return f"{time.monotonic() - t0:.1f} s"

        if not c.check("jupyter nbconvert --execute through the local jupyter_server: the notebook ran", execute):
            c.skip_rest("not executed", CHECKS - 1)
            return c.finish()
        cells = out["nb"]["cells"]

        def printed():
            texts = ["".join(o.get("text", "")) for o in cells[0]["outputs"] if o.get("name") == "stdout"]
            expect(texts == ["42\n"], cells[0]["outputs"])

        c.check("print(6*7) shows 42", printed)

        def png():
            import base64
            imgs = [o["data"]["image/png"] for o in cells[1]["outputs"] if "image/png" in o.get("data", {})]
            expect(len(imgs) == 1, cells[1]["outputs"])
            expect(base64.b64decode(imgs[0])[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")

        c.check("a matplotlib cell shows a PNG", png)

        def quiet():
            err = ["".join(o.get("text", "")) for cell in cells for o in cell["outputs"] if o.get("name") == "stderr"]
            expect(not err, err)

        c.check("no cell prints on stderr (no Fontconfig error)", quiet)

        def gone():
            for _ in range(60):
                left = {k["id"] for k in gw.kernels()} - before
                if not left:
                    return ""
                time.sleep(0.5)
            raise AssertionError(f"left on the gateway: {left}")

        c.check("the kernel is gone from the gateway afterwards", gone)
    finally:
        log = front.log() if c.failed else ""
        front.stop()
        if gw_dev:
            gw_dev.stop()
        if log:
            print("# the jupyter_server's log, last lines:")
            for line in log.splitlines()[-25:]:
                print("#   " + line[:300])
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
