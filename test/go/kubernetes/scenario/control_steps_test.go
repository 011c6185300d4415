package scenario

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"etcd-effect.test/kubernetes/harness"
)

// cascadingDeletion: the garbage collector follows ownerReferences — background (the owner goes
// at once, its dependents after), foreground (the owner waits, with its finalizer, for its
// dependents) and orphan (the dependents stay, their ownerReferences removed).
func (s *scenario) cascadingDeletion() {
	s.must("delete", "deployment", "web", "-n", ns)
	s.kc.Eventually(s.t, 90*time.Second, "web's replicasets and pods gone", func(out string) bool { return count(out) == 0 },
		"get", "rs,pods", "-n", ns, "-l", "app=web", "-o", "name")
	s.see("background cascade leaves", "nothing")

	s.must("create", "deployment", "fg", "-n", ns, "--image=registry.k8s.io/pause:3.10", "--replicas=2")
	s.waitPods("fg", 2)
	s.must("delete", "deployment", "fg", "-n", ns, "--cascade=foreground", "--timeout=90s")
	s.see("foreground cascade leaves", fmt.Sprint(count(s.pods("fg")), " pods"))
	if n := count(s.pods("fg")); n != 0 {
		s.t.Errorf("foreground deletion left %d pods", n)
	}

	s.must("create", "deployment", "orph", "-n", ns, "--image=registry.k8s.io/pause:3.10", "--replicas=1")
	s.waitPods("orph", 1)
	s.must("delete", "deployment", "orph", "-n", ns, "--cascade=orphan")
	s.kc.Eventually(s.t, 60*time.Second, "orph's replicaset orphaned", func(out string) bool { return out == "" },
		"get", "rs", "-n", ns, "-l", "app=orph", "-o", "jsonpath={.items[*].metadata.ownerReferences}")
	s.see("orphan cascade keeps", fmt.Sprintf("%d replicasets, %d pods",
		count(s.must("get", "rs", "-n", ns, "-l", "app=orph", "-o", "name")), count(s.pods("orph"))))
	s.must("delete", "rs", "-n", ns, "-l", "app=orph")
	s.waitPods("orph", 0)
}

// leases: the controller-manager's leader lease is renewed, the apiserver keeps its identity
// lease, and a Lease written through kubectl reads back.
func (s *scenario) leases() {
	renew := func() string {
		return s.must("get", "lease", "kube-controller-manager", "-n", "kube-system", "-o", "jsonpath={.spec.renewTime}")
	}
	first := renew()
	s.kc.Eventually(s.t, 30*time.Second, "the controller-manager's lease renewed", func(out string) bool { return out != first },
		"get", "lease", "kube-controller-manager", "-n", "kube-system", "-o", "jsonpath={.spec.renewTime}")
	s.see("controller-manager lease renewed", "true")
	s.see("apiserver identity leases", fmt.Sprint(count(s.must("get", "leases", "-n", "kube-system",
		"-l", "apiserver.kubernetes.io/identity=kube-apiserver", "-o", "name"))))
	lease := func(holder string) string {
		return fmt.Sprintf("apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: scenario-lease, namespace: %s}\nspec: {holderIdentity: %s, leaseDurationSeconds: 15}\n", ns, holder)
	}
	s.kc.Apply(s.t, lease("a"))
	s.kc.Apply(s.t, lease("b"))
	s.see("own lease holder", s.must("get", "lease", "scenario-lease", "-n", ns, "-o", "jsonpath={.spec.holderIdentity}"))
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// watchCacheMetrics: lists are served by the watch cache, consistent ones included — which needs
// the store to answer the apiserver's RequestProgress (its version ≥ 3.4.31 or 3.5.13 makes the
// apiserver ask). etcd 3.4.23 is below that, so there the apiserver reads consistent lists
// from etcd instead: logged, not compared.
func (s *scenario) watchCacheMetrics() {
	for i := 0; i < 5; i++ {
		s.must("get", "configmaps", "-n", ns)
		s.must("get", "--raw", "/api/v1/configmaps?limit=500")
	}
	m := s.api.Metrics(s.t)
	cm := map[string]string{"resource": "configmaps"}
	consistent := func(success, fallback string) float64 {
		return m.Sum("apiserver_watch_cache_consistent_read_total",
			map[string]string{"resource": "configmaps", "success": success, "fallback": fallback})
	}
	fromCache := m.Sum("apiserver_storage_list_total", map[string]string{"resource": "configmaps", "storage": "watchcache"})
	s.t.Logf("%s: consistent reads from cache %g, fell back to etcd %g, failed %g; cache lists %g; read wait %g",
		s.store.Kind, consistent("true", "false"), consistent("true", "true"), consistent("false", "")+consistent("false", "true")+consistent("false", "false"),
		fromCache, m.Sum("apiserver_watch_cache_read_wait_seconds_count", cm))
	var failing []string
	for _, sample := range m {
		if sample.Name == "etcd_request_errors_total" && sample.Value > 0 {
			failing = append(failing, sample.Labels["operation"]+" "+sample.Labels["resource"])
		}
	}
	sort.Strings(failing)
	s.see("etcd requests that failed", strings.Join(failing, ", "))
	s.see("storage size reported", fmt.Sprint(m.Sum("apiserver_storage_size_bytes", nil) > 0))
	// what the store answered the apiserver and the controller-manager with, other than OK
	called, refused := map[string]bool{}, []string{}
	for _, sample := range s.store.Metrics(s.t) {
		if sample.Name != "grpc_server_handled_total" || sample.Value == 0 {
			continue
		}
		method := sample.Labels["grpc_service"] + "/" + sample.Labels["grpc_method"]
		called[method] = true
		if sample.Labels["grpc_code"] != "OK" {
			refused = append(refused, method+" "+sample.Labels["grpc_code"])
		}
	}
	sort.Strings(refused)
	s.see("store calls answered with an error code", strings.Join(refused, ", "))
	s.see("store methods called", words(strings.Join(keys(called), " ")))
	if s.store.Kind != harness.EtcdEffect {
		return
	}
	if consistent("true", "false") < 10 || consistent("true", "true") != 0 {
		s.t.Errorf("consistent lists of configmaps not served from the watch cache:\n%s",
			m.Describe("apiserver_watch_cache_consistent_read_total"))
	}
	// the progress notifications the apiserver asked for (RequestWatchProgress) and got
	if bookmarks := m.Sum("etcd_bookmark_total", cm); bookmarks == 0 {
		s.t.Errorf("no progress notification (etcd_bookmark_total) received for configmaps")
	}
	if fromCache < 10 {
		s.t.Errorf("apiserver_storage_list_total of configmaps from the watch cache: %g", fromCache)
	}
	if log := s.api.Process().LogTail(2000); strings.Contains(log, "Too large resource version") {
		s.t.Errorf("the apiserver waited for a revision its cache never saw:\n%s", log)
	}
}
