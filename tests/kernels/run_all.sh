#!/usr/bin/env bash
# Every kernel client test of tests/kernels/ against one kernel gateway, one
# after the other (one or two kernels at a time):
#   run_services.sh           @jupyterlab/services, v1 and legacy framing
#   jupyter_server_gateway.py jupyter_server 1.23.3 --gateway-url
#   notebook_page.py          classic notebook 6.4 --gateway-url in Chromium
#   nbconvert_gateway.py      nbconvert --execute through jupyter_server --gateway-url
#   probes.py                 kernel-side security probes
#
#   tests/kernels/run_all.sh [BASE_URL TOKEN]
#
# With no BASE_URL (nor GAVEL_KERNELS_URL), each script starts its own plain
# local jupyter_server (development); probes.py then prints ESCAPED lines,
# as it must without a sandbox, and counts as failed. Ends with one line per
# script and exits non-zero when one failed.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
args=("$@")
summary=()
rc=0
for t in run_services.sh jupyter_server_gateway.py notebook_page.py nbconvert_gateway.py probes.py; do
	echo "## $t"
	t0=$SECONDS
	"tests/kernels/$t" "${args[@]}"
	r=$?
	[ $r -ne 0 ] && rc=1
	summary+=("$t: exit $r ($((SECONDS - t0)) s)")
done
printf '%s\n' "${summary[@]}"
exit $rc
