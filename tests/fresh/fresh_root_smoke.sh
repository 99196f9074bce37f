#!/usr/bin/env bash
# The README's first command on a brand-new machine, in TAP: a minimal
# Debian 12 root (debootstrap minbase plus git and make, what a new user has
# before reading the README) gets a clone of this repository's committed
# HEAD, and inside it `make run` must install, build and start everything by
# itself. Then one program per language (every languages/*.yaml id) is
# judged through the HTTP API, the CLI creates a tenant with no environment,
# and `make stop` must stop everything. Prints its duration.
#
# The root runs under bubblewrap with every capability and the host's /dev
# and /sys (runsc creates user namespaces and cgroups, which a plain chroot
# forbids) and a /proc of its own mount; /run is a fresh tmpfs, so runsc's
# state is private.
#
# Not colliding with the host: the root shares the host's network, because
# `make run` itself must reach the Debian mirror (its first step installs
# the packages; a network namespace would have to be set up after it, i.e. a
# separate install step, which is what this test must not have). So the
# services get ports nothing on the host listens on, through the variables
# gavel-local honours (GAVEL_PG_PORT, GAVEL_API_PORT), all on 127.0.0.1
# (Redis has its unix socket only); the executor gets a cgroup parent and an egress interface
# prefix of this run only (GAVEL_EXECUTOR_CGROUP_PARENT, ..._EGRESS_IFPREFIX;
# /sys is the host's). Everything else the stack writes is inside the root.
#
# Cached between runs under GAVEL_FRESH_TOP [/var/tmp/gavel-fresh]: the base
# root (built once, ~1-2 min) and apt's downloaded .deb files (bound to the
# root's /var/cache/apt/archives: the install still runs in full, only the
# downloads are saved). GAVEL_FRESH_MIRROR overrides the Debian mirror
# (default: the first .../debian source of this host's apt). FRESH_KEEP=1
# keeps the run's root. When it cannot run (not root, no network, no
# debootstrap or bwrap, not a git checkout) it fails with the reason.
set -u
cd "$(dirname "$0")/../.."
REPO=$PWD
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/lib/services.sh
. tests/lib/services.sh
T0=$(date +%s)
# Beside other tests (GAVEL_FRESH_BACKGROUND=1, as tests/run.sh runs it)
# everything this check starts runs at the lowest CPU priority, so that
# the tests' timings stay theirs; what it waits on most is the network.
if [ "${GAVEL_FRESH_BACKGROUND:-0}" = 1 ]; then
	renice -n 19 -p $$ >/dev/null
	echo "# beside other tests: niced, its sandboxes' cgroup parent at the smallest CPU share"
fi
TOP=${GAVEL_FRESH_TOP:-/var/tmp/gavel-fresh}
BASE=$TOP/base-bookworm
ARCHIVES=$TOP/apt-archives

elapsed() { echo $(($(date +%s) - T0)); }
finish() {
	echo "# fresh_root_smoke: $(elapsed) s"
	[ "$fails" -eq 0 ] && [ "$n" -gt 0 ]
	exit
}
# Fails the current step with a reason, and every step after it.
give_up() { # name reason
	notok "$1" "$2"
	echo "# cannot go on: $2"
	echo "# fresh_root_smoke: $(elapsed) s"
	exit 1
}

