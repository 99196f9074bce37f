// openapi_pb: reads Kubernetes' OpenAPI v2 document (JSON) and writes it in
// the protobuf form kubectl fetches from an API server's /openapi/v2
// (application/com.github.proto-openapi.spec.v2@v1.0+protobuf). The encoding
// is gnostic's own (Debian's golang-github-googleapis-gnostic-dev), the
// library kubectl decodes it with; nothing here interprets the schema.
// Used by test_kubernetes_manifests.sh (tools.sh builds it, GOPATH mode).
//
//	openapi_pb swagger.json openapi.pb
package main

import (
	"fmt"
	"io/ioutil"
	"os"

	"github.com/golang/protobuf/proto"
	openapi_v2 "github.com/googleapis/gnostic/OpenAPIv2"
	"github.com/googleapis/gnostic/compiler"
	"gopkg.in/yaml.v2"
)

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "openapi_pb: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: openapi_pb SWAGGER.json OUT.pb")
	}
	in, err := ioutil.ReadFile(os.Args[1])
	if err != nil {
		fail("%v", err)
	}
	// JSON is YAML: gnostic's compiler walks the yaml.v2 tree.
	var tree yaml.MapSlice
	if err := yaml.Unmarshal(in, &tree); err != nil {
		fail("%s: %v", os.Args[1], err)
	}
	doc, err := openapi_v2.NewDocument(tree, compiler.NewContext("$root", nil))
	if err != nil {
		fail("%s: %v", os.Args[1], err)
	}
	if doc.GetDefinitions() == nil || len(doc.GetDefinitions().GetAdditionalProperties()) == 0 {
		fail("%s: no definitions", os.Args[1])
	}
	out, err := proto.Marshal(doc)
	if err != nil {
		fail("marshal: %v", err)
	}
	if err := ioutil.WriteFile(os.Args[2], out, 0o644); err != nil {
		fail("%v", err)
	}
}
