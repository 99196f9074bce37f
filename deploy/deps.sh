#!/usr/bin/env bash
# Installs the Debian packages that Gavel's build, tests and local services
# need. Silent and quick when everything is already there: one dpkg-query,
# no apt. Only when something is missing does it run apt-get update and
# apt-get install (which needs root).
#
# The list is BASE_PACKAGES below plus, for each languages/*.yaml, the
# packages named on its `packages: [a, b]` line (one line, flow style).
# Extra names can be added with GAVEL_EXTRA_PACKAGES="a b".
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_PACKAGES=(
	# build
	gcc make pkg-config
	libevent-dev libpq-dev libhiredis-dev libseccomp-dev libcmocka-dev
	libjansson-dev libsodium-dev libarchive-dev libyaml-dev libcurl4-openssl-dev libwslay-dev
	# sandbox and networking
	runsc iproute2 iperf3 nftables
	# local services (deploy/local, tests/lib/services.sh)
	postgresql redis-server redis-tools util-linux procps curl
	# Redis Sentinel for the failover test (tests/lib/redis_sentinel.sh)
	redis-sentinel
	# the fresh-root smoke check (tests/fresh/)
	debootstrap bubblewrap git
	# fuzz targets (make fuzz, tests/fuzz/): clang and its libFuzzer runtime;
	# clang's static analyzer (make analyze, tests/static/)
	clang libclang-rt-dev clang-tidy
	# language toolchains (used when no languages/*.yaml names packages)
	g++ python3 default-jdk-headless nodejs rustc golang-go fp-compiler
	# notebook kernels (executor/kernels/): ipykernel with numpy and
	# matplotlib inside the sandboxes (the tests' Jupyter clients come
	# with the tests: tests/lib/jupyter.sh)
	python3-ipykernel python3-numpy python3-matplotlib
	# instructor test suites (executor/suite/): the frameworks they run
	python3-pytest junit5 libgtest-dev
	# the Kubernetes manifests' check (tests/integration/
	# test_kubernetes_manifests.sh): gnostic, which encodes Kubernetes'
	# OpenAPI document the way kubectl reads it, built with golang-go above;
	# PyYAML for the manifests. Debian's kubectl itself (kubernetes-client)
	# is not installed here: a machine may have another package's
	# /usr/bin/kubectl, which dpkg would refuse to replace, so the test
	# unpacks the .deb into var/kubernetes/ (tests/integration/kubernetes/
	# tools.sh) and uses that one
	golang-github-googleapis-gnostic-dev python3-yaml
)

# Prints the names on the `packages:` line of one YAML file.
yaml_packages() {
	sed -n 's/^[[:space:]]*packages:[[:space:]]*\[\(.*\)\][[:space:]]*\(#.*\)\{0,1\}$/\1/p' "$1" |
		tr ',' '\n' | sed "s/^[[:space:]\"']*//; s/[[:space:]\"']*\$//" | grep -v '^$' || true
}

packages=("${BASE_PACKAGES[@]}")
shopt -s nullglob
for y in languages/*.yaml; do
	while IFS= read -r p; do
		packages+=("$p")
	done < <(yaml_packages "$y")
done
# shellcheck disable=SC2206 # word splitting is the point
packages+=(${GAVEL_EXTRA_PACKAGES:-})

# Debian package names: refuse anything else before it reaches apt.
for p in "${packages[@]}"; do
	if ! [[ $p =~ ^[a-z0-9][a-z0-9+.-]+(:[a-z0-9]+)?$ ]]; then
		echo "deps.sh: '$p' is not a valid Debian package name" >&2
		exit 1
	fi
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)

installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
	awk '$2 == "ii" { print $1 }' || true)
missing=()
for p in "${packages[@]}"; do
	grep -qxF "${p%%:*}" <<<"$installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: installing them needs root; run 'sudo deploy/deps.sh' (or make deps as root)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps.sh: installed ${#missing[@]} package(s)"