mapfile -t LANGS < <(sed -n 's/^id:[[:space:]]*\([A-Za-z0-9_+-]*\).*/\1/p' languages/*.yaml)
# base, clone, make run, its readiness, the first C++ and Java submissions, one per
# language, deliverer user, database roles, owner URL, CLI, make stop,
# nothing left.
echo "1..$((${#LANGS[@]} + 12))"

# ------------------------------------------------------------- the base
why=
[ "$(id -u)" -eq 0 ] || why="needs root (debootstrap, bubblewrap with every capability, runsc)"
for tool in debootstrap bwrap git flock; do
	[ -n "$why" ] || command -v "$tool" >/dev/null || why="$tool is not installed (make deps installs it)"
done
[ -n "$why" ] || git -C "$REPO" rev-parse --verify -q HEAD >/dev/null || why="$REPO is not a git checkout with a commit"
[ ${#LANGS[@]} -gt 0 ] || why="no id: line in languages/*.yaml"
[ -z "$why" ] || give_up "a Debian 12 minbase root" "$why"

mirror=${GAVEL_FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
	# One-line sources ("deb URL bookworm main") and deb822 ("URIs: URL").
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\(https\{0,1\}:[^[:space:]]*\/debian\)\/\{0,1\}[[:space:]].*/\2/p; s/^URIs:[[:space:]]*\(https\{0,1\}:[^[:space:]]*\/debian\)\/\{0,1\}[[:space:]]*$/\1/p' |
		head -n1)
fi
[ -n "$mirror" ] || give_up "a Debian 12 minbase root" "no Debian mirror in /etc/apt sources; set GAVEL_FRESH_MIRROR"

mkdir -p "$TOP" "$ARCHIVES/partial"
exec 9>"$TOP/lock"
# One run at a time on a host: two would build the base twice and share
# the .deb cache while apt writes it.
flock -w 1800 9 || give_up "a Debian 12 minbase root" "another fresh-root run holds $TOP/lock"
if [ ! -e "$BASE/.gavel-base-complete" ]; then
	rm -rf "$BASE" "$BASE.tmp"
	if ! debootstrap --variant=minbase --include=ca-certificates,git,make bookworm "$BASE.tmp" "$mirror" \
		>"$TOP/debootstrap.log" 2>&1; then
		rm -rf "$BASE.tmp"
		give_up "a Debian 12 minbase root" "debootstrap from $mirror failed: $(tail -n 3 "$TOP/debootstrap.log" | tr '\n' ' ')"
	fi
	touch "$BASE.tmp/.gavel-base-complete"
	mv "$BASE.tmp" "$BASE"
	ok "a Debian 12 minbase root (built in $(elapsed) s, from $mirror)"
else
	ok "a Debian 12 minbase root (cached in $BASE)"
fi

