// Command ssa-oracle is Kubernetes' own server-side apply and managedFields handling
// (k8s.io/apimachinery v0.37.2's managedfields over sigs.k8s.io/structured-merge-diff v6), run as
// a differential oracle for etcd-effect's TypeScript implementation (issue 27). It is a test
// program only: test/support/ssa-oracle.ts builds it (cached) and talks to it.
//
// Protocol: one JSON request per line on stdin, one JSON response per line on stdout, until
// stdin closes. A request is one object's life from nothing through a list of steps:
//
//	{"definitions": {<OpenAPI v2 definition name>: <schema>, ...},
//	 "gvk": {"group": "", "version": "v1", "kind": "ConfigMap"},
//	 "resetFields": {"": [["status"]], "status": [["metadata"], ["spec"]]},   (optional)
//	 "steps": [{"op": "create"|"update"|"apply", "manager": "m", "object": {...},
//	            "force": false, "subresource": "", "time": "2025-01-01T00:00:01Z"}]}
//	                                       (force, subresource, time optional; step_time.go)
//
//	{"results": [{"object": <the live object after the step>, "error": null}
//	           | {"object": null, "error": {"code", "reason", "message", "causes"}}],
//	 "error": "<why the request itself was refused>"}                           (only then)
//
// The field manager is managedfields.NewDefaultFieldManager, the constructor the apiserver's
// request scopes use (NewDefaultCRDFieldManager differs only in the hub version of conversions,
// and the oracle converts nothing: one version per request). It is built with the whole chain
// of the apiserver — structured merge, strip meta, managedFields updater, build manager info,
// cap managers (10), skip non-applied, last-applied manager, last-applied updater, version
// check — which managedfieldstest.NewTestFieldManager is not (it leaves out the cap on update
// managers). Objects are unstructured.Unstructured, converted to and from structured-merge-diff
// values by the TypeConverter of the request's definitions (steps.go says what each op calls).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	converters := newConverterCache()
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if encErr := enc.Encode(handle(converters, line)); encErr != nil {
				fmt.Fprintf(os.Stderr, "ssa-oracle: encoding a response: %v\n", encErr)
				os.Exit(1)
			}
			if flushErr := out.Flush(); flushErr != nil {
				os.Exit(1) // the reader went away
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ssa-oracle: reading stdin: %v\n", err)
			os.Exit(1)
		}
	}
}

// handle answers one request line; a request it cannot run is answered with its reason.
func handle(converters *converterCache, line []byte) response {
	req, err := decodeRequest(line)
	if err != nil {
		return response{Results: []result{}, Error: err.Error()}
	}
	converter, err := converters.get(req.Definitions)
	if err != nil {
		return response{Results: []result{}, Error: err.Error()}
	}
	results, err := runSteps(converter, req)
	if err != nil {
		return response{Results: []result{}, Error: err.Error()}
	}
	return response{Results: results}
}
