package harness

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// AdminToken is the bearer token of the admin user (group system:masters) in the token file.
const AdminToken = "etcd-effect-admin-token"

// APIServerOptions configure kube-apiserver.
type APIServerOptions struct {
	// EventTTL is --event-ttl ("" = its default, 1h).
	EventTTL string
	// CompactionInterval is --etcd-compaction-interval ("" = its default, 5m).
	CompactionInterval string
	// ExtraArgs go after the harness's own flags.
	ExtraArgs []string
}

// APIServer is a kube-apiserver process over one store.
type APIServer struct {
	URL        string // https://127.0.0.1:port
	Kubeconfig string // admin kubeconfig (token, server certificate not verified)
	SAKey      string // the service-account signing key (PEM), for kube-controller-manager
	CertDir    string // where it wrote its self-signed serving certificate
	Store      *Store
	proc       *Process
	client     *http.Client
}

// APIServerFlags are the flags kube-apiserver needs on one machine with etcd (or etcd-effect) at
// `etcd`: docs/kube-apiserver.md lists the same. `dir` holds the token file, the key and certs.
func APIServerFlags(etcd string, port int, dir string) []string {
	return []string{
		"--etcd-servers=" + etcd,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--advertise-address=127.0.0.1",
		// the default reconciler refuses a loopback advertise address
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
	}
}

// writeCredentials writes the token file and the service-account key into dir.
func writeCredentials(t testing.TB, dir string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	must(t, os.WriteFile(filepath.Join(dir, "sa.key"), pemKey, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(AdminToken+",admin,admin,system:masters\n"), 0o600))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// StartAPIServer starts kube-apiserver over `store` and waits for /readyz; the test stops it.
func StartAPIServer(t testing.TB, store *Store, opts APIServerOptions) *APIServer {
	t.Helper()
	bin := KubeAPIServerBin(t)
	dir := t.TempDir()
	writeCredentials(t, dir)
	port := FreePort(t)
	args := APIServerFlags(store.Endpoint(), port, dir)
	if store.TLS != nil {
		args = append(args, "--etcd-cafile="+store.TLS.CA,
			"--etcd-certfile="+store.TLS.ClientCert, "--etcd-keyfile="+store.TLS.ClientKey)
	}
	if opts.EventTTL != "" {
		args = append(args, "--event-ttl="+opts.EventTTL)
	}
	if opts.CompactionInterval != "" {
		args = append(args, "--etcd-compaction-interval="+opts.CompactionInterval)
	}
	args = append(append(args, "--v=1"), opts.ExtraArgs...)
	a := &APIServer{
		URL:     fmt.Sprintf("https://127.0.0.1:%d", port),
		SAKey:   filepath.Join(dir, "sa.key"),
		CertDir: filepath.Join(dir, "certs"),
		Store:   store,
		client: &http.Client{Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			MaxIdleConnsPerHost: 64,
			ForceAttemptHTTP2:   true,
		}},
	}
	a.Kubeconfig = writeKubeconfig(t, dir, a.URL)
	a.proc = Spawn(t, dir, "kube-apiserver", bin, args, nil)
	t.Cleanup(func() { a.proc.Stop(20 * time.Second) })
	a.proc.WaitFor(t, 120*time.Second, "/readyz", func() error {
		code, body, err := a.Get("/readyz")
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("/readyz %d: %s", code, lastLines(body, 3))
		}
		return nil
	})
	return a
}

// Process is the kube-apiserver process.
func (a *APIServer) Process() *Process { return a.proc }

func writeKubeconfig(t testing.TB, dir, server string) string {
	t.Helper()
	path := filepath.Join(dir, "admin.kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, server, AdminToken)
	must(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// Do sends one request with the admin token and returns the status and body.
func (a *APIServer) Do(method, path, contentType string, body io.Reader) (int, string, error) {
	req, err := http.NewRequest(method, a.URL+path, body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// Get is Do("GET", path).
func (a *APIServer) Get(path string) (int, string, error) { return a.Do("GET", path, "", nil) }

// Client is the HTTP client (TLS, HTTP/2) the harness uses; requests need the admin token.
func (a *APIServer) Client() *http.Client { return a.client }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
