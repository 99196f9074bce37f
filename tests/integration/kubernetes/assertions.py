#!/usr/bin/python3
"""What the Kubernetes manifests must say for issue 19, checked on what
`kubectl kustomize deploy/kubernetes` builds (and, for the comments that
justify each privilege, on the files themselves).

    assertions.py BUILT.yaml MANIFEST_DIR

Prints one line per assertion, "PASS<TAB>name" or "FAIL<TAB>name<TAB>why";
test_kubernetes_manifests.sh turns them into TAP. Exit status 0 unless the
input could not be read.
"""
import base64
import configparser
import glob
import os
import re
import sys
from urllib.parse import parse_qsl, urlsplit

import yaml

PLACEHOLDER = "CHANGE-ME"
DAEMONS = ("frontend", "scheduler", "executor")
URL_KEYS = ("GAVEL_DATABASE_SERVICE_URL", "GAVEL_REDIS_URL")
SECRET_LIKE = re.compile(r"(URL|PASSWORD|PEPPER|TOKEN|SECRET|KEY)$")

results = []


def check(name, ok, why=""):
    results.append((name, bool(ok), why))


def pod_spec(obj):
    return obj["spec"]["template"]["spec"]


def containers(spec):
    return [("init", c) for c in spec.get("initContainers") or []] + \
           [("main", c) for c in spec.get("containers") or []]


def read_conf(path):
    """gavel.conf's [section] key = value lines (comments and quotes aside)."""
    conf = {}
    section = ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^\[([a-z_]+)\]$", line)
            if m:
                section = m.group(1)
                continue
            m = re.match(r"^([a-z_.]+)\s*=\s*(.*?)(\s+#.*)?$", line)
            if m:
                value = m.group(2)
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = value[1:-1]
                conf[(section + "." if section else "") + m.group(1)] = value
    return conf


def comment_block_above(lines, i, skip=None):
    """The comment lines directly above lines[i], skipping lines that match
    skip (the other items of a list that one comment explains)."""
    j = i - 1
    while j >= 0 and skip is not None and skip.match(lines[j]):
        j -= 1
    block = []
    while j >= 0 and lines[j].strip().startswith("#"):
        block.insert(0, lines[j].strip().lstrip("#").strip())
        j -= 1
    return " ".join(block)


