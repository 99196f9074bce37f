#!/usr/bin/python3
"""A stand-in for a Kubernetes API server, enough for kubectl's client-side
validation (`kubectl apply --dry-run=client --validate=true`) with no
cluster: kubectl needs the server's discovery documents to map each kind to
its resource, its /openapi/v2 document to validate against, and answers of
"not found" for the objects it looks up before an apply.

Everything it serves comes from one real OpenAPI document (the Kubernetes
release's own api/openapi-spec/swagger.json, see tools.sh): /openapi/v2 is
that document as protobuf (encoded beforehand by gnostic, openapi_pb.go),
and discovery is read off its paths (the resource of each list operation,
namespaced where a {namespace} path exists, its kind from the operation's
x-kubernetes-group-version-kind). Nothing about any kind is written here.
It accepts no write: with --dry-run=client kubectl sends none, and one that
came would be answered 405 and fail the check.

    apiserver_stub.py SWAGGER.json OPENAPI.pb PORTFILE

Listens on 127.0.0.1, on a free port it writes to PORTFILE once ready;
requests are logged on stderr.
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What kube-apiserver answers for it (the Accept value kubectl sends,
# application/com.github.proto-openapi.spec.v2@v1.0+protobuf, is no valid
# media type for Go's mime package, which client-go parses replies with).
PB_TYPE = "application/octet-stream"
VERBS = {"list": "list", "watchlist": "watch", "post": "create", "get": "get", "put": "update",
         "patch": "patch", "delete": "delete", "deletecollection": "deletecollection"}
PATH_RE = re.compile(r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
                     r"(?P<ns>/namespaces/\{namespace\})?/(?P<resource>[a-z0-9]+)(?P<item>/\{name\})?$")


def version_key(v):
    """Kubernetes' order of versions: GA, then beta, then alpha; higher first."""
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (3, 0, 0)
    level = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (level, -int(m.group(1)), -int(m.group(3) or 0))


def discovery(swagger):
    """{groupVersion: {resource: {...}}} from the document's paths."""
    gvs = {}
    for path, item in swagger.get("paths", {}).items():
        m = PATH_RE.match(path)
        if not m:
            continue
        group = m.group("group") or ""
        version = m.group("core") or m.group("version")
        gv = version if not group else group + "/" + version
        res = gvs.setdefault(gv, {}).setdefault(m.group("resource"), {"verbs": set()})
        if m.group("ns"):
            res["namespaced"] = True
        for method, op in item.items():
            if not isinstance(op, dict):
                continue
            action = op.get("x-kubernetes-action")
            if action in VERBS:
                res["verbs"].add(VERBS[action])
            gvk = op.get("x-kubernetes-group-version-kind")
            if gvk and "kind" not in res:
                res["kind"] = gvk["kind"]
    out = {}
    for gv, resources in gvs.items():
        lst = [{"name": name, "singularName": "", "namespaced": bool(r.get("namespaced")),
                "kind": r["kind"], "verbs": sorted(r["verbs"])}
               for name, r in sorted(resources.items()) if "kind" in r]
        if lst:
            out[gv] = lst
    return out


def main():
    swagger_path, pb_path, port_file = sys.argv[1:4]
    with open(swagger_path, encoding="utf-8") as f:
        swagger = json.load(f)
    with open(pb_path, "rb") as f:
        openapi_pb = f.read()
    resources = discovery(swagger)
    release = swagger.get("info", {}).get("version", "v0.0.0")
    m = re.match(r"^v(\d+)\.(\d+)", release)
    version_info = {"major": m.group(1) if m else "0", "minor": m.group(2) if m else "0",
                    "gitVersion": release, "platform": "linux/amd64"}
    groups = {}
    for gv in resources:
        if "/" in gv:
            g, v = gv.split("/", 1)
            groups.setdefault(g, []).append(v)
    group_list = []
    for g in sorted(groups):
        versions = sorted(groups[g], key=version_key)
        group_list.append({"name": g,
                           "versions": [{"groupVersion": g + "/" + v, "version": v} for v in versions],
                           "preferredVersion": {"groupVersion": g + "/" + versions[0], "version": versions[0]}})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, code, body, ctype="application/json"):
            if not isinstance(body, bytes):
                body = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def status(self, code, reason, message):
            self.reply(code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "reason": reason, "code": code})

        def do_GET(self):
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            addr = "127.0.0.1:%d" % self.server.server_address[1]
            if path == "/version":
                self.reply(200, version_info)
            elif path == "/openapi/v2":
                self.reply(200, openapi_pb, PB_TYPE)
            elif path == "/api":
                self.reply(200, {"kind": "APIVersions", "versions": ["v1"],
                                 "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                 "serverAddress": addr}]})
            elif path == "/apis":
                self.reply(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": group_list})
            elif path == "/api/v1" or (path.startswith("/apis/") and path[6:] in resources):
                gv = "v1" if path == "/api/v1" else path[6:]
                self.reply(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                 "resources": resources[gv]})
            else:
                # No object exists: every lookup of one is "not found".
                self.status(404, "NotFound", "%s not found (no objects: a stand-in API server)" % path)

        def refuse(self):
            self.status(405, "MethodNotAllowed", "a stand-in API server takes no writes")

        do_POST = do_PUT = do_PATCH = do_DELETE = refuse

        def log_message(self, fmt, *args):
            sys.stderr.write("apiserver_stub: %s\n" % (fmt % args))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    import os
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
