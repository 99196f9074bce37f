# TAP output for the shell tests: ok, notok, check, bail, and the counters
# n (tests so far) and fails. Sourced after the test's `cd` to the repo root.
#   notok NAME [DETAIL]   DETAIL is printed as a comment, cut to 800 bytes
#   check NAME CMD...     ok if CMD succeeds; else notok with the output of
#                         the test's own check_detail function, if it has one
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "not ok $n - $1"
	[ -n "${2:-}" ] && printf '# %s\n' "${2:0:800}"
	return 0
}
check() {
	local d=$1
	shift
	if "$@"; then
		ok "$d"
	elif declare -F check_detail >/dev/null; then
		notok "$d" "$(check_detail)"
	else
		notok "$d"
	fi
}
bail() { echo "Bail out! $*"; exit 1; }
