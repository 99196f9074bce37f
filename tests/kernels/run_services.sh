#!/usr/bin/env bash
# JupyterLab's own client library, @jupyterlab/services (tests/js, pinned),
# against a kernel gateway: tests/js/jupyter_services_run.mjs in both
# WebSocket framings (v1.kernel.websocket.jupyter.org, then legacy JSON).
#
#   tests/kernels/run_services.sh [BASE_URL TOKEN]
#
# BASE_URL and TOKEN (or GAVEL_KERNELS_URL and GAVEL_KERNELS_TOKEN) name the
# server, e.g. Gavel's frontend and a tenant key. With neither, a plain
# local jupyter_server is started and used (development: how the script
# itself is checked). Installs the npm clients when needed
# (tests/lib/npm.sh). Prints the script's `ok N what` / `FAIL N what`
# lines; exits non-zero when one failed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BASE=${1:-${GAVEL_KERNELS_URL:-}}
TOKEN=${2:-${GAVEL_KERNELS_TOKEN:-}}
KTMP=$(mktemp -d /tmp/gavel-kclients.XXXXXX)
. tests/kernels/lib.sh
trap 'kdev_stop; rm -rf "$KTMP"' EXIT
trap 'exit 130' INT TERM
. tests/lib/npm.sh
npm_clients_ready || { echo "FAIL the npm clients of tests/js could not be installed"; exit 1; }
if [ -z "$BASE" ]; then
	kdev_start services || exit 1
	BASE=$KDEV_URL TOKEN=$KDEV_TOKEN
	echo "# no BASE_URL given: a plain local jupyter_server at $BASE (ipykernel on the host, no sandbox)"
fi
node tests/js/jupyter_services_run.mjs "$BASE" "$TOKEN" both 2>"$KTMP/node.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# node: /' "$KTMP/node.err" | tail -n 20
exit $rc
