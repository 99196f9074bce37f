# shellcheck shell=bash
# jupyter_clients_ready: Debian's Jupyter Server and classic notebook, the
# unchanged clients tests/kernels/ drive against Gavel's kernel gateway.
# Test tools only, so not in deploy/deps.sh (the service needs ipykernel,
# not these): installed here when missing (as root; apt-get update first
# when the package lists do not know them). Returns non-zero, saying why on
# stderr, when it cannot.
jupyter_clients_ready() {
	local pkgs=(python3-jupyter-server python3-notebook)
	/usr/bin/python3 -c 'import jupyter_server, notebook' 2>/dev/null && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "${pkgs[*]} missing and installing them needs root" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; then
		apt-get update -qq >/dev/null 2>&1
		apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 || {
			echo "apt-get install ${pkgs[*]} failed" >&2
			return 1
		}
	fi
	/usr/bin/python3 -c 'import jupyter_server, notebook' 2>/dev/null || {
		echo "apt-get installed ${pkgs[*]} but Python cannot import them" >&2
		return 1
	}
}
