#!/usr/bin/python3
"""Deliberately broken inputs, to prove that each check of
test_kubernetes_manifests.sh can fail. Each is made from what
`kubectl kustomize deploy/kubernetes` built, with one defect, so that the
defect is the only reason for a rejection.

    broken.py schema BUILT.yaml OUTDIR
        OUTDIR/<case>.yaml and OUTDIR/<case>.json (a one-object array) for
        each case: the frontend Deployment with
          replicas-string   spec.replicas "two"
          unknown-field     a misspelt field in its container
          missing-required  a container without its (required) name
        and prints "<case><TAB><what kubectl says><TAB><what the schema
        check says>" per case: the text each must reject it with.

    broken.py assertions BUILT.yaml MANIFEST_DIR OUTDIR
        OUTDIR/built.yaml and OUTDIR/manifests/ (a copy of MANIFEST_DIR)
        with a defect for each of several assertions of assertions.py, and
        prints the names of the assertions that must then fail, one a line.
"""
import copy
import json
import os
import re
import shutil
import sys

import yaml


def load(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def find(objs, kind, name):
    return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)


def schema_cases(built, outdir):
    fe = find(load(built), "Deployment", "gavel-frontend")
    cases = []

    d = copy.deepcopy(fe)
    d["spec"]["replicas"] = "two"
    cases.append(("replicas-string", d, "invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas",
                  "(shipped): /spec/replicas: must be integer"))

    d = copy.deepcopy(fe)
    d["spec"]["template"]["spec"]["containers"][0]["readinessProbee"] = \
        d["spec"]["template"]["spec"]["containers"][0].pop("readinessProbe")
    cases.append(("unknown-field", d, 'unknown field "readinessProbee"',
                  '(strict): /spec/template/spec/containers/0: unknown field "readinessProbee"'))

    d = copy.deepcopy(fe)
    del d["spec"]["template"]["spec"]["containers"][0]["name"]
    cases.append(("missing-required", d, 'missing required field "name"',
                  '/spec/template/spec/containers/0: missing required field "name"'))

    for name, obj, kubectl_says, schema_says in cases:
        with open(os.path.join(outdir, name + ".yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump(obj, f, sort_keys=False)
        with open(os.path.join(outdir, name + ".json"), "w", encoding="utf-8") as f:
            json.dump([obj], f)
        print("%s\t%s\t%s" % (name, kubectl_says, schema_says))


def assertion_cases(built, manifest_dir, outdir):
    objs = load(built)
    must_fail = []

    fe = find(objs, "Deployment", "gavel-frontend")
    fe["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["path"] = "/healthz"
    must_fail.append("frontend: readinessProbe is an HTTP GET of /v1/health")
    # A URL given literally instead of from the Secret.
    for e in fe["spec"]["template"]["spec"]["containers"][0]["env"]:
        if e["name"] == "GAVEL_REDIS_URL":
            e.pop("valueFrom")
            e["value"] = "redis://gavel-frontend:s3cret@redis:6379/0"
    must_fail.append("secrets: each daemon takes GAVEL_DATABASE_SERVICE_URL and GAVEL_REDIS_URL from its own Secret")

    find(objs, "Deployment", "gavel-scheduler")["spec"]["replicas"] = 1
    must_fail.append("scheduler: 2 replicas")

    ex = find(objs, "DaemonSet", "gavel-executor")
    del ex["spec"]["template"]["spec"]["nodeSelector"]
    must_fail.append("executor: DaemonSet with nodeSelector")

    find(objs, "Secret", "gavel-scheduler")["stringData"]["GAVEL_REDIS_URL"] = \
        "redis-sentinel://gavel-scheduler:hunter2@s-0:26379,s-1:26379/gavel/0"
    must_fail.append("secrets: every value in every Secret")

    # The scheduler open to the world, and no default deny.
    find(objs, "NetworkPolicy", "gavel-scheduler")["spec"]["ingress"] = [{}]
    must_fail.append("network: only the frontend's policy admits traffic from outside the namespace")
    must_fail.append("network: nothing may connect to the scheduler")
    objs = [o for o in objs if not (o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "gavel-default-deny")]
    must_fail.append("network: a default-deny NetworkPolicy")

    with open(os.path.join(outdir, "built.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump_all(objs, f, sort_keys=False)

    # A capability whose comment is gone, and privileged without its own.
    copy_dir = os.path.join(outdir, "manifests")
    shutil.copytree(manifest_dir, copy_dir)
    path = os.path.join(copy_dir, "executor.yaml")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for target in (r"^\s*-\s+NET_ADMIN\b", r"^\s*privileged:\s*true"):
        i = next(k for k, line in enumerate(lines) if re.match(target, line))
        j = i
        while j > 0 and lines[j - 1].strip().startswith("#"):
            j -= 1
        del lines[j:i]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    must_fail.append("privileges: each added capability")
    must_fail.append("privileges: privileged, unconfined seccomp and AppArmor")

    for name in must_fail:
        print(name)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "schema" and len(sys.argv) == 4:
        schema_cases(sys.argv[2], sys.argv[3])
    elif mode == "assertions" and len(sys.argv) == 5:
        assertion_cases(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
