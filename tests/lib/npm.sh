# shellcheck shell=bash
# npm_clients_ready: the pinned npm clients of tests/js (package-lock.json)
# installed in tests/js/node_modules, with `npm ci`, again only when the
# lock file changed since the last install. Installs Debian's npm first when
# there is none. Returns non-zero, saying why on stderr, when it cannot.
# Needs ROOT (the repository root).
npm_clients_ready() {
	local dir=$ROOT/tests/js stamp
	if ! command -v npm >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm >/dev/null 2>&1 || {
			echo "npm is missing and apt-get install npm failed" >&2
			return 1
		}
	fi
	stamp=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
	if [ -f "$dir/node_modules/.gavel-lock" ] && [ "$(cat "$dir/node_modules/.gavel-lock")" = "$stamp" ]; then
		return 0
	fi
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2 || {
		echo "npm ci in tests/js failed" >&2
		return 1
	}
	echo "$stamp" >"$dir/node_modules/.gavel-lock"
}
