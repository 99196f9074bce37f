#!/usr/bin/env bash
# The adversarial suite: every sandbox promise has a hostile probe under
# probes/ that tries to break it from inside; each runs through the real CLI
# (`$BUILD/gavel run --json`) and must fail to escape. Prints TAP.
#
#   tests/security/run.sh              all probes
#   tests/security/run.sh NAME ...     only those (names or globs, e.g. 'sys_*')
#   tests/security/run.sh --list       names and the promise each checks
#
# The logic lives in lib/secsuite.py (Python's json module reads the CLI's
# output; /usr/bin/python3 is always present on the hosts we build on).
# README.md lists every probe, the promise it checks and the expected outcome.
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if [ -z "$py" ]; then
	echo "1..1"
	echo "not ok 1 - security suite: python3 not found"
	exit 1
fi
exec "$py" "$here/lib/secsuite.py" "$@"
