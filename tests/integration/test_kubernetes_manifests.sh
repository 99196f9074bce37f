#!/usr/bin/env bash
# The Kubernetes manifests (deploy/kubernetes/, issue 19), checked without a
# cluster, in TAP, ending with "N passed, M failed":
#  1. built by Debian 12's kubectl (kubernetes-client 1.20, kustomize v2.0.3
#     built in: the oldest kustomize the base promises to work with), not by
#     whatever other kubectl the machine has;
#  2. kubectl's own client-side validation: `kubectl apply -k ...
#     --dry-run=client --validate=true` against a stand-in API server that
#     serves discovery and /openapi/v2 from Kubernetes 1.20's own OpenAPI
#     document (kubernetes/apiserver_stub.py; the document comes from
#     Debian's source package, kubernetes/tools.sh);
#  3. a schema check of every object against Kubernetes' schemas as the npm
#     package kubernetes-models ships them (pinned in tests/js), as shipped
#     and strict (an unknown field fails; kubernetes/schema_check.cjs);
#  and both must reject deliberately broken manifests (kubernetes/broken.py:
#  replicas "two", a misspelt container field, a container without a name);
#  4. what the issue asks of them (kubernetes/assertions.py): readiness on
#     /v1/health, two schedulers, the executor a DaemonSet on labelled and
#     tainted nodes, every privilege justified beside it, default-deny
#     NetworkPolicies with only the frontend reachable from outside, Secrets
#     holding placeholders only and every daemon's URLs taken from its own
#     Secret; and those assertions fail on a broken copy;
#  5. the ConfigMap's gavel.conf loads in each daemon (the built binaries in
#     $BUILD: executor and scheduler --check-config, the frontend starts and
#     answers /v1/health 503 without PostgreSQL and Redis: not ready);
#  6. a site's overlay can replace the image everywhere.
# Needs no root, cluster, PostgreSQL or Redis; downloads Debian's kubectl and
# the OpenAPI document once into var/kubernetes/ (kubernetes/tools.sh).
# About 10 s once installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
# Debian's python3 (with python3-yaml) before any version manager's shim,
# as tests/run.sh does.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/lib/npm.sh
. tests/lib/npm.sh
# shellcheck source=tests/integration/kubernetes/tools.sh
. tests/integration/kubernetes/tools.sh

