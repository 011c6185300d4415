// protocol.go: the request and response lines of ssa-oracle (main.go describes them) and the
// decoding of step objects as the apiserver decodes request bodies into unstructured objects.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

type request struct {
	Definitions json.RawMessage `json:"definitions"`
	GVK         struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"gvk"`
	// per subresource ("" is the main resource): the field paths the apiserver's strategy
	// resets there (GetResetFields), which the field manager then never records as owned. The
	// values themselves are reset by the strategy (PrepareForUpdate), which the oracle does not
	// run: a status apply that changes spec returns the changed spec.
	ResetFields map[string][][]string `json:"resetFields"`
	Steps       []step                `json:"steps"`
}

type step struct {
	Op          string          `json:"op"`
	Manager     string          `json:"manager"`
	Object      json.RawMessage `json:"object"`
	Force       bool            `json:"force"`
	Subresource string          `json:"subresource"`
	// optional, RFC 3339: the time of the entries this step writes (step_time.go)
	Time string `json:"time"`
	at   time.Time
}

type response struct {
	Results []result `json:"results"`
	Error   string   `json:"error,omitempty"`
}

// result: exactly one of Object and Error is non-nil; both keys are always written.
type result struct {
	Object map[string]any `json:"object"`
	Error  *stepError     `json:"error"`
}

// stepError is an apimachinery Status flattened (Details.Causes as causes), or only the message
// of an error that is not one.
type stepError struct {
	Code    int32                `json:"code,omitempty"`
	Reason  metav1.StatusReason  `json:"reason,omitempty"`
	Message string               `json:"message"`
	Causes  []metav1.StatusCause `json:"causes,omitempty"`
}

func decodeRequest(line []byte) (*request, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	req := &request{}
	if err := dec.Decode(req); err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	if len(req.Definitions) == 0 {
		return nil, errors.New("request: definitions are missing")
	}
	if req.GVK.Version == "" || req.GVK.Kind == "" {
		return nil, errors.New("request: gvk needs a version and a kind")
	}
	for i, s := range req.Steps {
		switch s.Op {
		case "create", "update", "apply":
		default:
			return nil, fmt.Errorf("request: step %d: op %q is not create, update or apply", i, s.Op)
		}
		if s.Time != "" {
			at, err := time.Parse(time.RFC3339, s.Time)
			if err != nil {
				return nil, fmt.Errorf("request: step %d: time: %v", i, err)
			}
			req.Steps[i].at = at
		}
	}
	return req, nil
}

// decodeObject reads a step's object as the apiserver reads a JSON body into an unstructured
// object: case-sensitive keys, integers as int64 (k8s.io/apimachinery/pkg/util/json).
func decodeObject(raw json.RawMessage) (*unstructured.Unstructured, error) {
	content := map[string]any{}
	if err := utiljson.Unmarshal(raw, &content); err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}

func failed(err error) result {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		out := &stepError{Code: s.Code, Reason: s.Reason, Message: s.Message}
		if s.Details != nil {
			out.Causes = s.Details.Causes
		}
		return result{Error: out}
	}
	return result{Error: &stepError{Message: err.Error()}}
}
