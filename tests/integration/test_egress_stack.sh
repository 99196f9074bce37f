#!/usr/bin/env bash
# Egress end to end, in TAP: the tenant's policy set with `gavel tenant
# update` reaches the executor through PostgreSQL (never the request), the
# sandbox reaches only what it lists, and the blocked attempts land in the
# `sandbox.finished` audit record; a tenant without a policy gets no socket.
#
# Loopback-only, inside network namespaces this test makes: the executor
# runs in a namespace of its own ("host", reached by PostgreSQL through
# relays, by Redis on its unix socket), next to a "world" namespace on TEST-NET-2
# with a listed server on 198.51.100.1:8080 and an unlisted one on
# 198.51.100.2:8080. The scheduler and frontend run as in any stack test.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

echo "1..6"
. tests/lib/tap.sh

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc, cgroups, network namespaces)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init; do
	[ -x "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl python3 setsid nsenter ip nft tc; do
	command -v "$c" >/dev/null || bail "$c missing (deploy/deps.sh)"
done

# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup egress
[ -n "${GAVEL_PG_PORT:-}" ] || bail "needs GAVEL_PG_PORT of tests/lib/services.sh"
HOSTNS=gvegress-sh-$$
WORLDNS=gvegress-sw-$$
VETH=egsw$$
egress_cleanup() {
	stack_cleanup
	ip netns pids "$WORLDNS" 2>/dev/null | while read -r p; do kill -KILL "$p" 2>/dev/null; done
	ip netns del "$HOSTNS" 2>/dev/null
	ip netns del "$WORLDNS" 2>/dev/null
	return 0
}
trap egress_cleanup EXIT

ip netns add "$HOSTNS" && ip netns add "$WORLDNS" &&
	ip -n "$HOSTNS" link set lo up &&
	ip -n "$HOSTNS" link add "$VETH" type veth peer name "${VETH}x" netns "$WORLDNS" &&
	ip -n "$HOSTNS" addr add 198.51.100.254/24 dev "$VETH" && ip -n "$HOSTNS" link set "$VETH" up &&
	ip -n "$HOSTNS" route add default via 198.51.100.1 &&
	ip -n "$WORLDNS" link set lo up &&
	ip -n "$WORLDNS" addr add 198.51.100.1/24 dev "${VETH}x" &&
	ip -n "$WORLDNS" addr add 198.51.100.2/24 dev "${VETH}x" &&
	ip -n "$WORLDNS" link set "${VETH}x" up || bail "could not build the namespaces"
mkdir -p "$TMP/www" && echo world >"$TMP/www/index.html"
for a in 198.51.100.1 198.51.100.2; do
	setsid nsenter --net="/run/netns/$WORLDNS" -- python3 -m http.server --bind "$a" --directory "$TMP/www" 8080 \
		>>"$TMP/world.log" 2>&1 </dev/null &
done

TA_NAME=${TAG}_net
TB_NAME=${TAG}_nonet
"$BUILD/gavel" tenant create "$TA_NAME" >"$TMP/ta" 2>"$TMP/cli.log" &&
	"$BUILD/gavel" tenant create "$TB_NAME" >"$TMP/tb" 2>>"$TMP/cli.log" &&
	"$BUILD/gavel" tenant update "$TA_NAME" --egress-allow 198.51.100.1:8080 --egress-rate 10000 2>>"$TMP/cli.log" ||
	bail "gavel tenant: $(cat "$TMP/cli.log")"
TA=$(cut -f1 "$TMP/ta")
KA=$("$BUILD/gavel" key create --tenant "$TA_NAME" 2>>"$TMP/cli.log")
KB=$("$BUILD/gavel" key create --tenant "$TB_NAME" 2>>"$TMP/cli.log")
[ -n "$KA" ] && [ -n "$KB" ] && [ -n "$TA" ] || bail "gavel key create: $(cat "$TMP/cli.log")"
ok "two tenants, one granted 198.51.100.1:8080 at 10 Mbit/s with gavel tenant update"

export GAVEL_LOG_LEVEL=info
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	GAVEL_SCHEDULER_NODE_HEARTBEAT_TIMEOUT=10s \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=("$!")
# The executor's namespace has its own loopback: PostgreSQL (on the
# machine's 127.0.0.1) is relayed into it through a unix socket, one relay
# on each side, so that it uses the same URL as every daemon. Redis listens
# on a unix socket only, which a network namespace does not hide.
cat >"$TMP/relay.py" <<'PY'
import asyncio, sys
mode, listen, target = sys.argv[1:4]
async def pipe(r, w):
    try:
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
    except Exception:
        pass
    finally:
        w.close()
async def handle(r, w):
    try:
        if mode == "unix-to-tcp":
            h, p = target.rsplit(":", 1)
            r2, w2 = await asyncio.open_connection(h, int(p))
        else:
            r2, w2 = await asyncio.open_unix_connection(target)
    except OSError:
        w.close()
        return
    await asyncio.gather(pipe(r, w2), pipe(r2, w))
async def main():
    if mode == "unix-to-tcp":
        srv = await asyncio.start_unix_server(handle, listen)
    else:
        h, p = listen.rsplit(":", 1)
        srv = await asyncio.start_server(handle, h, int(p))
    async with srv:
        await srv.serve_forever()
asyncio.run(main())
PY
for port in "$GAVEL_PG_PORT"; do
	setsid python3 "$TMP/relay.py" unix-to-tcp "$TMP/relay-$port.sock" "127.0.0.1:$port" >>"$TMP/relay.log" 2>&1 </dev/null &
	PIDS+=("$!")
	for _ in $(seq 50); do [ -S "$TMP/relay-$port.sock" ] && break; sleep 0.1; done
	# nsenter, not `ip netns exec`: that one mounts a fresh /sys, hiding the
	# cgroup hierarchy the executor needs.
	setsid nsenter --net="/run/netns/$HOSTNS" -- python3 "$TMP/relay.py" tcp-to-unix "127.0.0.1:$port" \
		"$TMP/relay-$port.sock" >>"$TMP/relay.log" 2>&1 </dev/null &
	PIDS+=("$!")
done
sleep 0.5
NODE=node-$TAG
setsid nsenter --net="/run/netns/$HOSTNS" -- env \
	GAVEL_EXECUTOR_NODE_NAME="$NODE" GAVEL_EXECUTOR_MAX_PARALLEL=1 GAVEL_EXECUTOR_BURST_SLOTS=0 \
	GAVEL_EXECUTOR_POOL_SIZE=0 GAVEL_EXECUTOR_HEARTBEAT_INTERVAL=1s \
	GAVEL_EXECUTOR_RUNSC_ROOT="$RUNSC_ROOT" GAVEL_EXECUTOR_WORK_ROOT="$WORK_ROOT" \
	GAVEL_EXECUTOR_CGROUP_PARENT="$CG_PARENT" GAVEL_EXECUTOR_INIT_PATH="$BUILD/gavel-init" \
	GAVEL_EXECUTOR_LANGUAGES_DIR="$ROOT/languages" GAVEL_EXECUTOR_EGRESS_IFPREFIX=egs \
	"${STACK_AS_EXECUTOR[@]}" "$BUILD/gavel-executor" >>"$TMP/executor.log" 2>&1 </dev/null &
PID_EXEC=$!
PIDS+=("$PID_EXEC")
GAVEL_FRONTEND_THREADS=2 GAVEL_FRONTEND_WAIT_TIMEOUT=120s GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" \
	stack_start_frontend
# Healthy means a live executor: ours, the only one after the FLUSHDB.
stack_wait_healthy 120 "$PID_EXEC"
ok "stack up with the executor in its own network namespace"

PROBE='import errno, socket
for t in ["198.51.100.1:8080", "198.51.100.2:8080", "198.51.100.254:8080", "169.254.169.254:80", "10.0.0.1:80"]:
    h, p = t.rsplit(":", 1)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        print(t, "socket-" + errno.errorcode.get(e.errno, "?"))
        continue
    s.settimeout(3)
    try:
        s.connect((h, int(p)))
        r = "connected"
    except socket.timeout:
        r = "timeout"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(t, r)'
submit() { # KEY -> prints the response body
	python3 -c 'import json,sys; print(json.dumps({"language": "python3", "source": sys.argv[1]}))' "$PROBE" |
		curl -s -m 150 -X POST -H "X-Auth-Token: $1" -H 'Content-Type: application/json' --data-binary @- \
			"$B/v1/submissions?wait=true"
}
field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" 2>/dev/null; }

RA=$(submit "$KA")
OUT_A=$(field 'd["result"]["stdout"]' <<<"$RA")
SID_A=$(field 'd["id"]' <<<"$RA")
if grep -q '^198.51.100.1:8080 connected$' <<<"$OUT_A" && [ "$(grep -c ' connected$' <<<"$OUT_A")" = 1 ]; then
	ok "granted tenant: only the listed server is reachable"
else
	notok "granted tenant: only the listed server is reachable" "$RA | $(tail -n 5 "$TMP/executor.log" | tr '\n' '|')"
fi
DETAILS=$(sql -c "SELECT details::text FROM audit_log WHERE tenant_id = '$TA' AND action = 'sandbox.finished' AND object = '$SID_A'")
BLOCKED=$(field 'd["egress"]["blocked"]' <<<"$DETAILS")
# Refused and counted: the unlisted server, the host, the metadata address
# and the private one (the host has a default route, as a node would).
if [ -n "$BLOCKED" ] && [ "$BLOCKED" -ge 4 ]; then
	ok "sandbox.finished audit record counts the blocked attempts ($BLOCKED)"
else
	notok "sandbox.finished audit record counts the blocked attempts" "details: $DETAILS"
fi

RB=$(submit "$KB")
OUT_B=$(field 'd["result"]["stdout"]' <<<"$RB")
if [ "$(grep -c 'socket-EPERM$' <<<"$OUT_B")" = 5 ]; then
	ok "tenant without a policy: no socket at all"
else
	notok "tenant without a policy: no socket at all" "$RB"
fi

# The executor stops; what it made for sandboxes is gone from its namespace.
kill -TERM -- "-$PID_EXEC" 2>/dev/null
for _ in $(seq 100); do kill -0 "$PID_EXEC" 2>/dev/null || break; sleep 0.2; done
LEFT=$( (ip netns list; ip -n "$HOSTNS" -o link show; nsenter --net="/run/netns/$HOSTNS" -- nft list tables) 2>&1 | grep -c 'egs0')
if [ "$LEFT" = 0 ]; then
	ok "no namespace, link or nft table of the executor left after it stopped"
else
	notok "no namespace, link or nft table of the executor left after it stopped" "$LEFT objects"
fi
