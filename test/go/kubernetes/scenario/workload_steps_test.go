package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.scenario.example.com
spec:
  group: scenario.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

func widget(name string, size int) string {
	return fmt.Sprintf("apiVersion: scenario.example.com/v1\nkind: Widget\nmetadata: {name: %s, namespace: %s}\nspec: {size: %d}\n", name, ns, size)
}

// count is the number of words kubectl printed.
func count(out string) int { return len(strings.Fields(out)) }

// customResources: a CRD becomes Established, its objects are validated, stored, listed and
// watched, and deleting the CRD deletes them.
func (s *scenario) customResources() {
	s.kc.Apply(s.t, widgetCRD)
	s.must("wait", "--for=condition=Established", "crd/widgets.scenario.example.com", "--timeout=60s")
	w := s.kc.Start(s.t, "get", "widgets", "-n", ns, "-w", "--output-watch-events",
		"-o", `jsonpath={.type} {.object.metadata.name} {.object.spec.size}{"\n"}`)
	for i := 1; i <= 3; i++ {
		s.kc.Apply(s.t, widget(fmt.Sprintf("w%d", i), i))
	}
	s.must("patch", "widget", "w2", "-n", ns, "--type=merge", "-p", `{"spec":{"size":5}}`)
	_, err := s.kc.Run("patch", "widget", "w1", "-n", ns, "--type=merge", "-p", `{"spec":{"size":"big"}}`)
	s.see("invalid widget", digits.ReplaceAllString(fmt.Sprint(err), "N"))
	s.must("delete", "widget", "w3", "-n", ns)
	lines := w.WaitLines(s.t, 30*time.Second, "widget events", func(l []string) bool { return len(l) >= 5 })
	w.Stop()
	s.see("kubectl get widgets -w", strings.Join(lines, "; "))
	s.see("widgets", words(s.must("get", "widgets", "-n", ns, "-o", "name")))
	s.see("widget w2 size", s.must("get", "widget", "w2", "-n", ns, "-o", "jsonpath={.spec.size}"))

	etcd := etcdClient(s.t, s.store)
	resp, err := etcd.Get(context.Background(), "/registry/scenario.example.com/widgets/"+ns+"/w1")
	if err != nil || len(resp.Kvs) != 1 {
		s.t.Fatalf("raw widget: %v %v", resp, err)
	}
	s.see("stored widget starts", string(resp.Kvs[0].Value[:1]))

	s.must("delete", "crd", "widgets.scenario.example.com", "--timeout=90s")
	resp, err = etcd.Get(context.Background(), "/registry/scenario.example.com/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.Count != 0 {
		s.t.Errorf("%d widget keys remain after the CRD's deletion", resp.Count)
	}
	s.see("widget keys after CRD deletion", fmt.Sprint(resp.Count))
}

// pods is the names of the pods labelled app=`app`.
func (s *scenario) pods(app string) string {
	return s.must("get", "pods", "-n", ns, "-l", "app="+app, "-o", "jsonpath={.items[*].metadata.name}")
}

func (s *scenario) waitPods(app string, n int) {
	s.t.Helper()
	s.kc.Eventually(s.t, 60*time.Second, fmt.Sprintf("%d pods of %s", n, app), func(out string) bool { return count(out) == n },
		"get", "pods", "-n", ns, "-l", "app="+app, "-o", "jsonpath={.items[*].metadata.name}")
}