K=tests/integration/kubernetes
MANIFESTS=deploy/kubernetes
PY=/usr/bin/python3
t0=$SECONDS
tmp=$(mktemp -d /tmp/gavel-kubernetes.XXXXXX)
stub_pid=
fe_pid=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	set +e
	[ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null && wait "$stub_pid" 2>/dev/null
	[ -n "$fe_pid" ] && kill "$fe_pid" 2>/dev/null && wait "$fe_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

finish() {
	echo "# took $((SECONDS - t0)) s"
	echo "1..$n"
	echo "$((n - fails)) passed, $fails failed"
	[ "$fails" -eq 0 ] && exit 0
	exit 1
}
# A prerequisite that failed: said as a failure, and the rest cannot run.
stop() {
	notok "$1" "${2:-}"
	finish
}
# Output of a failed command as TAP comments; or on one line, for notok.
show() { sed 's/^/# /' "$@" | head -n 20; }
oneline() { tr '\n' ' ' | cut -c1-700; }

# --- the tools ---------------------------------------------------------
kube_tools_ready 2>"$tmp/tools.err" ||
	stop "Debian's kubectl and Kubernetes' OpenAPI document in var/kubernetes" "$(tail -n3 "$tmp/tools.err" | oneline)"
KUBECTL=$ROOT/var/kubernetes/kubectl
client=$("$KUBECTL" version --client --short 2>/dev/null || true)
if [[ $client == *"v1.20."* ]]; then
	ok "Debian's kubectl in var/kubernetes: $client, kustomize v2.0.3 ($(cat var/kubernetes/ready))"
else
	stop "Debian's kubectl in var/kubernetes is 1.20" "$KUBECTL says: $client"
fi
npm_clients_ready 2>"$tmp/npm.err" || stop "the npm clients of tests/js (kubernetes-models)" "$(tail -n3 "$tmp/npm.err" | oneline)"
models=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' tests/js/node_modules/kubernetes-models/package.json)

# --- 1. build ------------------------------------------------------------
if "$KUBECTL" kustomize "$MANIFESTS" >"$tmp/built.yaml" 2>"$tmp/kustomize.err" &&
	$PY -c 'import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
		"$tmp/built.yaml" "$tmp/built.json" 2>>"$tmp/kustomize.err"; then
	count=$($PY -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/built.json")
	ok "kubectl kustomize $MANIFESTS (Debian's kubectl 1.20): $count objects"
else
	show "$tmp/kustomize.err"
	stop "kubectl kustomize $MANIFESTS (Debian's kubectl 1.20)"
fi

# --- 2. kubectl's client-side validation ----------------------------------
$PY "$K/apiserver_stub.py" var/kubernetes/openapi-v2.json var/kubernetes/openapi-v2.pb "$tmp/port" 2>"$tmp/stub.log" &
stub_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -n1 "$tmp/port" 2>/dev/null || true)
[ -n "$port" ] || stop "the stand-in API server started" "$(tail -n3 "$tmp/stub.log" | oneline)"
printf 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n' >"$tmp/kubeconfig"
kc() {
	"$KUBECTL" --kubeconfig="$tmp/kubeconfig" --cache-dir="$tmp/kube-cache" \
		--server="http://127.0.0.1:$port" --request-timeout=20s "$@"
}
if kc apply -k "$MANIFESTS" --dry-run=client --validate=true >"$tmp/apply.out" 2>&1; then
	applied=$(grep -c ' created (dry run)$' "$tmp/apply.out" || true)
	check "kubectl apply -k $MANIFESTS --dry-run=client --validate=true against Kubernetes 1.20's OpenAPI: $applied of $count objects" \
		[ "$applied" -eq "$count" ]
else
	notok "kubectl apply -k $MANIFESTS --dry-run=client --validate=true against Kubernetes 1.20's OpenAPI" "$(grep -m3 -i error "$tmp/apply.out" | oneline)"
	show "$tmp/apply.out"
fi

mkdir -p "$tmp/broken"
$PY "$K/broken.py" schema "$tmp/built.yaml" "$tmp/broken" >"$tmp/broken/cases" ||
	stop "broken.py wrote the broken manifests"
while IFS=$'\t' read -r name kubectl_says _; do
	if kc apply -f "$tmp/broken/$name.yaml" --dry-run=client --validate=true </dev/null >"$tmp/broken/$name.kubectl" 2>&1; then
		notok "kubectl's validation rejects the broken manifest '$name'" "it was accepted"
	elif grep -q 'ValidationError' "$tmp/broken/$name.kubectl" && grep -qF -- "$kubectl_says" "$tmp/broken/$name.kubectl"; then
		ok "kubectl's validation rejects the broken manifest '$name': $(grep -o 'ValidationError([^)]*)' "$tmp/broken/$name.kubectl" | head -n1) $kubectl_says"
	else
		notok "kubectl's validation rejects the broken manifest '$name' for its defect ($kubectl_says)" "$(oneline <"$tmp/broken/$name.kubectl")"
	fi
done <"$tmp/broken/cases"

# --- 3. schema check --------------------------------------------------------
if node "$K/schema_check.cjs" "$tmp/built.json" >"$tmp/schema.out" 2>&1; then
	checked=$(grep -c '^ok .* (strict)$' "$tmp/schema.out" || true)
	check "schema check (kubernetes-models $models, Kubernetes' schemas, as shipped and strict): $checked of $count objects valid" \
		[ "$checked" -eq "$count" ]
else
	notok "schema check (kubernetes-models $models, as shipped and strict) of the $count objects" "$(grep -v '^ok ' "$tmp/schema.out" | head -n5 | oneline)"
fi
while IFS=$'\t' read -r name _ schema_says; do
	rc=0
	node "$K/schema_check.cjs" "$tmp/broken/$name.json" </dev/null >"$tmp/broken/$name.schema" 2>&1 || rc=$?
	if [ "$rc" -eq 1 ] && grep -qF -- "$schema_says" "$tmp/broken/$name.schema"; then
		ok "the schema check rejects the broken manifest '$name': $(grep -m1 -F -- "$schema_says" "$tmp/broken/$name.schema" | sed 's/^invalid [^ ]* //')"
	else
		notok "the schema check rejects the broken manifest '$name' ($schema_says)" "exit $rc: $(oneline <"$tmp/broken/$name.schema")"
	fi
done <"$tmp/broken/cases"

# --- 4. what the issue asks ---------------------------------------------------
report_assertions() { # FILE: assertions.py's lines as TAP
	local verdict name why
	while IFS=$'\t' read -r verdict name why; do
		if [ "$verdict" = PASS ]; then ok "$name"; else notok "$name" "$why"; fi
	done <"$1"
}
$PY "$K/assertions.py" "$tmp/built.yaml" "$MANIFESTS" >"$tmp/assertions.out" 2>&1 || true
if grep -qE '^(PASS|FAIL)	' "$tmp/assertions.out"; then
	report_assertions "$tmp/assertions.out"
else
	notok "assertions.py ran" "$(oneline <"$tmp/assertions.out")"
fi
mkdir -p "$tmp/bad"
if $PY "$K/broken.py" assertions "$tmp/built.yaml" "$MANIFESTS" "$tmp/bad" >"$tmp/bad/must-fail" 2>"$tmp/bad/err"; then
	$PY "$K/assertions.py" "$tmp/bad/built.yaml" "$tmp/bad/manifests" >"$tmp/bad/assertions.out" 2>&1 || true
	missed=()
	while IFS= read -r name; do
		grep -qF "FAIL	$name" "$tmp/bad/assertions.out" || missed+=("$name")
	done <"$tmp/bad/must-fail"
	check "the assertions fail on a broken copy ($(wc -l <"$tmp/bad/must-fail") defects: probe, replicas, nodeSelector, a real password, a literal URL, open ingress, no default deny, unjustified privileges)" \
		[ ${#missed[@]} -eq 0 ]
	[ ${#missed[@]} -eq 0 ] || printf '# still passed: %s\n' "${missed[@]}"
else
	notok "broken.py wrote the broken copy" "$(oneline <"$tmp/bad/err")"
fi

# --- 5. the ConfigMap's gavel.conf in each daemon ------------------------------
conf=$MANIFESTS/gavel.conf
for d in executor scheduler; do
	if [ ! -x "$BUILD/gavel-$d" ]; then
		notok "gavel-$d --check-config accepts $conf" "$BUILD/gavel-$d is not built"
	elif "$BUILD/gavel-$d" --config "$conf" --check-config >"$tmp/$d.conf" 2>&1; then
		case $d in
		executor) want='work_root = "/var/lib/gavel/work"' ;;
		scheduler) want='[scheduler]' ;;
		esac
		check "gavel-$d --check-config accepts $conf" grep -qF "$want" "$tmp/$d.conf"
	else
		notok "gavel-$d --check-config accepts $conf" "$(head -n3 "$tmp/$d.conf" | oneline)"
	fi
done
if [ -x "$BUILD/gavel-frontend" ]; then
	# Its own options as the file has them; the pod's address and the
	# image's paths replaced by this machine's, and no database or Redis.
	GAVEL_FRONTEND_LISTEN=127.0.0.1 GAVEL_FRONTEND_LANGUAGES_DIR=$ROOT/languages \
		GAVEL_DATABASE_SERVICE_URL=postgresql://nobody@127.0.0.1:1/none GAVEL_REDIS_URL=redis://127.0.0.1:1/0 \
		"$BUILD/gavel-frontend" --config "$conf" --port 0 --ready-fd 3 3>"$tmp/fe.port" >"$tmp/fe.log" 2>&1 &
	fe_pid=$!
	for _ in $(seq 100); do [ -s "$tmp/fe.port" ] && break; sleep 0.1; done
	fport=$(head -n1 "$tmp/fe.port" 2>/dev/null || true)
	code=
	[ -n "$fport" ] && code=$(curl -s -m 10 -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$fport/v1/health" || true)
	check "gavel-frontend starts with $conf; without PostgreSQL and Redis GET /v1/health is 503 (the readinessProbe's 'not ready')" \
		[ "$code" = 503 ]
	[ "$code" = 503 ] || show "$tmp/fe.log"
	kill "$fe_pid" 2>/dev/null || true
	wait "$fe_pid" 2>/dev/null || true
	fe_pid=
else
	notok "gavel-frontend starts with $conf" "$BUILD/gavel-frontend is not built"
fi

# --- 6. a site's overlay -------------------------------------------------------
mkdir -p "$tmp/overlay"
rel=$($PY -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$ROOT/$MANIFESTS" "$tmp/overlay")
cat >"$tmp/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
bases:
- $rel
images:
- name: gavel
  newName: registry.example.org/gavel
  newTag: "1.2.3"
EOF
if "$KUBECTL" kustomize "$tmp/overlay" >"$tmp/overlay.yaml" 2>"$tmp/overlay.err"; then
	images=$(grep -E '^ +image: ' "$tmp/overlay.yaml" | sed 's/^ *image: //' | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1 x /' | paste -sd, -)
	total=$(grep -cE '^ +image: ' "$tmp/overlay.yaml" || true)
	other=$(grep -E '^ +image: ' "$tmp/overlay.yaml" | grep -vc 'registry.example.org/gavel:1.2.3$' || true)
	check "an overlay's images: entry replaces the image of all $total containers ($images)" \
		[ "$total" -ge 4 -a "$other" -eq 0 ]
else
	notok "an overlay of the base builds" "$(oneline <"$tmp/overlay.err")"
fi

finish
