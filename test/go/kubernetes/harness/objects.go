package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Meta is the object metadata the harness reads.
type Meta struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Object is any Kubernetes object as far as its metadata goes.
type Object struct {
	Metadata Meta `json:"metadata"`
}

// ObjectList is a List response.
type ObjectList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []Object `json:"items"`
}

// Status is a metav1.Status (an error answer, or the object of a watch ERROR event).
type Status struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// CreateConfigMap POSTs a ConfigMap with data {"v": value}; returns the HTTP status and, on 201,
// the object's resourceVersion.
func (a *APIServer) CreateConfigMap(ctx context.Context, ns, name, value string) (int, string, error) {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]string{"name": name},
		"data":     map[string]string{"v": value},
	})
	req, err := http.NewRequestWithContext(ctx, "POST", a.URL+"/api/v1/namespaces/"+ns+"/configmaps", strings.NewReader(string(body)))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 201 {
		return resp.StatusCode, "", err
	}
	var obj Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return resp.StatusCode, "", err
	}
	return resp.StatusCode, obj.Metadata.ResourceVersion, nil
}

// List GETs a list (path with its query) and decodes it.
func (a *APIServer) List(path string) (ObjectList, error) {
	var l ObjectList
	code, body, err := a.Get(path)
	if err != nil {
		return l, err
	}
	if code != 200 {
		return l, fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	return l, json.Unmarshal([]byte(body), &l)
}

// WatchEvent is one event of a watch stream.
type WatchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Meta decodes the event object's metadata.
func (e WatchEvent) Meta() Meta {
	var o Object
	_ = json.Unmarshal(e.Object, &o)
	return o.Metadata
}

// Status decodes the event object as a Status (for ERROR events).
func (e WatchEvent) Status() Status {
	var s Status
	_ = json.Unmarshal(e.Object, &s)
	return s
}

// Watch opens a watch (path with its query, watch=1 added) and calls `each` per event until the
// stream ends, `each` returns false, or ctx ends. It returns why it ended (nil: the server ended it).
func (a *APIServer) Watch(ctx context.Context, path string, each func(WatchEvent) bool) error {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequestWithContext(ctx, "GET", a.URL+path+sep+"watch=1", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		data, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("watch %s: %d %s", path, resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e WatchEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("watch %s: %v", path, err)
		}
		if !each(e) {
			return nil
		}
	}
	return sc.Err()
}
