# shellcheck shell=bash
# kube_tools_ready: what test_kubernetes_manifests.sh checks the manifests
# with, all from Debian's archive, in var/kubernetes/ (git-ignored):
#   kubectl        Debian 12's kubectl, package kubernetes-client
#                  (1.20.5+really1.20.2, kustomize v2.0.3 built in), unpacked
#                  from its .deb (apt-get download, dpkg-deb -x) rather than
#                  installed: a machine may have another package's
#                  /usr/bin/kubectl (Google's `kubectl`), which dpkg would
#                  refuse to overwrite, and that kubectl is not the one to
#                  check with.
#   openapi-v2.json  the OpenAPI document of the same Kubernetes release,
#                  api/openapi-spec/swagger.json of Debian's source package
#                  `kubernetes` (apt-get source --download-only, with a
#                  deb-src list of our own derived from the machine's apt
#                  sources; the machine's apt configuration is not touched).
#   openapi-v2.pb  that document in the protobuf form kubectl reads from an
#                  API server, encoded by gnostic (openapi_pb.go, built with
#                  Debian's golang-go and golang-github-googleapis-gnostic-dev,
#                  which deploy/deps.sh installs).
# Done once; the file `ready` names the version. Returns non-zero, saying
# why on stderr, when it cannot. Needs ROOT (the repository root).
kube_tools_ready() {
	local dir=$ROOT/var/kubernetes tmp ver src srcver swagger
	if [ -f "$dir/ready" ] && [ -x "$dir/kubectl" ] && [ -s "$dir/openapi-v2.pb" ] &&
		[ -s "$dir/openapi-v2.json" ]; then
		return 0
	fi
	for c in apt-get dpkg-deb go tar; do
		command -v "$c" >/dev/null || {
			echo "kube_tools_ready: $c is missing (deploy/deps.sh installs it)" >&2
			return 1
		}
	done
	[ -d /usr/share/gocode/src/github.com/googleapis/gnostic/OpenAPIv2 ] || {
		echo "kube_tools_ready: golang-github-googleapis-gnostic-dev is missing (deploy/deps.sh installs it)" >&2
		return 1
	}
	rm -rf "$dir"
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.fetch.XXXXXX") || return 1

	# Debian's kubectl.
	if ! (cd "$tmp" && apt-get download kubernetes-client >/dev/null 2>"$tmp/apt.err"); then
		# A machine whose package lists were never fetched.
		apt-get update -qq >/dev/null 2>&1
		(cd "$tmp" && apt-get download kubernetes-client >/dev/null 2>"$tmp/apt.err") || {
			echo "kube_tools_ready: apt-get download kubernetes-client failed: $(tail -n2 "$tmp/apt.err")" >&2
			return 1
		}
	fi
	local deb
	deb=$(ls "$tmp"/kubernetes-client_*.deb) || return 1
	ver=$(dpkg-deb -f "$deb" Version)
	if ! dpkg-deb -x "$deb" "$tmp/client" || ! mv "$tmp/client/usr/bin/kubectl" "$dir/kubectl"; then
		echo "kube_tools_ready: could not unpack $deb" >&2
		return 1
	fi

	# The OpenAPI document of the source package it was built from.
	src=$(dpkg-deb -f "$deb" Source)
	srcver=${ver%+b[0-9]*}
	case "$src" in
	*'('*) srcver=${src#*(}; srcver=${srcver%)*}; src=${src%% *} ;;
	'') src=kubernetes ;;
	esac
	mkdir -p "$tmp/apt/sources.list.d" "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/src"
	: >"$tmp/apt/sources.list"
	sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list 2>/dev/null >>"$tmp/apt/sources.list"
	local f
	for f in /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f" >>"$tmp/apt/sources.list"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/apt/sources.list.d/$(basename "$f")"
	done
	local -a apt=(-o "Dir::Etc::SourceList=$tmp/apt/sources.list"
		-o "Dir::Etc::SourceParts=$tmp/apt/sources.list.d"
		-o "Dir::State::Lists=$tmp/apt/lists" -o "Dir::Cache=$tmp/apt/cache")
	if ! apt-get "${apt[@]}" update -qq >/dev/null 2>"$tmp/apt.err" ||
		! (cd "$tmp/src" && apt-get "${apt[@]}" source --download-only "$src=$srcver" >/dev/null 2>"$tmp/apt.err"); then
		echo "kube_tools_ready: apt-get source --download-only $src=$srcver failed: $(tail -n2 "$tmp/apt.err")" >&2
		return 1
	fi
	(cd "$tmp/src" && tar -xf "$src"_*.orig.tar.* --wildcards '*/api/openapi-spec/swagger.json') || {
		echo "kube_tools_ready: no api/openapi-spec/swagger.json in $src $srcver" >&2
		return 1
	}
	swagger=$(ls "$tmp"/src/*/api/openapi-spec/swagger.json) || return 1
	mv "$swagger" "$dir/openapi-v2.json" || return 1

	# Its protobuf encoding.
	if ! GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS='' GOCACHE="$tmp/go-cache" \
		go build -o "$tmp/openapi_pb" "$ROOT/tests/integration/kubernetes/openapi_pb.go" 2>"$tmp/go.err" ||
		! "$tmp/openapi_pb" "$dir/openapi-v2.json" "$dir/openapi-v2.pb" 2>>"$tmp/go.err"; then
		echo "kube_tools_ready: encoding the OpenAPI document failed: $(tail -n3 "$tmp/go.err")" >&2
		return 1
	fi
	rm -rf "$tmp"
	echo "kubernetes-client $ver, $src $srcver" >"$dir/ready"
}
