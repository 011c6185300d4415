package scenario

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcd-effect.test/kubernetes/harness"
)

const ns = "scenario"

// etcdClient is a client of the store itself, for looking at what the apiserver wrote.
func etcdClient(t testing.TB, store *harness.Store) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{Endpoints: []string{store.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if store.TLS != nil {
		tlsConfig, err := store.TLS.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = tlsConfig
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readyz: the apiserver's etcd checks pass, in /readyz, /livez and on their own.
func (s *scenario) readyz() {
	for _, path := range []string{"/readyz?verbose", "/livez?verbose"} {
		code, body, err := s.api.Get(path)
		if err != nil || code != 200 {
			s.t.Fatalf("%s: %d %v\n%s", path, code, err, body)
		}
		var etcdChecks []string
		for _, line := range strings.Split(body, "\n") {
			if strings.Contains(line, "etcd") {
				etcdChecks = append(etcdChecks, line)
			}
		}
		if len(etcdChecks) == 0 {
			s.t.Fatalf("%s lists no etcd check:\n%s", path, body)
		}
		s.see(path+" etcd checks", strings.Join(etcdChecks, "; "))
	}
	for _, path := range []string{"/readyz/etcd", "/readyz/etcd-readiness", "/livez/etcd"} {
		code, body, err := s.api.Get(path)
		if err != nil {
			s.t.Fatal(err)
		}
		s.see(path, fmt.Sprintf("%d %s", code, strings.TrimSpace(body)))
	}
}

// namespaces: one is created and stays Active; another, holding objects, is deleted and the
// controller-manager's namespace controller empties it until it is gone.
func (s *scenario) namespaces() {
	s.must("create", "namespace", ns)
	s.see("namespace phase", s.must("get", "namespace", ns, "-o", "jsonpath={.status.phase}"))
	s.must("create", "namespace", "doomed")
	s.must("create", "configmap", "leftover", "-n", "doomed", "--from-literal=a=b")
	s.must("create", "secret", "generic", "leftover", "-n", "doomed", "--from-literal=a=b")
	s.must("delete", "namespace", "doomed", "--timeout=90s")
	_, err := s.kc.Run("get", "namespace", "doomed")
	s.see("deleted namespace", errorKind(err))
	etcd := etcdClient(s.t, s.store)
	resp, err := etcd.Get(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		s.t.Fatal(err)
	}
	var left []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/doomed/") || strings.HasSuffix(string(kv.Key), "/doomed") {
			left = append(left, string(kv.Key))
		}
	}
	if len(left) > 0 {
		s.t.Errorf("keys of the deleted namespace remain: %v", left)
	}
	s.see("keys left of the deleted namespace", fmt.Sprint(len(left)))
}

// errorKind reduces a kubectl failure to what both stores must agree on.
func errorKind(err error) string {
	switch {
	case err == nil:
		return "found"
	case strings.Contains(err.Error(), "NotFound") || strings.Contains(err.Error(), "not found"):
		return "NotFound"
	default:
		return err.Error()
	}
}

// configMaps: `kubectl get -w` sees every create, update and delete, once, in order.
func (s *scenario) configMaps() {
	w := s.kc.Start(s.t, "get", "configmaps", "-n", ns, "-w", "--output-watch-events",
		"-o", `jsonpath={.type} {.object.metadata.name} {.object.data.v}{"\n"}`)
	// kube-root-ca.crt, which the controller-manager puts in every namespace, is listed first
	w.WaitLines(s.t, 30*time.Second, "kubectl get -w's initial list", func(l []string) bool { return len(l) > 0 })
	for i := 0; i < 20; i++ {
		s.mustf("create configmap cm-%02d -n %s --from-literal=v=0", i, ns)
	}
	s.must("patch", "configmap", "cm-03", "-n", ns, "-p", `{"data":{"v":"1"}}`)
	s.must("delete", "configmap", "cm-04", "-n", ns)
	var want []string
	for i := 0; i < 20; i++ {
		want = append(want, fmt.Sprintf("ADDED cm-%02d 0", i))
	}
	want = append(want, "MODIFIED cm-03 1", "DELETED cm-04 0")
	got := w.WaitLines(s.t, 30*time.Second, "kubectl get -w's events", func(l []string) bool {
		return len(onlyPrefixed(l, "cm-")) >= len(want)
	})
	w.Stop()
	events := onlyPrefixed(got, "cm-")
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		s.t.Fatalf("kubectl get -w printed\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	s.see("kubectl get -w", strings.Join(events, "; "))
	s.see("configmaps", words(s.must("get", "configmaps", "-n", ns, "-o", "name")))
}

// onlyPrefixed keeps the lines about objects named `prefix`…
func onlyPrefixed(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[1], prefix) {
			out = append(out, l)
		}
	}
	return out
}

// secrets: written as the apiserver's protobuf envelope, read back intact.
func (s *scenario) secrets() {
	s.must("create", "secret", "generic", "s1", "-n", ns, "--from-literal=password=hunter2")
	data := s.must("get", "secret", "s1", "-n", ns, "-o", "jsonpath={.data.password}")
	plain, err := base64.StdEncoding.DecodeString(data)
	if err != nil || string(plain) != "hunter2" {
		s.t.Fatalf("secret reads back %q (%v)", plain, err)
	}
	s.see("secret value", string(plain))
	resp, err := etcdClient(s.t, s.store).Get(context.Background(), "/registry/secrets/"+ns+"/s1")
	if err != nil || len(resp.Kvs) != 1 {
		s.t.Fatalf("raw secret: %v %v", resp, err)
	}
	stored := resp.Kvs[0].Value
	s.see("stored secret envelope", fmt.Sprintf("%q", stored[:min(4, len(stored))]))
	s.must("delete", "secret", "s1", "-n", ns)
	_, err = s.kc.Run("get", "secret", "s1", "-n", ns)
	s.see("deleted secret", errorKind(err))
}