def main():
    built_path, manifest_dir = sys.argv[1:3]
    with open(built_path, encoding="utf-8") as f:
        objs = [o for o in yaml.safe_load_all(f) if o]
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], {})[o["metadata"]["name"]] = o
    conf = read_conf(os.path.join(manifest_dir, "gavel.conf"))
    namespace = next(iter(by_kind.get("Namespace", {})), None)

    workloads = {}
    for d in DAEMONS:
        kind = "DaemonSet" if d == "executor" else "Deployment"
        workloads[d] = by_kind.get(kind, {}).get("gavel-" + d)
    check("a Deployment gavel-frontend, a Deployment gavel-scheduler and a DaemonSet gavel-executor",
          all(workloads.values()),
          "missing: " + ", ".join(d for d, w in workloads.items() if not w))
    if not all(workloads.values()):
        return

    # Frontend: readiness on GET /v1/health, on the port gavel.conf names.
    fe = workloads["frontend"]
    fe_port = int(conf.get("frontend.port", "2358"))
    c = pod_spec(fe)["containers"][0]
    probe = (c.get("readinessProbe") or {}).get("httpGet") or {}
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports") or []}
    port = probe.get("port")
    port = ports.get(port, port) if isinstance(port, str) else port
    check("frontend: readinessProbe is an HTTP GET of /v1/health on frontend.port (%d)" % fe_port,
          probe.get("path") == "/v1/health" and port == fe_port,
          "readinessProbe.httpGet=%r, resolves to port %r" % (probe, port))
    svc = by_kind.get("Service", {}).get("gavel-frontend")
    tp = svc and svc["spec"]["ports"][0].get("targetPort")
    tp = ports.get(tp, tp) if isinstance(tp, str) else tp
    check("frontend: the Service gavel-frontend selects its pods and targets frontend.port",
          bool(svc) and all(fe["spec"]["template"]["metadata"]["labels"].get(k) == v
                            for k, v in svc["spec"]["selector"].items()) and tp == fe_port,
          "service=%r" % (svc and svc["spec"]))
    check("frontend: [frontend] listen is not loopback (the pod's address)",
          conf.get("frontend.listen", "127.0.0.1") not in ("127.0.0.1", "::1", "localhost"),
          "frontend.listen=%r" % conf.get("frontend.listen"))

    # Scheduler: two replicas, one leading.
    check("scheduler: 2 replicas (one leader, one standby)",
          workloads["scheduler"]["spec"].get("replicas") == 2,
          "replicas=%r" % workloads["scheduler"]["spec"].get("replicas"))

    # Executor: a DaemonSet on labelled, tainted nodes only.
    ex = pod_spec(workloads["executor"])
    sel = ex.get("nodeSelector") or {}
    tol = [t for t in ex.get("tolerations") or []
           if t.get("key") == "gavel.dev/executor" and t.get("effect") == "NoSchedule"
           and (t.get("operator") == "Exists" or t.get("value") == "true")]
    check("executor: DaemonSet with nodeSelector gavel.dev/executor=\"true\" and a toleration of its NoSchedule taint",
          sel.get("gavel.dev/executor") == "true" and tol,
          "nodeSelector=%r tolerations=%r" % (sel, ex.get("tolerations")))
    check("executor: no hostNetwork, hostPID or hostIPC",
          not any(ex.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")),
          "hostNetwork=%r hostPID=%r hostIPC=%r" % (ex.get("hostNetwork"), ex.get("hostPID"), ex.get("hostIPC")))

    # Privileges: only the executor's container; every one justified beside it.
    loose = []
    for d, w in workloads.items():
        spec = pod_spec(w)
        for where, cont in containers(spec):
            sc = cont.get("securityContext") or {}
            caps = (sc.get("capabilities") or {}).get("add") or []
            elevated = sc.get("privileged") or caps or sc.get("runAsUser") == 0
            if elevated and not (d == "executor" and where == "main") and not (
                    d == "executor" and where == "init" and not sc.get("privileged") and not caps):
                loose.append("%s/%s" % (d, cont["name"]))
            if d != "executor" and (sc.get("allowPrivilegeEscalation") is not False or
                                    "ALL" not in ((sc.get("capabilities") or {}).get("drop") or [])):
                loose.append("%s/%s: allowPrivilegeEscalation or drop ALL" % (d, cont["name"]))
        if d != "executor" and any("hostPath" in v for v in spec.get("volumes") or []):
            loose.append("%s: hostPath" % d)
        if spec.get("automountServiceAccountToken") is not False:
            loose.append("%s: a service account token" % d)
    check("privileges: only the executor's container holds any; the others drop ALL, cannot escalate, "
          "and no pod gets an API token", not loose, "; ".join(loose))

    raw = {}
    for path in sorted(glob.glob(os.path.join(manifest_dir, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            raw[os.path.basename(path)] = f.read().split("\n")
    item = re.compile(r"^\s*-\s+([A-Z_]+)\s*(#.*)?$")
    unjustified = []
    n_caps = 0
    for d, w in workloads.items():
        for where, cont in containers(pod_spec(w)):
            for cap in ((cont.get("securityContext") or {}).get("capabilities") or {}).get("add") or []:
                n_caps += 1
                found = False
                for fname, lines in raw.items():
                    for i, line in enumerate(lines):
                        m = item.match(line)
                        if not m or m.group(1) != cap:
                            continue
                        inline = (m.group(2) or "").lstrip("#").strip()
                        block = comment_block_above(lines, i, skip=item)
                        why = inline if cap in inline else block
                        # The comment names the capability and says why.
                        if re.search(r"\b%s\b" % cap, why) and len(why) >= len(cap) + 30:
                            found = True
                if not found:
                    unjustified.append("%s/%s %s" % (d, cont["name"], cap))
    check("privileges: each added capability (%d) has a comment beside it naming it and saying why" % n_caps,
          n_caps > 0 and not unjustified, "without one: " + ", ".join(unjustified))

    markers = [(r"^\s*privileged:\s*true\b", "privileged: true"),
               (r"^\s*type:\s*Unconfined\b", "seccomp Unconfined"),
               (r"apparmor.*:\s*unconfined\b", "AppArmor unconfined"),
               (r"^\s*hostPath:", "hostPath"),
               (r"^\s*runAsUser:\s*0\b", "runAsUser: 0"),
               (r"^\s*hostNetwork:", "hostNetwork"),
               (r"^\s*hostPID:", "hostPID")]
    bare = []
    n_marked = 0
    for fname, lines in raw.items():
        for i, line in enumerate(lines):
            if line.strip().startswith("#"):
                continue
            for pattern, what in markers:
                if re.search(pattern, line, re.I):
                    n_marked += 1
                    # Its own comment block, or the one of its volume entry.
                    block = comment_block_above(lines, i) or comment_block_above(lines, i - 1)
                    if len(block) < 40:
                        bare.append("%s:%d %s" % (fname, i + 1, what))
    check("privileges: privileged, unconfined seccomp and AppArmor, hostPath, root, hostNetwork and hostPID "
          "each have a comment saying why (%d places)" % n_marked, n_marked >= 6 and not bare,
          "without one: " + ", ".join(bare))

    # NetworkPolicies.
    pols = list(by_kind.get("NetworkPolicy", {}).values())
    deny = [p for p in pols if not (p["spec"].get("podSelector") or {}).get("matchLabels")
            and not (p["spec"].get("podSelector") or {}).get("matchExpressions")
            and "Ingress" in (p["spec"].get("policyTypes") or []) and not p["spec"].get("ingress")]
    check("network: a default-deny NetworkPolicy (every pod, Ingress, no rule)", deny,
          "policies: %s" % [p["metadata"]["name"] for p in pols])
    check("network: the default-deny policy covers Egress too",
          any("Egress" in (p["spec"].get("policyTypes") or []) and not p["spec"].get("egress") for p in deny),
          "")

    def selects(pol, w):
        labels = w["spec"]["template"]["metadata"].get("labels") or {}
        ml = (pol["spec"].get("podSelector") or {}).get("matchLabels") or {}
        return bool(ml) and all(labels.get(k) == v for k, v in ml.items())

    def from_outside(peer):
        if "ipBlock" in peer:
            return True
        ns = peer.get("namespaceSelector")
        if ns is None:
            return False
        own = (ns.get("matchLabels") or {}).get("kubernetes.io/metadata.name")
        return own != namespace

    outside = []
    for p in pols:
        for rule in p["spec"].get("ingress") or []:
            peers = rule.get("from")
            if not peers or any(from_outside(peer) for peer in peers):
                outside.append((p, rule))
    bad = [p["metadata"]["name"] for p, r in outside
           if not selects(p, workloads["frontend"]) or selects(p, workloads["scheduler"])
           or selects(p, workloads["executor"])
           or sorted(int(x.get("port", 0)) for x in r.get("ports") or []) != [fe_port]]
    check("network: only the frontend's policy admits traffic from outside the namespace, on frontend.port only",
          outside and not bad, "also: %s" % bad if bad else "no policy admits the frontend's clients")
    for d in ("scheduler", "executor"):
        admitted = [p["metadata"]["name"] for p in pols if selects(p, workloads[d]) and p["spec"].get("ingress")]
        check("network: nothing may connect to the %s" % d, not admitted, "admitted by %s" % admitted)
    for d in DAEMONS:
        eg = [p for p in pols if selects(p, workloads[d]) and "Egress" in (p["spec"].get("policyTypes") or [])]
        ports = {int(x["port"]) for p in eg for r in p["spec"].get("egress") or [] for x in r.get("ports") or []}
        check("network: the %s may reach DNS (53), PostgreSQL (5432), Redis and Sentinel (6379, 26379)" % d,
              eg and {53, 5432, 6379, 26379} <= ports, "egress ports: %s" % sorted(ports))
    ex_pol = [p for p in pols if selects(p, workloads["executor"])]
    blocks = [peer["ipBlock"] for p in ex_pol for r in p["spec"].get("egress") or []
              for peer in r.get("to") or [] if "ipBlock" in peer]
    needed = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"}
    check("network: the executor's egress to the Internet (tenants' destinations, webhooks) excludes private, "
          "CGNAT and link-local/metadata ranges",
          blocks and all(needed <= set(b.get("except") or []) for b in blocks), "ipBlocks: %r" % blocks)

    # Secrets: placeholders only.
    secrets = by_kind.get("Secret", {})
    real = []
    for name, s in secrets.items():
        values = dict(s.get("stringData") or {})
        for k, v in (s.get("data") or {}).items():
            values[k] = base64.b64decode(v).decode("utf-8", "replace")
        for k, v in values.items():
            if "://" in v:
                u = urlsplit(v)
                if u.password != PLACEHOLDER:
                    real.append("%s/%s: password %s" % (name, k, "missing" if u.password is None else "not " + PLACEHOLDER))
                for qk, qv in parse_qsl(u.query, keep_blank_values=True):
                    if "password" in qk and qv != PLACEHOLDER:
                        real.append("%s/%s: %s not %s" % (name, k, qk, PLACEHOLDER))
            elif v != PLACEHOLDER:
                real.append("%s/%s" % (name, k))
    check("secrets: every value in every Secret (%d) is a %s placeholder" % (len(secrets), PLACEHOLDER),
          secrets and not real, "; ".join(real))
    conf_text = open(os.path.join(manifest_dir, "gavel.conf"), encoding="utf-8").read()
    check("secrets: gavel.conf (a ConfigMap) holds no URL with credentials and no owner's [database] url",
          not re.search(r"://[^\s/@]+:[^\s/@]*@", conf_text) and "database.url" not in conf and
          not re.search(r"^\s*url\s*=\s*\S", conf_text.split("[database]")[-1].split("[")[0], re.M), "")

    # Each daemon's URLs from its own Secret, never a literal value.
    wrong = []
    for d, w in workloads.items():
        for where, cont in containers(pod_spec(w)):
            env = {e["name"]: e for e in cont.get("env") or []}
            for e in env.values():
                if "value" in e and SECRET_LIKE.search(e["name"]):
                    wrong.append("%s/%s: %s is a literal" % (d, cont["name"], e["name"]))
                if e["name"] == "GAVEL_DATABASE_URL":
                    wrong.append("%s/%s: the owner's GAVEL_DATABASE_URL" % (d, cont["name"]))
            if cont.get("envFrom"):
                wrong.append("%s/%s: envFrom (name each variable)" % (d, cont["name"]))
            if where != "main":
                continue
            for key in URL_KEYS:
                ref = ((env.get(key) or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
                if ref.get("name") != "gavel-" + d or ref.get("key") != key or ref.get("name") not in secrets:
                    wrong.append("%s: %s from %r" % (d, key, ref or env.get(key)))
    check("secrets: each daemon takes GAVEL_DATABASE_SERVICE_URL and GAVEL_REDIS_URL from its own Secret, "
          "no secret-like variable is a literal", not wrong, "; ".join(wrong))

    # The same config for every daemon, from the generated ConfigMap.
    cms = [n for n in by_kind.get("ConfigMap", {}) if n.startswith("gavel-config")]
    unmounted = []
    for d, w in workloads.items():
        spec = pod_spec(w)
        vols = {v["name"]: v for v in spec.get("volumes") or []}
        cont = spec["containers"][0]
        mounts = {m["mountPath"]: m for m in cont.get("volumeMounts") or []}
        m = mounts.get("/etc/gavel")
        cm = m and ((vols.get(m["name"]) or {}).get("configMap") or {}).get("name")
        if cm not in cms or "/etc/gavel/gavel.conf" not in cont.get("command", []):
            unmounted.append(d)
    check("config: every daemon runs with --config /etc/gavel/gavel.conf from the ConfigMap gavel-config",
          len(cms) == 1 and not unmounted, "ConfigMaps %s, not so for %s" % (cms, unmounted))
    node_env = [e for e in pod_spec(workloads["executor"])["containers"][0].get("env") or []
                if e["name"] == "GAVEL_EXECUTOR_NODE_NAME"]
    check("config: executor.node_name is the Kubernetes node's name (GAVEL_EXECUTOR_NODE_NAME from spec.nodeName)",
          node_env and ((node_env[0].get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "spec.nodeName",
          "%r" % node_env)
    mounts = {m["mountPath"]: m["name"] for m in pod_spec(workloads["executor"])["containers"][0].get("volumeMounts") or []}
    vols = {v["name"]: v for v in pod_spec(workloads["executor"]).get("volumes") or []}

    def volume_of(path):
        best = max((p for p in mounts if path == p or path.startswith(p.rstrip("/") + "/")), key=len, default=None)
        return best and vols.get(mounts[best])

    placed = []
    for key in ("executor.work_root", "executor.runsc_root", "executor.testdata_cache_dir", "executor.pch_dir"):
        v = volume_of(conf.get(key, ""))
        if not v or "emptyDir" not in v and "hostPath" not in v:
            placed.append("%s=%s" % (key, conf.get(key)))
    same_fs = volume_of(conf.get("executor.work_root", "")) is volume_of(conf.get("executor.testdata_cache_dir", "x"))
    cg = volume_of("/sys/fs/cgroup")
    check("config: the executor's work_root, runsc_root, testdata_cache_dir (same volume as work_root) and pch_dir "
          "are on volumes, the cgroup file system is the node's",
          not placed and same_fs and cg and (cg.get("hostPath") or {}).get("path") == "/sys/fs/cgroup",
          "not on a volume: %s; same fs: %s; cgroup: %r" % (placed, same_fs, cg))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash is a failure, said as one
        results.append(("assertions.py ran to the end", False, "%s: %s" % (type(e).__name__, e)))
    for name, ok, why in results:
        if ok:
            print("PASS\t%s" % name)
        else:
            print("FAIL\t%s\t%s" % (name, why.replace("\t", " ").replace("\n", " ")))
