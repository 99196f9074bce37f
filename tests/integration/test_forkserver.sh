#!/usr/bin/env bash
# Python's fork server (executor/init/forkserver.c) against the execve path
# it replaces, with the real `gavel judge --json` (real runsc): the same
# programs judged with the repository's languages (python3 has
# `fork_server: python`) and with a copy whose python3.yaml has no
# fork_server (GAVEL_LANGUAGES_DIR), on a 2-test problem whose output
# validator puts the program's output in each test's message:
#   1. a program that prints its interpreter's state (sys.argv, orig_argv,
#      sys.path, sys.modules, sys.flags, __main__'s names and loader, cwd,
#      ids, environment, signal dispositions and mask, umask, open fds,
#      recursion limit, gc, stdio encodings and buffering, its input) prints
#      the same in both, test by test, and says it was forked from the
#      template only with the fork server; each test sees its own input;
#   2. an uncaught exception and sys.exit(3) end the same (RE, the exit
#      code);
#   3. a CPU loop is TLE in both;
#   4. the one documented difference: the stub's frame under __main__
#      costs one level of recursion, no more;
#   5. a problem of one test runs through execve even with the fork server.
# Speaks TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GAVEL=$BUILD/gavel
tmp=$(mktemp -d /tmp/gavel-forkserver.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; printf '%s\n' "$2" | head -c 3000 | sed 's/^/# /'; }
check() { if [ "$2" = yes ]; then ok "$1"; else notok "$1" "$3"; fi; }
echo "1..8"

