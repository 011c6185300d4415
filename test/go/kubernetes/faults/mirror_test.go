package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"etcd-effect.test/kubernetes/harness"
)

// mirror keeps a copy of one namespace's ConfigMaps the way a client-go informer does: list, then
// watch from the list's revision; when the watch ends, watch again from the last revision seen;
// when that revision is gone (410), list again.
type mirror struct {
	api  *harness.APIServer
	path string // /api/v1/namespaces/<ns>/configmaps

	mu       sync.Mutex
	objects  map[string]string // name → resourceVersion
	rv       string
	relists  int
	rewatch  int
	problems []string // events out of order or for unknown objects
}

func newMirror(api *harness.APIServer, ns string) *mirror {
	return &mirror{api: api, path: "/api/v1/namespaces/" + ns + "/configmaps", objects: map[string]string{}}
}

// run keeps the mirror up to date until ctx ends.
func (m *mirror) run(ctx context.Context) {
	for ctx.Err() == nil {
		if m.currentRV() == "" && !m.relist() {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		gone := false
		_ = m.api.Watch(ctx, m.path+"?allowWatchBookmarks=true&resourceVersion="+m.currentRV(), func(e harness.WatchEvent) bool {
			if e.Type == "ERROR" {
				gone = e.Status().Code == 410
				return false
			}
			m.apply(e)
			return true
		})
		m.mu.Lock()
		if gone {
			m.rv = "" // too old: list again
		} else {
			m.rewatch++
		}
		m.mu.Unlock()
		if ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func (m *mirror) currentRV() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rv
}

func (m *mirror) relist() bool {
	l, err := m.api.List(m.path)
	if err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects = map[string]string{}
	for _, it := range l.Items {
		m.objects[it.Metadata.Name] = it.Metadata.ResourceVersion
	}
	m.rv = l.Metadata.ResourceVersion
	m.relists++
	return true
}

func (m *mirror) apply(e harness.WatchEvent) {
	meta := e.Meta()
	m.mu.Lock()
	defer m.mu.Unlock()
	if rvLess(meta.ResourceVersion, m.rv) || meta.ResourceVersion == m.rv && e.Type != "BOOKMARK" {
		m.problems = append(m.problems, fmt.Sprintf("%s %s at %s after %s", e.Type, meta.Name, meta.ResourceVersion, m.rv))
	}
	switch e.Type {
	case "ADDED", "MODIFIED":
		m.objects[meta.Name] = meta.ResourceVersion
	case "DELETED":
		if _, ok := m.objects[meta.Name]; !ok {
			m.problems = append(m.problems, "DELETED of unknown "+meta.Name)
		}
		delete(m.objects, meta.Name)
	}
	m.rv = meta.ResourceVersion
}

// rvLess compares resourceVersions as the numbers they are.
func rvLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// snapshot is the mirror's objects as sorted "name@rv" lines.
func (m *mirror) snapshot() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return render(m.objects)
}

func render(objects map[string]string) string {
	lines := make([]string, 0, len(objects))
	for name, rv := range objects {
		lines = append(lines, name+"@"+rv)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// waitConsistent waits until the mirror holds exactly what a consistent list returns.
func (m *mirror) waitConsistent(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var want string
	for {
		l, err := m.api.List(m.path)
		if err == nil {
			objects := map[string]string{}
			for _, it := range l.Items {
				objects[it.Metadata.Name] = it.Metadata.ResourceVersion
			}
			if want = render(objects); m.snapshot() == want {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watching client's copy differs from a consistent list after %v:\n%s", timeout, diff(want, m.snapshot()))
		}
		time.Sleep(250 * time.Millisecond)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.problems) > 0 {
		t.Errorf("watch events out of order or unknown: %v", m.problems)
	}
	t.Logf("watching client: %d objects, %d lists, %d re-watches", len(m.objects), m.relists, m.rewatch)
}

func diff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l := range w {
		if !g[l] {
			fmt.Fprintf(&b, "  missing %s\n", l)
		}
	}
	for l := range g {
		if !w[l] {
			fmt.Fprintf(&b, "  extra   %s\n", l)
		}
	}
	return b.String()
}