// deployment: the controller-manager creates the ReplicaSet and its Pods (pending: there is no
// node), owned Deployment → ReplicaSet → Pod; scaling and a new template follow.
func (s *scenario) deployment() {
	s.must("create", "deployment", "web", "-n", ns, "--image=registry.k8s.io/pause:3.10", "--replicas=3")
	s.waitPods("web", 3)
	s.see("web replicaset owner", s.must("get", "rs", "-n", ns, "-l", "app=web", "-o",
		`jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {end}`))
	owners := s.must("get", "pods", "-n", ns, "-l", "app=web", "-o",
		`jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind} {end}`)
	s.see("web pod owners", owners)
	s.must("scale", "deployment", "web", "-n", ns, "--replicas=5")
	s.waitPods("web", 5)
	s.kc.Eventually(s.t, 60*time.Second, "status.replicas 5", func(out string) bool { return out == "5" },
		"get", "deployment", "web", "-n", ns, "-o", "jsonpath={.status.replicas}")
	s.see("web status.replicas", "5")
	s.must("set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
	s.kc.Eventually(s.t, 60*time.Second, "a second replicaset", func(out string) bool { return count(out) == 2 },
		"get", "rs", "-n", ns, "-l", "app=web", "-o", "name")
	s.see("web replicasets after a new template", "2")
}

// events: the controllers' events are stored under leases (TTL'd keys).
func (s *scenario) events() {
	reasons := s.kc.Eventually(s.t, 30*time.Second, "the controllers' events", func(out string) bool {
		return strings.Contains(out, "ScalingReplicaSet") && strings.Contains(out, "SuccessfulCreate")
	}, "get", "events", "-n", ns, "-o", "jsonpath={.items[*].reason}")
	s.see("event reasons include ScalingReplicaSet and SuccessfulCreate", fmt.Sprint(count(reasons) > 0))
	etcd := etcdClient(s.t, s.store)
	resp, err := etcd.Get(context.Background(), "/registry/events/"+ns+"/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) == 0 {
		s.t.Fatalf("raw events: %v %v", resp, err)
	}
	withLease := 0
	for _, kv := range resp.Kvs {
		if kv.Lease != 0 {
			withLease++
		}
	}
	if withLease != len(resp.Kvs) {
		s.t.Errorf("%d of %d event keys have a lease", withLease, len(resp.Kvs))
	}
	s.see("event keys all under a lease", fmt.Sprint(withLease == len(resp.Kvs)))
	ttl, err := etcd.TimeToLive(context.Background(), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil {
		s.t.Fatal(err)
	}
	// --event-ttl=30s: the lease is granted 30 s plus the apiserver's reuse margin (5% = 1 s)
	s.see("event lease granted TTL", fmt.Sprint(ttl.GrantedTTL))
	if ttl.TTL <= 0 || ttl.TTL > ttl.GrantedTTL {
		s.t.Errorf("event lease: TTL %d of %d", ttl.TTL, ttl.GrantedTTL)
	}
}

// eventExpiry: once their leases run out the events are deleted, from the store and from the
// apiserver's watch cache (it sees the store's DELETE events).
func (s *scenario) eventExpiry() {
	etcd := etcdClient(s.t, s.store)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := etcd.Get(context.Background(), "/registry/events/"+ns+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			s.t.Fatal(err)
		}
		if resp.Count == 0 {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d event keys still there 2 minutes on", resp.Count)
		}
		time.Sleep(time.Second)
	}
	s.kc.Eventually(s.t, 30*time.Second, "no events listed", func(out string) bool { return count(out) == 0 },
		"get", "events", "-n", ns, "-o", "name")
	s.see("events after their TTL", "none")
}

const blobCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: blobs.scenario.example.com
spec:
  group: scenario.example.com
  scope: Namespaced
  names: {plural: blobs, singular: blob, kind: Blob}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          data: {type: string}
`

// largeObjects: objects near and over the store's request limits — etcd refuses a request over
// --max-request-bytes (1.5 MiB) with "etcdserver: request is too large" and gRPC refuses a message
// over that plus 512 KiB; the apiserver's own limit is 3 MiB. Both stores must answer alike.
func (s *scenario) largeObjects() {
	s.kc.Apply(s.t, blobCRD)
	s.must("wait", "--for=condition=Established", "crd/blobs.scenario.example.com", "--timeout=60s")
	for _, size := range []int{1 << 20, 1600 << 10, 2200 << 10} {
		name := fmt.Sprintf("blob-%dk", size>>10)
		manifest := fmt.Sprintf("apiVersion: scenario.example.com/v1\nkind: Blob\nmetadata: {name: %s, namespace: %s}\ndata: %s\n",
			name, ns, strings.Repeat("x", size))
		_, err := s.kc.RunInput(manifest, "create", "-f", "-")
		result := "created"
		if err != nil {
			msg := err.Error()
			result = digits.ReplaceAllString(msg[strings.LastIndex(msg, "exit status"):], "N")
		}
		s.see("create "+name, result)
		if result == "created" {
			got := s.must("get", "blob", name, "-n", ns, "-o", "jsonpath={.data}")
			if len(got) != size {
				s.t.Errorf("%s reads back %d bytes", name, len(got))
			}
		}
	}
	s.must("delete", "crd", "blobs.scenario.example.com", "--timeout=90s")
}
