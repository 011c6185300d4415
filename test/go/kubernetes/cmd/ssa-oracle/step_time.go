// step_time.go: a step's optional "time", the clock a property test gives the oracle. The field
// manager stamps the entries a step writes with the wall clock (time.Now, not injectable), and
// that time orders managedFields (operation, then time in seconds, then manager, apiVersion,
// subresource) and chooses which update managers the cap of 10 merges first. A test comparing
// against an implementation on a test clock gives each step its time; the entries the step wrote
// then carry that time instead, in Kubernetes' order. An entry counts as written by the step when
// its time falls within the step's wall-clock window and differs both from the entry's time
// before the step and from the time the step's object itself gave it. Step times should be in
// the past and increase from step to step (the field manager compares the wall-clock time of the
// step's own entries with the times of earlier ones).
package main

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type entryKey struct {
	manager, operation, apiVersion, subresource string
}

func keyOf(e metav1.ManagedFieldsEntry) entryKey {
	return entryKey{e.Manager, string(e.Operation), e.APIVersion, e.Subresource}
}

func timesOf(entries []metav1.ManagedFieldsEntry) map[entryKey]int64 {
	out := map[entryKey]int64{}
	for _, e := range entries {
		if e.Time != nil {
			out[keyOf(e)] = e.Time.Unix()
		}
	}
	return out
}

// restamp gives the entries of out that the step wrote between start and end the time at.
func restamp(out *unstructured.Unstructured, live, obj *unstructured.Unstructured, start, end time.Time, at time.Time) {
	before := map[entryKey]int64{}
	if live != nil {
		before = timesOf(live.GetManagedFields())
	}
	given := timesOf(obj.GetManagedFields())
	entries := out.GetManagedFields()
	for i, e := range entries {
		if e.Time == nil {
			continue
		}
		t, k := e.Time.Unix(), keyOf(e)
		if t < start.Unix() || t > end.Unix() {
			continue
		}
		if prev, ok := before[k]; ok && prev == t {
			continue
		}
		if g, ok := given[k]; ok && g == t {
			continue
		}
		entries[i].Time = &metav1.Time{Time: at.UTC()}
	}
	// Kubernetes' order of managedFields entries (managedfields' encoding sorts them so)
	sort.SliceStable(entries, func(i, j int) bool {
		p, q := entries[i], entries[j]
		if p.Operation != q.Operation {
			return p.Operation < q.Operation
		}
		if ps, qs := seconds(p.Time), seconds(q.Time); ps != qs {
			return ps < qs
		}
		if p.Manager != q.Manager {
			return p.Manager < q.Manager
		}
		if p.APIVersion != q.APIVersion {
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
	out.SetManagedFields(entries)
}

func seconds(t *metav1.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}