# The languages without Python's fork server.
mkdir -p "$tmp/langs-exec"
cp languages/*.yaml "$tmp/langs-exec/"
sed -i '/^fork_server:/d' "$tmp/langs-exec/python3.yaml"
FORK=$PWD/languages
EXEC=$tmp/langs-exec

# A problem whose validator accepts and echoes the output (newlines as |).
mkdir -p "$tmp/p/output_validators/echo" "$tmp/p/data/secret"
printf 'name: Facts\ntype: pass-fail\nvalidation: custom\nlimits:\n  time_limit: 4\n  memory: 256\n' >"$tmp/p/problem.yaml"
cat >"$tmp/p/output_validators/echo/validator.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	char path[4096];
	snprintf(path, sizeof path, "%s/judgemessage.txt", argv[3]);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	int c, n = 0;
	while ((c = getchar()) != EOF && n < 900) {
		fputc(c == '\n' ? '|' : c >= 32 && c < 127 ? c : '?', f);
		n++;
	}
	fclose(f);
	return 42;
}
EOF
printf '1 2\n' >"$tmp/p/data/secret/1.in"
printf '3 4\n' >"$tmp/p/data/secret/2.in"
echo x >"$tmp/p/data/secret/1.ans"
echo x >"$tmp/p/data/secret/2.ans"
cp -r "$tmp/p" "$tmp/one"
rm "$tmp/one/data/secret/2.in" "$tmp/one/data/secret/2.ans"
cp -r "$tmp/p" "$tmp/tle"
sed -i 's/time_limit: 4/time_limit: 1/' "$tmp/tle/problem.yaml"

cat >"$tmp/facts.py" <<'EOF'
import gc, hashlib, json, os, signal, sys
with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
    forked = b"_gv_serve" in f.read()
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
mask = os.umask(0o022)
facts = {
    "argv": sys.argv, "orig_argv": sys.orig_argv, "name": __name__, "file": __file__, "path": sys.path,
    "main": sorted(k for k in globals() if k.startswith("__")), "modules": sorted(sys.modules),
    "cwd": os.getcwd(), "ids": [os.getresuid(), os.getresgid(), os.getgroups()], "env": dict(os.environ),
    "signals": [str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM,
                                                   signal.SIGCHLD, signal.SIGUSR1)],
    "sigmask": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), "umask": mask, "fds": fds,
    "recursion": sys.getrecursionlimit(), "gc": [gc.isenabled(), gc.get_threshold()], "flags": list(sys.flags),
    "stdio": [sys.stdin.encoding, sys.stdout.encoding, sys.stderr.encoding, sys.stdout.line_buffering,
              sys.stderr.line_buffering, sys.stdin.errors, sys.stdout.errors],
    "input": input(), "executable": sys.executable, "loader": type(__loader__).__name__,
    "spec": __spec__, "package": __package__, "cached": __cached__,
}
text = json.dumps(facts, sort_keys=True)
print("forked=%d sha=%s %s" % (forked, hashlib.sha1(text.encode()).hexdigest()[:16], text))
EOF
printf 'input()\nraise ValueError("boom")\n' >"$tmp/exc.py"
printf 'import sys\ninput()\nsys.exit(3)\n' >"$tmp/exit3.py"
printf 'x = 0\nwhile True:\n    x += 1\n' >"$tmp/loop.py"
printf 'def f(n):\n    try:\n        return f(n + 1)\n    except RecursionError:\n        return n\nprint("depth", f(0))\n' \
	>"$tmp/depth.py"

# judge LANGS PROBLEM PROGRAM -> "VERDICT" then one line per test: "VERDICT MESSAGE"
judge() {
	GAVEL_LANGUAGES_DIR=$1 timeout 300 "$GAVEL" judge --json "$2" "$3" 2>"$tmp/err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["verdict"])
for t in d["tests"]:
    print(t["verdict"], t.get("message", ""))' 2>>"$tmp/err"
}

# 1-2. the interpreter's state, test by test
f=$(judge "$FORK" "$tmp/p" "$tmp/facts.py")
e=$(judge "$EXEC" "$tmp/p" "$tmp/facts.py")
sha() { sed -n "$(($1 + 1))p" <<<"$2" | grep -o 'sha=[0-9a-f]*'; }
forked() { sed -n "$(($1 + 1))p" <<<"$2" | grep -o 'forked=[01]'; }
same=no
[ "$(head -n1 <<<"$f")" = AC ] && [ "$(head -n1 <<<"$e")" = AC ] && [ -n "$(sha 1 "$f")" ] &&
	[ "$(sha 1 "$f")" = "$(sha 1 "$e")" ] && [ "$(sha 2 "$f")" = "$(sha 2 "$e")" ] &&
	[ "$(sha 1 "$f")" != "$(sha 2 "$f")" ] && same=yes
check "a forked test's interpreter state is an exec'd one's, test by test, each with its own input" $same \
	"fork server:
$f
execve:
$e
$(cat "$tmp/err")"
modes=no
[ "$(forked 1 "$f")$(forked 2 "$f")" = "forked=1forked=1" ] && [ "$(forked 1 "$e")$(forked 2 "$e")" = "forked=0forked=0" ] &&
	modes=yes
check "tests were forked from the template with the fork server, exec'd without" $modes "$f
$e"

# 3-4. failures end the same
for prog in exc exit3; do
	f=$(judge "$FORK" "$tmp/p" "$tmp/$prog.py")
	e=$(judge "$EXEC" "$tmp/p" "$tmp/$prog.py")
	check "$prog.py ends the same forked and exec'd ($(sed -n 2p <<<"$f"))" \
		"$([ "$(head -n2 <<<"$f")" = "$(head -n2 <<<"$e")" ] && [ "$(head -n1 <<<"$f")" = RE ] && echo yes)" "$f
$e"
done

# 5. a CPU loop
f=$(judge "$FORK" "$tmp/tle" "$tmp/loop.py")
e=$(judge "$EXEC" "$tmp/tle" "$tmp/loop.py")
check "a CPU loop is TLE forked and exec'd" "$([ "$(head -n1 <<<"$f")" = TLE ] && [ "$(head -n1 <<<"$e")" = TLE ] && echo yes)" \
	"$f
$e"

# 6. recursion: one level less for the stub's frame, no more
f=$(judge "$FORK" "$tmp/p" "$tmp/depth.py")
e=$(judge "$EXEC" "$tmp/p" "$tmp/depth.py")
df=$(sed -n 2p <<<"$f" | grep -o 'depth [0-9]*' | cut -d' ' -f2)
de=$(sed -n 2p <<<"$e" | grep -o 'depth [0-9]*' | cut -d' ' -f2)
check "recursion depth forked is exec'd minus one ($df, $de)" \
	"$([ -n "$df" ] && [ -n "$de" ] && [ $((de - df)) = 1 ] && echo yes)" "$f
$e"

# 7-8. one test: execve even with the fork server
f=$(judge "$FORK" "$tmp/one" "$tmp/facts.py")
check "a problem of one test is judged AC" "$([ "$(head -n1 <<<"$f")" = AC ] && echo yes)" "$f $(cat "$tmp/err")"
check "a problem of one test is not forked (a template would cost a start)" \
	"$([ "$(forked 1 "$f")" = forked=0 ] && echo yes)" "$f"