# ------------------------------------------------------------- the clone
ROOT=$(mktemp -d "$TOP/run.XXXXXX") || give_up "a fresh clone of HEAD" "mktemp under $TOP failed"
OUT=$ROOT/fresh-out
CG=gavel-fresh-$$
IFP=gf$(printf '%02x' $((RANDOM % 256)))
# The processes still running inside the root: those whose root directory
# is $ROOT (compared by device and inode: seen from the host, the link
# reads "/" after bubblewrap's pivot_root), and their descendants (runsc's
# sandbox processes pivot into roots of their own).
in_root_pids() {
	local id p pid ppid
	id=$(stat -c '%d:%i' "$ROOT" 2>/dev/null) || return 0
	local -A found=() parent=()
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		ppid=$(sed -n 's/^PPid:[[:space:]]*//p' "$p/status" 2>/dev/null) || continue
		parent[$pid]=$ppid
		[ "$(stat -L -c '%d:%i' "$p/root" 2>/dev/null)" = "$id" ] && found[$pid]=1
	done
	local grew=1
	while [ $grew = 1 ]; do
		grew=0
		for pid in "${!parent[@]}"; do
			if [ -z "${found[$pid]:-}" ] && [ -n "${found[${parent[$pid]}]:-}" ]; then
				found[$pid]=1
				grew=1
			fi
		done
	done
	for pid in "${!found[@]}"; do echo "$pid"; done
}
cleanup() {
	# Whatever still runs inside the root (a failed make stop).
	local pids
	mapfile -t pids < <(in_root_pids)
	[ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null
	sleep 0.5
	# The executor's cgroup parent, in every hierarchy (v1 has one per
	# controller, v2 one); runsc creates parents that it does not remove.
	local d
	for d in "/sys/fs/cgroup/$CG" /sys/fs/cgroup/*/"$CG"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	if [ "${FRESH_KEEP:-0}" = 1 ]; then
		echo "# kept: $ROOT"
	else
		rm -rf "$ROOT"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

HEAD=$(git -C "$REPO" rev-parse --short HEAD)
if ! cp -a "$BASE/." "$ROOT/" || ! git clone -q "$REPO" "$ROOT/project" 2>"$TOP/clone.log"; then
	give_up "a fresh clone of HEAD" "copying the base or git clone failed: $(head -c 300 "$TOP/clone.log")"
fi
rm -f "$ROOT/.gavel-base-complete"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
mkdir -p "$OUT" "$ROOT/fresh/progs"
ok "a fresh clone of HEAD ($HEAD) in $ROOT"

# ------------------------------------------------------------- programs
# A program per language: reads "a b", prints a+b. A language without one
# here fails the test: add its program when adding the language.
prog() { cat >"$ROOT/fresh/progs/$1"; }
prog c <<'EOF'
#include <stdio.h>
int main(void) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 1; printf("%ld\n", a + b); return 0; }
EOF
prog cpp <<'EOF'
#include <iostream>
int main() { long a, b; std::cin >> a >> b; std::cout << a + b << "\n"; }
EOF
cp "$ROOT/fresh/progs/cpp" "$ROOT/fresh/progs/cpp14"
cp "$ROOT/fresh/progs/cpp" "$ROOT/fresh/progs/cpp20"
prog go <<'EOF'
package main

import "fmt"

func main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }
EOF
prog java <<'EOF'
import java.util.Scanner;
public class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }
EOF
prog javascript <<'EOF'
const v = require('fs').readFileSync(0, 'utf8').trim().split(/\s+/).map(Number);
console.log(v[0] + v[1]);
EOF
prog octave <<'EOF'
x = sscanf(fgetl(stdin), "%ld %ld");
printf("%d\n", int64(x(1)) + int64(x(2)));
EOF
prog pascal <<'EOF'
program sum; var a, b: int64; begin readln(a, b); writeln(a + b); end.
EOF
prog php <<'EOF'
<?php
[$a, $b] = array_map("intval", preg_split("/\\s+/", trim(stream_get_contents(STDIN))));
echo $a + $b, "\n";
EOF
prog python3 <<'EOF'
print(sum(map(int, input().split())))
EOF
prog rust <<'EOF'
use std::io::Read;
fn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: i64 = s.split_whitespace().map(|x| x.parse::<i64>().unwrap()).sum(); println!("{}", v); }
EOF

# The client: submits each program with one test, polls until it is done,
# prints "R ok NAME" or "R notok NAME DETAIL" per language. It runs inside
# the root, with the python3 that make run installed. The time limit is 5 s
# rather than the languages' 1 s: this check is about a first install
# working, on a host that may be busy building; limits and verdicts are the
# fixture tests' business. The measured times are printed.
cat >"$ROOT/fresh/submit.py" <<'EOF'
import json, os, sys, time, urllib.request
port, key = sys.argv[1], open("/project/var/demo-api-key").read().strip()
base = "http://127.0.0.1:%s" % port
def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"X-Auth-Token": key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=320) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, {"error": e.read().decode(errors="replace")[:300]}
for lang in sys.argv[2:]:
    t0 = time.time()
    src = open("/fresh/progs/" + lang).read() if os.path.exists("/fresh/progs/" + lang) else None
    if src is None:
        print("R notok %s no program for this language in tests/fresh/fresh_root_smoke.sh" % lang, flush=True)
        continue
    code, d = call("POST", "/v1/submissions?wait=true",
                   {"language": lang, "source": src, "limits": {"time_ms": 5000},
                    "tests": [{"input": "20 22\n", "expected": "42\n"}]})
    # 202: still queued or running when the server stopped waiting.
    while code in (200, 201, 202) and d.get("status") not in ("done", "failed", "error") and time.time() - t0 < 600:
        time.sleep(1)
        code, d = call("GET", "/v1/submissions/%s" % d.get("id"))
    res = d.get("result") or {}
    shown = {k: res.get(k) for k in ("time_ms", "wall_ms", "time_limit_ms", "memory_kb", "message",
                                     "compile_output") if res.get(k) not in (None, "")}
    detail = "HTTP %s status %s verdict %s %s" % (code, d.get("status"), d.get("verdict"), json.dumps(shown)[:400])
    good = code in (200, 201) and d.get("status") == "done" and d.get("verdict") == "AC"
    print("R %s %s %.1f s; %s" % ("ok" if good else "notok", lang, time.time() - t0, detail), flush=True)
EOF

# The first two submissions after `make run` returns, as the README's
# Judge0 curl sends them (?wait=true): a C++ hello that includes
# <bits/stdc++.h> (what the precompiled header is for) and a Java hello
# (javac's class archive). A node that still builds either before it takes
# jobs answers them late, or only with a token once the wait runs out.
cat >"$ROOT/fresh/first-cpp.json" <<'EOF'
{"language_id": 54, "source_code": "#include <bits/stdc++.h>\nint main() { std::cout << \"hello\" << std::endl; }\n"}
EOF
cat >"$ROOT/fresh/first-java.json" <<'EOF'
{"language_id": 62, "source_code": "public class Main { public static void main(String[] a) { System.out.println(\"hello\"); } }\n"}
EOF
# Prints "R first-NAME HTTP SECONDS STATUS_ID STDOUT" from the answer.
cat >"$ROOT/fresh/first.py" <<'EOF'
import json, sys
name, code, secs, path = sys.argv[1:5]
try:
    d = json.load(open(path))
except Exception:
    d = {}
st = (d.get("status") or {}).get("id") if isinstance(d, dict) else None
out = (d.get("stdout") or "") if isinstance(d, dict) else ""
print("R first-%s %s %s %s %s" % (name, code, secs, st, json.dumps(out)))
EOF

# ------------------------------------------------------------- inside
PG=$(GAVEL_PORT_BASE=10000 GAVEL_PORT_SPAN=10000 _services_free_port) &&
	AP=$(GAVEL_PORT_BASE=10000 GAVEL_PORT_SPAN=10000 _services_free_port "$PG") ||
	give_up "make run in the fresh root" "no free port in 10000-19999"
# Beside other tests (GAVEL_FRESH_BACKGROUND=1, as tests/run.sh runs it):
# the executor's cgroup parent is made ahead with the smallest CPU share:
# the root's sandboxes sit in cgroups of their own, where the nice value
# of this check (set at its start) counts for nothing against the other
# tests' sandboxes. The root then takes the CPU the tests leave.
if [ "${GAVEL_FRESH_BACKGROUND:-0}" = 1 ]; then
	if [ -d /sys/fs/cgroup/cpu ]; then
		mkdir -p "/sys/fs/cgroup/cpu/$CG" && echo 2 >"/sys/fs/cgroup/cpu/$CG/cpu.shares"
	elif [ -f /sys/fs/cgroup/cgroup.subtree_control ]; then
		mkdir -p "/sys/fs/cgroup/$CG" && echo 1 >"/sys/fs/cgroup/$CG/cpu.weight"
	fi || echo "# could not give the cgroup parent $CG a small CPU share: its sandboxes run at the usual share"
fi
cat >"$ROOT/fresh/inner.sh" <<EOF
set -u
cd /project
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
export GAVEL_PG_PORT=$PG GAVEL_API_PORT=$AP
export GAVEL_EXECUTOR_CGROUP_PARENT=$CG GAVEL_EXECUTOR_EGRESS_IFPREFIX=$IFP
s=\$(date +%s)
make run >/fresh-out/make-run.log 2>&1
echo "R make-run \$? \$((\$(date +%s) - s))"
if [ -s var/demo-api-key ]; then
	for first in cpp java; do
		r=\$(curl -s -o /fresh-out/first-\$first.out -w '%{http_code} %{time_total}' --max-time 60 \\
			-X POST "http://127.0.0.1:$AP/submissions?base64_encoded=false&wait=true" \\
			-H 'Content-Type: application/json' -H "X-Auth-Token: \$(cat var/demo-api-key)" \\
			--data-binary @/fresh/first-\$first.json)
		python3 /fresh/first.py \$first \$r /fresh-out/first-\$first.out 2>>/fresh-out/submit.log ||
			echo "R first-\$first \$r - -"
	done
	python3 /fresh/submit.py $AP ${LANGS[*]} 2>>/fresh-out/submit.log || echo "R notok client python3 /fresh/submit.py failed"
fi
# The user the executor's webhook deliverer (a fork that names itself
# gavel-webhook) runs as: read from /proc (procps is not in a minbase root),
# processes of this root only (the host's pid namespace is shared).
for p in /proc/[0-9]*; do
	[ "\$(cat \$p/comm 2>/dev/null)" = gavel-webhook ] && [ \$p/root -ef / ] && stat -c %U \$p
done 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/^/R executor-users /; s/\$/\n/'
# The database roles the daemons are connected as (each its own, never the
# owner), and the daemons holding the owner's URL in their environment.
echo "R db-users \$(psql "\$(sed -n 's/^GAVEL_DATABASE_URL=//p' var/local.env)" -XAtc \
	"SELECT string_agg(DISTINCT usename, ' ' ORDER BY usename) FROM pg_stat_activity
	  WHERE datname = 'gavel' AND pid <> pg_backend_pid()" 2>&1 | tr '\n' ' ')"
echo "R owner-url-in \$(for p in /proc/[0-9]*; do
	case "\$(cat \$p/comm 2>/dev/null)" in gavel-frontend | gavel-scheduler | gavel-executor | gavel-webhook) ;; *) continue ;; esac
	[ \$p/root -ef / ] && tr '\0' '\n' <\$p/environ | grep -q '^GAVEL_DATABASE_URL=' && cat \$p/comm
done 2>/dev/null | sort -u | tr '\n' ' ')"
env -i PATH=\$PATH build/gavel tenant create fresh-smoke >/fresh-out/cli.log 2>&1
echo "R cli \$?"
make stop >/fresh-out/make-stop.log 2>&1
echo "R make-stop \$?"
deploy/local/gavel-local status >/fresh-out/status.log 2>&1
echo "R status \$?"
EOF

echo "# make run in the fresh root (ports $PG $AP; cgroup $CG); log in $OUT while it runs"
# A clean environment, as a new user's shell has: under tests/run.sh this
# process carries the harness's GAVEL_ROOT, BUILD and database URLs, which
# sent the root's gavel-local to the host's checkout (make run "started"
# nothing inside, and every submission found no stack).
# The host's /proc, not a new one: bwrap covers parts of a new proc (sys,
# sysrq-trigger, irq, bus), and the kernel refuses to mount proc inside a
# user namespace while no proc is fully visible, which every sandbox's
# runsc does inside the user namespace that gives it its own uid
# (executor/sandbox/sandbox_uid.h), as on a host.
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	bwrap --bind "$ROOT" / --dev-bind /dev /dev --bind /proc /proc --bind /sys /sys --tmpfs /run \
	--bind "$ARCHIVES" /var/cache/apt/archives --cap-add ALL --die-with-parent \
	/bin/bash /fresh/inner.sh >"$OUT/results" 2>"$OUT/inner.err" 9>&-
bwrap_rc=$?
result() { sed -n "s/^R $1 //p" "$OUT/results" | head -n1; }
tail_of() { tail -n 8 "$OUT/$1" 2>/dev/null | tr '\n' ' '; }

r=$(result make-run)
if [ -z "$r" ]; then
	give_up "make run in the fresh root" "bwrap exit $bwrap_rc: $(tr '\n' ' ' <"$OUT/inner.err" | head -c 400)"
elif [ "${r%% *}" != 0 ]; then
	give_up "make run in the fresh root" "exit ${r%% *} after ${r#* } s: $(tail_of make-run.log)"
fi
ok "make run in the fresh root: installed, built and started in ${r#* } s"
# make run returns once the executor takes jobs, naming the languages a
# submission runs in now: every languages/*.yaml id on a new machine.
ready=$(sed -n 's/^Ready *a submission runs now in: //p' "$OUT/make-run.log" | head -n1)
sed -n 's/^\(precompiled headers.*\|Ready .*\|still warming.*\|not offered.*\)$/# make run: \1/p' "$OUT/make-run.log"
unready=()
for l in "${LANGS[@]}"; do [[ " $ready " == *" $l "* ]] || unready+=("$l"); done
check_detail() { echo "not named ready: ${unready[*]}; $(tail_of make-run.log)"; }
check "make run says ready with every language (${#LANGS[@]})" test ${#unready[@]} = 0
# The first C++ and Java submissions: judged (Judge0 status 3, "hello"),
# within 5 s and 10 s of make run returning. Beside other tests the root's
# sandboxes have the smallest CPU share, so there the times are printed
# and only the verdict is checked.
for first in "cpp 5" "java 10"; do
	name=${first% *} limit=${first#* }
	read -r code secs status out <<<"$(result "first-$name")"
	what="the first $name submission after make run (Judge0, wait=true): Accepted within $limit s"
	timed="took ${secs:-?} s; HTTP ${code:-?}, status ${status:-?}, stdout ${out:-?}"
	echo "# first $name submission after make run: ${secs:-?} s"
	if [ "${code:-}" != 201 ] || [ "${status:-}" != 3 ] || [ "${out:-}" != '"hello\n"' ]; then
		notok "$what" "$timed; $(head -c 300 "$OUT/first-$name.out" 2>/dev/null)"
	elif [ "${GAVEL_FRESH_BACKGROUND:-0}" = 1 ]; then
		ok "$what ($timed; beside other tests: the time is not judged)"
	elif awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s <= l) }'; then
		ok "$what ($timed)"
	else
		notok "$what" "$timed"
	fi
done
for l in "${LANGS[@]}"; do
	line=$(grep -E "^R (ok|notok) $l " "$OUT/results" | head -n1)
	case "$line" in
	"R ok "*) ok "$l: AC through the API (${line#R ok "$l" })" ;;
	"R notok "*) notok "$l: AC through the API" "${line#R notok "$l" }" ;;
	*) notok "$l: AC through the API" "no answer from the client: $(tail_of submit.log)" ;;
	esac
done
users=$(result executor-users)
check_detail() { echo "users of the gavel-webhook processes: '$users'"; }
check "the webhook deliverer runs as gavel-webhook, not nobody" test "$users" = "gavel-webhook "
r=$(result db-users)
check_detail() { echo "connected to gavel: '$r'"; }
check "each daemon is connected as its own role, none as the owner" \
	test "$r" = "gavel_executor gavel_frontend gavel_scheduler "
r=$(result owner-url-in)
check_detail() { echo "daemons with GAVEL_DATABASE_URL in their environment: '$r'"; }
check "no daemon has the owner's database URL in its environment" test -z "$r"
r=$(result cli)
check_detail() { tail_of cli.log; }
check "gavel tenant create with no environment finds the stack" test "$r" = 0
r=$(result make-stop)
check_detail() { tail_of make-stop.log; }
check "make stop" test "$r" = 0
r=$(result status)
check_detail() { tail_of status.log; }
left=()
for p in $(in_root_pids); do
	left+=("$p:$(cat "/proc/$p/comm" 2>/dev/null)")
done
check_detail() { echo "still running in the root: ${left[*]}; $(tail_of status.log)"; }
# gavel-local status exits non-zero once PostgreSQL and Redis are stopped.
check "nothing of the stack runs after make stop" bash -c \
	"[ '$r' != 0 ] && ! grep -q ': running' '$OUT/status.log' && [ ${#left[@]} = 0 ]"
finish
