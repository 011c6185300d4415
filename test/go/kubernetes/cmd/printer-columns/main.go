// Command printer-columns is Kubernetes' own table printing of custom resources — the
// apiextensions-apiserver table convertor (k8s.io/apiextensions-apiserver v0.37.2) over client-go's
// JSONPath (k8s.io/client-go/util/jsonpath) — run as a differential oracle for etcd-effect's
// TypeScript JSONPath (issue 42). A test program only: test/kubernetes/api/jsonpath.property.test.ts
// builds it (cached) and talks to it.
//
// Protocol: one JSON request per line on stdin, one JSON response per line on stdout, until stdin
// closes:
//
//	{"columns": [<CustomResourceColumnDefinition>...], "object": {...}, "template": "{.a}"}
//
//	{"cells": [<the row's cells after NAME>] | null, "tableError": "<New's error>",
//	 "results": [[<FindResults of template, AllowMissingKeys>]] | null, "error": "<its error>",
//	 "text": "<Execute's output>", "textError": "<its error>", "parseError": "<Parse's error>"}
//
// The object is decoded as the apiserver decodes a custom resource (k8s.io/apimachinery's
// util/json: integers int64, other numbers float64).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
)

type request struct {
	Columns  []apiextensionsv1.CustomResourceColumnDefinition `json:"columns"`
	Object   json.RawMessage                                  `json:"object"`
	Template string                                           `json:"template"`
}

type response struct {
	Cells      []interface{}   `json:"cells"`
	TableError string          `json:"tableError,omitempty"`
	Results    [][]interface{} `json:"results"`
	Error      string          `json:"error,omitempty"`
	Text       string          `json:"text"`
	TextError  string          `json:"textError,omitempty"`
	ParseError string          `json:"parseError,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "printer-columns:", err)
			os.Exit(2)
		}
		b, _ := json.Marshal(answer(req))
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
}

func answer(req request) (res response) {
	obj := map[string]interface{}{}
	if err := utiljson.Unmarshal(req.Object, &obj); err != nil {
		res.Error = err.Error()
		return
	}
	conv, err := tableconvertor.New(req.Columns)
	if err != nil {
		res.TableError = err.Error()
	}
	table, err := conv.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: obj}, nil)
	if err != nil {
		res.TableError = err.Error()
	} else if len(table.Rows) == 1 {
		res.Cells = table.Rows[0].Cells[1:]
	}
	if req.Template == "" {
		return
	}
	j := jsonpath.New("t").AllowMissingKeys(true)
	if err := j.Parse(req.Template); err != nil {
		res.ParseError = err.Error()
		res.Error = err.Error()
		res.TextError = err.Error()
		return
	}
	results, err := j.FindResults(obj)
	if err != nil {
		res.Error = err.Error()
	} else {
		res.Results = [][]interface{}{}
		for _, rs := range results {
			vs := []interface{}{}
			for _, r := range rs {
				vs = append(vs, r.Interface())
			}
			res.Results = append(res.Results, vs)
		}
	}
	var buf bytes.Buffer
	j2 := jsonpath.New("t").AllowMissingKeys(true)
	_ = j2.Parse(req.Template)
	if err := j2.Execute(&buf, obj); err != nil {
		res.TextError = err.Error()
	}
	res.Text = buf.String()
	return
}
