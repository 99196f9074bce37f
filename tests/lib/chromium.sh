# shellcheck shell=bash
# chromium_ready: Debian's Chromium at /usr/bin/chromium, for the tests
# that drive the web pages with puppeteer-core (tests/js). Installs the
# chromium package when it is missing (as root; apt-get update first when
# the package lists do not know it). Returns non-zero, saying why on
# stderr, when it cannot.
chromium_ready() {
	[ -x /usr/bin/chromium ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "chromium is missing and installing it needs root (apt-get install chromium)" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q chromium >/dev/null 2>&1; then
		apt-get update -qq >/dev/null 2>&1
		apt-get install -y -q chromium >/dev/null 2>&1 || {
			echo "chromium is missing and apt-get install chromium failed" >&2
			return 1
		}
	fi
	[ -x /usr/bin/chromium ] || {
		echo "apt-get installed chromium but /usr/bin/chromium is not there" >&2
		return 1
	}
}
