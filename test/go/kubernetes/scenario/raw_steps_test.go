package scenario

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"etcd-effect.test/kubernetes/harness"
)

// list is the part of a List response the raw steps read.
type list struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"items"`
}

func (l list) names() string {
	var n []string
	for _, it := range l.Items {
		n = append(n, it.Metadata.Name)
	}
	sort.Strings(n)
	return strings.Join(n, " ")
}

// raw runs `kubectl get --raw path` and returns its stdout, or the error reduced to its words
// (numbers, which are revisions, replaced by N).
func (s *scenario) raw(path string) (string, string) {
	out, err := s.kc.Run("get", "--raw", path)
	if err != nil {
		return "", digits.ReplaceAllString(err.Error()[strings.Index(err.Error(), ": ")+2:], "N")
	}
	return out, ""
}

var digits = regexp.MustCompile(`[0-9]+`)

func (s *scenario) rawList(path string) list {
	s.t.Helper()
	out, errText := s.raw(path)
	if errText != "" {
		s.t.Fatalf("get --raw %s: %s", path, errText)
	}
	var l list
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		s.t.Fatalf("get --raw %s: %v\n%s", path, err, out)
	}
	return l
}

// watchEvent is one line of a watch response.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Message string `json:"message"` // of a Status (ERROR)
	} `json:"object"`
}

// rawWatch reads a watch that the server ends (timeoutSeconds) and returns its events as
// "TYPE name" (a bookmark as "BOOKMARK" plus its initial-events-end annotation).
func (s *scenario) rawWatch(path string) []string {
	s.t.Helper()
	out, errText := s.raw(path)
	if errText != "" {
		s.t.Fatalf("get --raw %s: %s", path, errText)
	}
	var events []string
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e watchEvent
		if err := dec.Decode(&e); err != nil {
			s.t.Fatalf("watch %s: %v\n%s", path, err, out)
		}
		switch e.Type {
		case "ERROR":
			events = append(events, "ERROR "+e.Object.Message)
		case "BOOKMARK":
			events = append(events, "BOOKMARK initial-events-end="+e.Object.Metadata.Annotations["k8s.io/initial-events-end"])
		default:
			events = append(events, e.Type+" "+e.Object.Metadata.Name)
		}
	}
	return events
}

// rawListWatch: lists at an exact revision, not older than one, consistent and from any
// revision; a watch from a revision; a watch-list (sendInitialEvents) ending in the
// initial-events-end bookmark; and the apiserver's answers to invalid combinations.
func (s *scenario) rawListWatch() {
	const base = "/api/v1/namespaces/" + ns + "/configmaps"
	before := s.rawList(base)
	rv := before.Metadata.ResourceVersion
	s.must("create", "configmap", "cm-20", "-n", ns, "--from-literal=v=0")
	s.must("delete", "configmap", "cm-05", "-n", ns)
	now := s.rawList(base)

	exact := s.rawList(base + "?resourceVersionMatch=Exact&resourceVersion=" + rv)
	if exact.names() != before.names() || exact.Metadata.ResourceVersion != rv {
		s.t.Errorf("Exact list at %s: rv %s, %s; want %s", rv, exact.Metadata.ResourceVersion, exact.names(), before.names())
	}
	s.see("list Exact at an old revision", exact.names())
	notOlder := s.rawList(base + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + rv)
	if notOlder.names() != now.names() {
		s.t.Errorf("NotOlderThan list: %s, want %s", notOlder.names(), now.names())
	}
	s.see("list NotOlderThan an old revision", notOlder.names())
	s.see("list consistent", now.names())
	s.see("list resourceVersion=0 answered", fmt.Sprint(s.rawList(base+"?resourceVersion=0").names() != ""))
	paged := s.rawList(base + "?limit=5")
	s.see("list limit=5", fmt.Sprint(len(paged.Items)))

	fromRV := s.rawWatch(base + "?watch=1&timeoutSeconds=2&resourceVersion=" + rv)
	if strings.Join(fromRV, ";") != "ADDED cm-20;DELETED cm-05" {
		s.t.Errorf("watch from %s: %v", rv, fromRV)
	}
	s.see("watch from an old revision", strings.Join(fromRV, "; "))

	for _, bad := range []string{
		base + "?watch=1&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
		base + "?resourceVersionMatch=Exact",
		base + "?sendInitialEvents=true",
	} {
		_, errText := s.raw(bad)
		s.see("invalid "+digits.ReplaceAllString(bad[len(base):], "N"), errText)
	}

	watchList := s.rawWatch(base + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3")
	if s.store.Kind == harness.Etcd && len(watchList) == 1 && strings.HasPrefix(watchList[0], "ERROR ") {
		// etcd 3.4.23 is older than 3.4.31, so the apiserver does not ask it for progress
		// notifications (RequestWatchProgress), and without them it refuses watch-lists
		s.seeLimit("watch-list", watchList[0])
		return
	}
	var added []string
	endBookmark := false
	for _, e := range watchList {
		if name, ok := strings.CutPrefix(e, "ADDED "); ok && !endBookmark {
			added = append(added, name)
		}
		if e == "BOOKMARK initial-events-end=true" {
			endBookmark = true
		}
	}
	sort.Strings(added)
	if strings.Join(added, " ") != now.names() || !endBookmark {
		s.t.Errorf("watch-list: %v; want ADDED %s then the initial-events-end bookmark", watchList, now.names())
	}
	s.see("watch-list initial events", strings.Join(added, " "))
	s.see("watch-list initial-events-end bookmark", fmt.Sprint(endBookmark))

}
