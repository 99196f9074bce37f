# shellcheck shell=bash
# Helpers of the kernel client tests (tests/kernels/).
#
# kdev_start NAME [jupyter_server options...]: a plain local jupyter_server
# (Debian's python3-jupyter-server, ipykernel on the host, no sandbox)
# through kclient.py serve; sets KDEV_URL, KDEV_TOKEN and KDEV_DIR (its
# folder, with its server.log). kdev_stop stops every one started. Needs
# KTMP (a temporary folder) and ROOT.
KDEV_PIDS=()
kdev_start() {
	local name=$1 state
	shift
	state=$KTMP/kdev-$name.state
	rm -f "$state"
	/usr/bin/python3 "$ROOT/tests/kernels/kclient.py" serve "$state" "$@" >>"$KTMP/kdev-$name.log" 2>&1 </dev/null &
	KDEV_PIDS+=($!)
	local i
	for i in $(seq 600); do
		[ -s "$state" ] && break
		kill -0 "${KDEV_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -s "$state" ] || { echo "jupyter_server $name did not start: $(tail -n 5 "$KTMP/kdev-$name.log")" >&2; return 1; }
	read -r KDEV_URL KDEV_TOKEN KDEV_DIR <"$state"
}
kdev_stop() {
	local p
	for p in "${KDEV_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${KDEV_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	KDEV_PIDS=()
}
