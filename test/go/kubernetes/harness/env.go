// Package harness starts the processes the Kubernetes oracle tests run against: etcd-effect's
// server or etcd 3.4 (the control), kube-apiserver and kube-controller-manager, each on free
// loopback ports, each stopped when its test ends. Standard library only, so that the benchmark
// and every test package can use it.
//
// Paths come from the environment that run.sh sets (each has a default for a run by hand):
//
//	ETCD_EFFECT_MAIN         the built program (default: <repository>/dist/cli/main.js)
//	ETCD_BIN                 etcd 3.4 (default: etcd on PATH)
//	KUBE_APISERVER           kube-apiserver built by build.sh (no default: tests needing it skip)
//	KUBE_CONTROLLER_MANAGER  kube-controller-manager built by build.sh (likewise)
//	KUBECTL                  kubectl (default: kubectl on PATH)
//	STORES                   the stores to run against, comma-separated (default "etcd,etcd-effect")
//	REQUIRE_KUBE=1           a missing program fails the test instead of skipping it
package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// StoreKind names a store: ours or the control.
type StoreKind string

const (
	// EtcdEffect is `etcd-effect serve`, the server under test.
	EtcdEffect StoreKind = "etcd-effect"
	// Etcd is Debian's etcd 3.4, the control.
	Etcd StoreKind = "etcd"
)

// Stores lists the stores of $STORES, in its order (default: the control first).
func Stores() []StoreKind {
	raw := os.Getenv("STORES")
	if raw == "" {
		raw = "etcd,etcd-effect"
	}
	var out []StoreKind
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, StoreKind(s))
		}
	}
	return out
}

// RepoRoot is the repository this module sits in (four levels up from harness/).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
}

// missing skips the test, or fails it under REQUIRE_KUBE=1, naming what is missing.
func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("REQUIRE_KUBE") == "1" {
		t.Fatalf("%s (REQUIRE_KUBE=1)", what)
	}
	t.Skipf("skipped: %s", what)
}

// programPath returns $env, or `fallback` looked up on PATH; skips (or fails) when neither exists.
func programPath(t testing.TB, env, fallback string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			missing(t, env+"="+p+" does not exist")
		}
		return p
	}
	if fallback == "" {
		missing(t, env+" is not set (test/go/kubernetes/run.sh sets it after build.sh)")
	}
	p, err := exec.LookPath(fallback)
	if err != nil {
		missing(t, fallback+" is not on PATH and "+env+" is not set")
	}
	return p
}

// EtcdEffectMain is the built etcd-effect program (dist/cli/main.js).
func EtcdEffectMain(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ETCD_EFFECT_MAIN"); p != "" {
		return programPath(t, "ETCD_EFFECT_MAIN", "")
	}
	p := filepath.Join(RepoRoot(), "dist", "cli", "main.js")
	if _, err := os.Stat(p); err != nil {
		missing(t, p+" does not exist: run `npm run build` first")
	}
	return p
}

// EtcdBin is etcd 3.4.
func EtcdBin(t testing.TB) string { t.Helper(); return programPath(t, "ETCD_BIN", "etcd") }

// KubeAPIServerBin is the kube-apiserver build.sh built.
func KubeAPIServerBin(t testing.TB) string {
	t.Helper()
	return programPath(t, "KUBE_APISERVER", "")
}

// KubeControllerManagerBin is the kube-controller-manager build.sh built.
func KubeControllerManagerBin(t testing.TB) string {
	t.Helper()
	return programPath(t, "KUBE_CONTROLLER_MANAGER", "")
}

// KubectlBin is kubectl.
func KubectlBin(t testing.TB) string { t.Helper(); return programPath(t, "KUBECTL", "kubectl") }

// cleanEnv is this process's environment without ETCD_* variables (both stores read flags from
// them) nor KUBECONFIG.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ETCD_") || strings.HasPrefix(kv, "KUBECONFIG=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
