// Package scenario runs Kubernetes itself on a store: kube-apiserver (watch cache on, as by default)
// and kube-controller-manager over etcd 3.4 (the control) and over `etcd-effect serve`, each driven
// through kubectl by the same steps. Every step asserts what it expects and records what it saw
// (names, event types, reasons — never revisions); TestScenario then requires every observation
// of the control to hold on etcd-effect too.
package scenario

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"etcd-effect.test/kubernetes/harness"
)

// observations maps a step's key to what it saw, in a form both stores must agree on.
type observations map[string]string

func TestScenario(t *testing.T) {
	seen := map[harness.StoreKind]observations{}
	for _, kind := range harness.Stores() {
		t.Run(string(kind), func(t *testing.T) {
			obs := observations{}
			seen[kind] = obs
			runScenario(t, kind, obs)
			keys := make([]string, 0, len(obs))
			for k := range obs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				t.Logf("%s: %s", k, obs[k])
			}
		})
	}
	control, ours := seen[harness.Etcd], seen[harness.EtcdEffect]
	if control == nil || ours == nil {
		t.Logf("one store only (STORES=%v): no comparison with the control", harness.Stores())
		return
	}
	t.Run("etcd-effect shows what etcd 3.4 shows", func(t *testing.T) {
		keys := make([]string, 0, len(control))
		for k := range control {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, controlLimit) {
				t.Logf("%s: %s", k, control[k])
				continue
			}
			if got, ok := ours[k]; !ok {
				t.Errorf("%s: not observed on etcd-effect (etcd 3.4: %q)", k, control[k])
			} else if got != control[k] {
				t.Errorf("%s:\n  etcd 3.4:    %q\n  etcd-effect: %q", k, control[k], got)
			}
		}
	})
}

// scenario is one run of the steps against one store.
type scenario struct {
	t     *testing.T
	store *harness.Store
	api   *harness.APIServer
	kc    *harness.Kubectl
	obs   observations
}

func runScenario(t *testing.T, kind harness.StoreKind, obs observations) {
	// mutual TLS between the apiserver and the store, as kubeadm sets it up
	store := harness.StartStore(t, kind, harness.StoreOptions{TLS: true})
	// Events live 30 s (etcd leases of 31 s), so the run sees them expire.
	api := harness.StartAPIServer(t, store, harness.APIServerOptions{EventTTL: "30s"})
	harness.StartControllerManager(t, api)
	s := &scenario{t: t, store: store, api: api, kc: harness.NewKubectl(t, api), obs: obs}
	steps := []struct {
		name string
		run  func(*scenario)
	}{
		{"readyz", (*scenario).readyz},
		{"namespaces", (*scenario).namespaces},
		{"configmaps", (*scenario).configMaps},
		{"secrets", (*scenario).secrets},
		{"raw-list-watch", (*scenario).rawListWatch},
		{"crd", (*scenario).customResources},
		{"large-objects", (*scenario).largeObjects},
		{"deployment", (*scenario).deployment},
		{"events", (*scenario).events},
		{"cascading-deletion", (*scenario).cascadingDeletion},
		{"leases", (*scenario).leases},
		{"watch-cache-metrics", (*scenario).watchCacheMetrics},
		{"event-expiry", (*scenario).eventExpiry},
	}
	for _, step := range steps {
		if !t.Run(step.name, func(t *testing.T) {
			sub := *s
			sub.t = t
			step.run(&sub)
		}) {
			t.Fatalf("step %s failed; apiserver log:\n%s", step.name, api.Process().LogTail(20))
		}
	}
}

// see records an observation; a key seen twice in one run is a harness mistake.
func (s *scenario) see(key, value string) {
	s.t.Helper()
	if _, dup := s.obs[key]; dup {
		s.t.Fatalf("observation %q recorded twice", key)
	}
	s.obs[key] = value
}

// controlLimit marks what the control cannot show because etcd 3.4.23 lacks it (the comparison
// skips it); etcd-effect records the same step under its plain key.
const controlLimit = "etcd 3.4.23 cannot: "

// seeLimit records a step the control cannot do, with what it answered.
func (s *scenario) seeLimit(key, value string) {
	s.t.Helper()
	s.t.Logf("%s%s: %s", controlLimit, key, value)
	s.see(controlLimit+key, value)
}

// words is the sorted, space-joined set of the fields of `out`.
func words(out string) string {
	f := strings.Fields(out)
	sort.Strings(f)
	return strings.Join(f, " ")
}

func (s *scenario) must(args ...string) string {
	s.t.Helper()
	return s.kc.Must(s.t, args...)
}

func (s *scenario) mustf(format string, args ...any) string {
	s.t.Helper()
	return s.must(strings.Fields(fmt.Sprintf(format, args...))...)
}
