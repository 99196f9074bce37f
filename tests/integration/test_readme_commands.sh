#!/usr/bin/env bash
# README.md's commands as a newcomer runs them, so that a wrong port, path,
# field or tenant in the README fails a test:
#   - every address the README gives (http://127.0.0.1:PORT, 127.0.0.1:PORT)
#     is the port the stack really uses by default: gavel-frontend's
#     frontend.port and gavel-local's GAVEL_API_PORT for the API, gavel-local's
#     GAVEL_PG_PORT for PostgreSQL;
#   - each fenced ```sh block of README.md, in order, runs as written in
#     bash (errexit, nounset, pipefail) against a stack of the daemons, from
#     a folder that looks like the checkout after `make run`: var/demo-api-key
#     holds a key of tenant `demo`, build/ is the build. The one change made
#     to its text is the API's port, 2358 (checked above), replaced by the
#     test frontend's; curl fails on an HTTP error (--fail-with-body). A
#     block's output must hold what its section promises: the verdicts of
#     "A first submission" (AC, Accepted, 42), the kernel's execution_state,
#     the playground's 42;
#   - every URL in the README's prose (outside blocks) answers 200;
#   - the blocks that start the service (`make run`, `make test`, `make
#     stop`) are not run here: tests/fresh/fresh_root_smoke.sh runs `make
#     run` and `make stop` on a brand-new Debian root, and `make test` is
#     what runs this file; the test checks that the fresh-root test still
#     runs those two.
# Needs root (runsc). TAP.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
. tests/lib/tap.sh
say() { echo "# $*"; }

[ "$(id -u)" -eq 0 ] || bail "needs root (runsc and cgroups)"
for b in gavel gavel-scheduler gavel-executor gavel-frontend gavel-init gavel-kernel-bridge.py; do
	[ -e "$BUILD/$b" ] || bail "$BUILD/$b is not built"
done
for c in psql redis-cli curl /usr/bin/python3; do command -v $c >/dev/null || bail "$c missing"; done

# The README's sh blocks, one file each under $BLOCKS (NNN.sh, and
# NNN.section: the "## " heading above it), and its prose.
BLOCKS=$(mktemp -d /tmp/gavel-readme-blocks.XXXXXX)
trap 'rm -rf "$BLOCKS"' EXIT
/usr/bin/python3 - "$ROOT/README.md" "$BLOCKS" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().splitlines()
out = sys.argv[2]
n, section, block, prose = 0, "", None, []
for line in text:
    if block is None:
        if line.startswith("## "):
            section = line[3:].strip()
        if re.match(r"^```(sh|bash)\s*$", line):
            block = []
        elif line.startswith("```"):
            block = False
        else:
            prose.append(line)
    elif line.startswith("```"):
        if block is not False:
            n += 1
            open("%s/%03d.sh" % (out, n), "w").write("\n".join(block) + "\n")
            open("%s/%03d.section" % (out, n), "w").write(section + "\n")
        block = None
    elif block is not False:
        block.append(line)
