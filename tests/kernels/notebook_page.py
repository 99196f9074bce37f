#!/usr/bin/python3
"""The classic Jupyter Notebook (Debian's python3-notebook 6.4.12, which
has a kernel gateway client of its own, notebook/gateway/) started with

    --gateway-url=BASE_URL --GatewayClient.auth_token=TOKEN

and a notebook of one cell, `print(6*7)`, in a temporary folder; the page
is opened in Debian's headless Chromium (tests/kernels/notebook_page.mjs,
puppeteer-core from tests/js), the cell run with Shift+Enter, and `42`
awaited in its output. Then, on the gateway: the page's kernel was one of
its kernels, and it is gone once the notebook's session is deleted.

    tests/kernels/notebook_page.py [BASE_URL TOKEN] [--screenshot PATH]

BASE_URL and TOKEN (or GAVEL_KERNELS_URL and GAVEL_KERNELS_TOKEN): the
gateway, e.g. Gavel's frontend and a tenant key; with neither, a plain
local jupyter_server (development). The screenshot defaults to
/tmp/gavel-notebook-page.png. Installs the npm clients when needed
(tests/lib/npm.sh); needs /usr/bin/chromium (tests/lib/chromium.sh).
Prints `ok N what` / `FAIL N what` lines; exits non-zero when one failed.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import kclient  # noqa: E402
from kclient import expect, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NODE_CHECKS = 4  # CHECKS of notebook_page.mjs
WAIT = 180


def notebook(code):
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "c0", "metadata": {}, "outputs": [],
                   "source": code}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def main():
    argv = sys.argv[1:]
    shot = "/tmp/gavel-notebook-page.png"
    if "--screenshot" in argv:
        i = argv.index("--screenshot")
        shot = os.path.abspath(argv[i + 1])
        del argv[i : i + 2]
    c = kclient.Checks()
    r = subprocess.run(["bash", "-c", f'ROOT="{ROOT}"; . "$ROOT/tests/lib/npm.sh"; npm_clients_ready'],
                       capture_output=True, text=True)
    if r.returncode != 0:
        c.report(False, "the npm clients of tests/js", r.stderr)
        return c.finish()
    if not os.access(os.environ.get("CHROMIUM", "/usr/bin/chromium"), os.X_OK):
        c.report(False, "Chromium is missing (tests/lib/chromium.sh installs it)")
        return c.finish()

    gw, gw_dev = kclient.target_from_args(argv, __doc__)
    nb = kclient.DevServer(
        module="notebook",
        extra=[
            f"--gateway-url={gw.base.rstrip('/')}",
            f"--GatewayClient.auth_token={gw.token}",
            f"--GatewayClient.request_timeout={WAIT}",
            "--GatewayClient.connect_timeout=30",
        ],
        log_name="notebook.log",
    )
    before = set()
    page_kernels = []
    try:
        before = {k["id"] for k in gw.kernels()}
        nb.start()
        # The notebook file, where the notebook server serves from.
        with open(os.path.join(nb.dir, "probe.ipynb"), "w") as f:
            json.dump(notebook("print(6*7)"), f)
        print(f"# classic notebook 6.4 at {nb.url} using the gateway {gw.base}", flush=True)
        url = f"{nb.url}notebooks/probe.ipynb?token={nb.token}"
        p = subprocess.run(["node", os.path.join(HERE, "notebook_page.mjs"), url, "42", shot],
                           capture_output=True, text=True, timeout=WAIT * 3)
        for line in p.stdout.splitlines():
            if line.startswith(("ok ", "FAIL ")):
                word, _, what = line.split(" ", 2)
                c.report(word == "ok", what)
            elif line.startswith("# "):
                print(line, flush=True)
        missing = NODE_CHECKS - sum(1 for line in p.stdout.splitlines() if line.startswith(("ok ", "FAIL ")))
        if p.returncode != 0 or missing:
            for line in (p.stderr.splitlines()[-15:]):
                print("# node: " + line[:300])
            c.skip_rest("notebook_page.mjs", max(missing, 0))

        def on_gateway():
            sessions = nb.server().request("GET", "api/sessions")[1]
            expect(len(sessions) == 1, f"sessions on the notebook server: {sessions}")
            kid = sessions[0]["kernel"]["id"]
            page_kernels.append(kid)
            expect(kid not in before and gw.kernel(kid) is not None, f"the page's kernel {kid} is not the gateway's")
            nb.server().request("DELETE", f"api/sessions/{sessions[0]['id']}", expect=(204,))
            wait_until(lambda: gw.kernel(kid) is None, 30, "the kernel gone from the gateway")
            return f"kernel {kid}"

        c.check("the page's kernel was the gateway's, and is gone there once its session is deleted", on_gateway)
    except Exception as e:  # noqa: BLE001
        c.report(False, "the notebook server", f"{type(e).__name__}: {e}")
    finally:
        log = nb.log() if c.failed else ""
        # The page's kernel, when the test did not get to delete it.
        for kid in page_kernels:
            try:
                gw.request("DELETE", f"api/kernels/{kid}", expect=None)
            except Exception:  # noqa: BLE001
                pass
        nb.stop()
        if gw_dev:
            gw_dev.stop()
        if log:
            print("# the notebook server's log, last lines:")
            for line in log.splitlines()[-20:]:
                print("#   " + line[:300])
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
