#!/usr/bin/env bash
# The olympiad task types' edges that a labelled submission cannot show
# (tests/problems/multipass, fileio and outputonly hold the labelled ones,
# judged by test_judge_fixtures.sh and through the service by
# test_problems_api.sh), with the real `gavel judge --json` (real runsc):
#   1. multi-pass: a validator asking for a pass beyond
#      limits.validation_passes is a judge error (IE, exit 3) naming the
#      limit, never a verdict against the submission;
#   2. file I/O with one side only: input_file alone (the answer on stdout)
#      and output_file alone (the input on stdin) are AC;
#   3. file I/O names that are one of the submission's own files (main.c)
#      are refused before anything runs (IE naming the clash): init never
#      replaces a job file;
#   4. output-only: a package whose tests would share an output file name
#      is refused (exit 2) naming both tests.
# Speaks TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GAVEL=$BUILD/gavel
tmp=$(mktemp -d /tmp/gavel-task-types.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; printf '%s\n' "$2" | head -c 2000 | sed 's/^/# /'; }
# judge PROBLEM SUBMISSION -> $out (JSON on stdout), $err, $rc
judge() {
	out=$(timeout 300 "$GAVEL" judge --json "$1" "$2" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}
field() { printf '%s' "$out" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }
echo "1..6"

# 1. one pass more than the limit
cp -r tests/problems/multipass "$tmp/mp"
sed -i 's/validation_passes: 3/validation_passes: 2/' "$tmp/mp/problem.yaml"
judge "$tmp/mp" tests/problems/multipass/submissions/accepted/relay.c
if [ $rc = 3 ] && [ "$(field 'd["verdict"]')" = IE ] &&
	[[ $(field 'd["tests"][0]["message"]') == *"asked for pass 3 of a problem with at most 2"* ]]; then
	ok "multi-pass: a third pass asked of a 2-pass problem is IE naming the limit"
else
	notok "multi-pass: a third pass asked of a 2-pass problem is IE naming the limit" "rc $rc: $out $err"
fi

# 2. one named file, the other side standard
mkdir -p "$tmp/in_only" "$tmp/out_only"
cp -r tests/problems/fileio/data "$tmp/in_only/"
cp -r tests/problems/fileio/data "$tmp/out_only/"
printf 'input_file: input.txt\n' >"$tmp/in_only/problem.yaml"
printf 'output_file: result.txt\n' >"$tmp/out_only/problem.yaml"
cat >"$tmp/in_only.c" <<'EOF'
/* Reads input.txt, answers on stdout. */
#include <stdio.h>

int main(void)
{
	FILE *in = fopen("input.txt", "r");
	long long n, x, sum = 0;
	if (!in || fscanf(in, "%lld", &n) != 1)
		return 1;
	for (long long i = 0; i < n; i++)
		if (fscanf(in, "%lld", &x) == 1)
			sum += x;
	printf("%lld\n", sum);
	return 0;
}
EOF
cat >"$tmp/out_only.c" <<'EOF'
/* Reads stdin, answers in result.txt. */
#include <stdio.h>

int main(void)
{
	FILE *out = fopen("result.txt", "w");
	long long n, x, sum = 0;
	if (!out || scanf("%lld", &n) != 1)
		return 1;
	for (long long i = 0; i < n; i++)
		if (scanf("%lld", &x) == 1)
			sum += x;
	fprintf(out, "%lld\n", sum);
	return fclose(out) != 0;
}
EOF
for side in in_only out_only; do
	judge "$tmp/$side" "$tmp/$side.c"
	if [ $rc = 0 ] && [ "$(field 'd["verdict"]')" = AC ]; then
		ok "file I/O, $side: AC"
	else
		notok "file I/O, $side: AC" "rc $rc: $out $err"
	fi
done

# 3. a named file that is the submission's own source
mkdir -p "$tmp/clash"
cp -r tests/problems/fileio/data "$tmp/clash/"
printf 'input_file: main.c\noutput_file: output.txt\n' >"$tmp/clash/problem.yaml"
judge "$tmp/clash" tests/problems/fileio/submissions/accepted/files.c
if [ $rc != 0 ] && [[ "$out $err" == *"main.c is one of the job's files"* ]]; then
	ok "file I/O: input_file naming the submission's main.c is refused before it runs"
else
	notok "file I/O: input_file naming the submission's main.c is refused before it runs" "rc $rc: $out $err"
fi
cat >"$tmp/reads_main_c.py" <<'EOF'
# Reads its input from main.c (the package's odd choice), writes output.txt.
with open("main.c") as f:
    words = f.read().split()
with open("output.txt", "w") as f:
    f.write("%d\n" % sum(int(w) for w in words[1:1 + int(words[0])]))
EOF
judge "$tmp/clash" "$tmp/reads_main_c.py"
if [ $rc = 0 ] && [ "$(field 'd["verdict"]')" = AC ]; then
	ok "file I/O: the same name is fine for a language whose source is not main.c (Python)"
else
	notok "file I/O: the same name is fine for a language whose source is not main.c (Python)" "rc $rc: $out $err"
fi

# 4. output-only names that clash
cp -r tests/problems/outputonly "$tmp/oo"
mkdir -p "$tmp/oo/data/secret/more"
printf '3\n' >"$tmp/oo/data/secret/more/1.in"
printf '3\n' >"$tmp/oo/data/secret/more/1.ans"
judge "$tmp/oo" tests/problems/outputonly/submissions/accepted/all_right
if [ $rc = 2 ] && [[ $err == *"secret/1 and secret/more/1 would both be 1.out"* ]]; then
	ok "output-only: two tests named 1 in different folders are refused, both named"
else
	notok "output-only: two tests named 1 in different folders are refused, both named" "rc $rc: $out $err"
fi