open(out + "/prose", "w").write("\n".join(prose) + "\n")
EOF
mapfile -t FILES < <(ls "$BLOCKS"/*.sh 2>/dev/null)
[ ${#FILES[@]} -gt 0 ] || bail "no sh block in README.md"
echo "1..$((${#FILES[@]} + 2))"

# ---- the addresses ----
API_DEF=$(sed -n 's/.*"frontend\.port".*\.def = "\([0-9]*\)".*/\1/p' frontend/config.c)
LOCAL_API=$(sed -n 's/^API_PORT=\${GAVEL_API_PORT:-\([0-9]*\)}$/\1/p' deploy/local/gavel-local)
LOCAL_PG=$(sed -n 's/^PG_PORT=\${GAVEL_PG_PORT:-\([0-9]*\)}$/\1/p' deploy/local/gavel-local)
wrong=$(grep -ohE '127\.0\.0\.1:[0-9]+' README.md | sort -u | sed 's/.*://' |
	while read -r p; do [ "$p" = "$API_DEF" ] || [ "$p" = "$LOCAL_PG" ] || echo "$p"; done | tr '\n' ' ')
api_urls=$(grep -ohE 'http://127\.0\.0\.1:[0-9]+' README.md | sort -u | sed 's/.*://' | tr '\n' ' ')
check_detail() { echo "frontend.port $API_DEF, gavel-local API $LOCAL_API and PostgreSQL $LOCAL_PG; README's http ports: $api_urls; other: $wrong"; }
check "every address in README.md is the stack's default: the API's $API_DEF, PostgreSQL's $LOCAL_PG" \
	bash -c "[ -n '$API_DEF' ] && [ '$API_DEF' = '$LOCAL_API' ] && [ -z '$wrong' ] && [ '$api_urls' = '$API_DEF ' ]"

# ---- a stack, and a checkout's folder after make run ----
# shellcheck source=tests/lib/stack.sh
. tests/lib/stack.sh
stack_setup readme "${GAVEL_KEEP_LOGS:-}"
trap 'rm -rf "$BLOCKS"; stack_cleanup' EXIT
GAVEL_SCHEDULER_INSTANCE=sched-$TAG GAVEL_SCHEDULER_TICK_INTERVAL=50ms \
	"${STACK_AS_SCHEDULER[@]}" setsid "$BUILD/gavel-scheduler" >>"$TMP/scheduler.log" 2>&1 </dev/null &
PIDS+=($!)
GAVEL_EXECUTOR_NODE_NAME=readme-$TAG GAVEL_EXECUTOR_MAX_PARALLEL=2 GAVEL_EXECUTOR_KERNEL_POOL=0 \
	stack_start_executor executor.log
PID_NODE=$PID_EXEC
GAVEL_FRONTEND_LANGUAGES_DIR="$ROOT/languages" stack_start_frontend
stack_wait_healthy 120 "$PID_NODE" "$PID_FE"
wait_for 60 registered "readme-$TAG" || bail "the executor did not register"
# Tenant demo, as make run creates it (other tests may have made it).
"$BUILD/gavel" tenant show demo >/dev/null 2>&1 || "$BUILD/gavel" tenant create demo >/dev/null 2>>"$TMP/cli.log" ||
	bail "gavel tenant create demo: $(tail -n 3 "$TMP/cli.log")"
KEY=$("$BUILD/gavel" key create --tenant demo --label readme-test 2>>"$TMP/cli.log")
[ -n "$KEY" ] || bail "gavel key create: $(tail -n 3 "$TMP/cli.log")"
"$BUILD/gavel" tenant update demo --quota requests_per_second=100 --quota burst=100 >/dev/null 2>>"$TMP/cli.log" ||
	bail "gavel tenant update demo: $(tail -n 3 "$TMP/cli.log")"
CWD=$TMP/checkout
mkdir -p "$CWD/var"
ln -s "$BUILD" "$CWD/build"
(umask 077 && echo "$KEY" >"$CWD/var/demo-api-key")

# What each section's block must print (an extended regex per line).
expect() { # section
	case "$1" in
	"A first submission") printf '%s\n' '"verdict": ?"AC"' '"description": ?"Accepted"' '"stdout": ?"42\\n"' ;;
	"A notebook kernel") printf '%s\n' '"execution_state"' ;;
	"The playground") printf '%s\n' '"stdout": ?"42\\n"' ;;
	esac
}

# ---- the blocks ----
for f in "${FILES[@]}"; do
	section=$(cat "${f%.sh}.section")
	what="README.md, \"$section\": $(grep -v '^[[:space:]]*#' "$f" | head -n1 | cut -c1-60)..."
	if grep -qE '^[[:space:]]*make ' "$f"; then
		check_detail() { echo "tests/fresh/fresh_root_smoke.sh no longer runs make run and make stop"; }
		check "$what: make run and make stop run by tests/fresh/fresh_root_smoke.sh, make test is this suite" \
			bash -c "grep -q 'make run >' tests/fresh/fresh_root_smoke.sh && grep -q 'make stop >' tests/fresh/fresh_root_smoke.sh"
		continue
	fi
	sed "s/127\.0\.0\.1:$API_DEF/127.0.0.1:$P/g" "$f" >"$TMP/block.sh"
	# One terminal, as a reader's: what a block assigns (KEY=...) is
	# there for the next ones.
	vars=$(grep -oE '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*=' "$f" | tr -d ' \t=' | sort -u | tr '\n' ' ')
	out=$(cd "$CWD" && env -u GAVEL_URL -u GAVEL_API_KEY bash -c '
		set -euo pipefail
		curl() { command curl --fail-with-body --max-time 120 "$@"; }
		[ ! -s "$2" ] || . "$2"
		trap "[ -z \"\$3\" ] || declare -p \$3 >>\"\$2\" 2>/dev/null" EXIT
		. "$1"' _ "$TMP/block.sh" "$TMP/state.sh" "$vars" 2>&1)
	rc=$?
	missing=()
	while IFS= read -r re; do
		[ -n "$re" ] && ! grep -qE -- "$re" <<<"$out" && missing+=("$re")
	done < <(expect "$section")
	check_detail() { echo "exit $rc; missing: ${missing[*]}"; echo "${out:0:1500}"; }
	check "$what (exit $rc)" bash -c "[ $rc = 0 ] && [ ${#missing[@]} = 0 ]"
	head -c 400 <<<"$out" | sed 's/^/#   /'
	echo
done

# ---- the prose's URLs ----
bad=()
for u in $(grep -ohE "http://127\.0\.0\.1:$API_DEF/[^ )\`'\"]*" "$BLOCKS/prose" | sed 's/[.,;:]$//' | sort -u); do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "${u/127.0.0.1:$API_DEF/127.0.0.1:$P}")
	[ "$code" = 200 ] || bad+=("$u:$code")
	say "prose URL $u: $code"
done
check_detail() { echo "not 200: ${bad[*]}"; }
check "every URL of the README's prose answers 200 (${#bad[@]} not)" test ${#bad[@]} = 0
