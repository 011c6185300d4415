package harness

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StoreOptions configure a store.
type StoreOptions struct {
	// ProgressNotifyInterval is --experimental-watch-progress-notify-interval ("" = the default, 10m).
	ProgressNotifyInterval string
	// TLS serves clients over mutual TLS (a fresh CA; Store.TLS holds the files).
	TLS bool
	// ExtraArgs go after the harness's own flags.
	ExtraArgs []string
}

// Store is one etcd-compatible server: etcd-effect's or etcd 3.4, one member on loopback.
type Store struct {
	Kind    StoreKind
	DataDir string
	port    int
	peer    int // etcd only
	opts    StoreOptions
	dir     string
	// TLS is the PKI of a TLS store (nil: plain HTTP/2).
	TLS    *TLSFiles
	proc   *Process
	starts int
}

// StartStore starts a store of `kind` with a fresh data dir under t.TempDir(); the test stops it.
func StartStore(t testing.TB, kind StoreKind, opts StoreOptions) *Store {
	t.Helper()
	dir := t.TempDir()
	s := &Store{Kind: kind, DataDir: dir + "/data", port: FreePort(t), opts: opts, dir: dir}
	if kind == Etcd {
		s.peer = FreePort(t)
	}
	if opts.TLS {
		s.TLS = writeTLSFiles(t, dir)
	}
	s.start(t)
	t.Cleanup(func() { s.Stop() })
	return s
}

// Endpoint is the client URL, http://127.0.0.1:port (https:// with TLS).
func (s *Store) Endpoint() string {
	if s.TLS != nil {
		return fmt.Sprintf("https://127.0.0.1:%d", s.port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", s.port)
}

// tlsArgs are the flags, the same for both servers, of a TLS store requiring client certificates.
func (s *Store) tlsArgs() []string {
	if s.TLS == nil {
		return nil
	}
	return []string{"--cert-file", s.TLS.ServerCert, "--key-file", s.TLS.ServerKey,
		"--trusted-ca-file", s.TLS.CA, "--client-cert-auth"}
}

// Process is the running server process.
func (s *Store) Process() *Process { return s.proc }

func (s *Store) args(t testing.TB) (string, []string) {
	var bin string
	var args []string
	switch s.Kind {
	case EtcdEffect:
		bin = "node"
		args = []string{EtcdEffectMain(t), "serve", "--name", "default", "--data-dir", s.DataDir,
			"--listen-client-urls", s.Endpoint(), "--log-level", "warn"}
	case Etcd:
		bin = EtcdBin(t)
		peer := fmt.Sprintf("http://127.0.0.1:%d", s.peer)
		args = []string{"--name", "default", "--data-dir", s.DataDir,
			"--listen-client-urls", s.Endpoint(), "--advertise-client-urls", s.Endpoint(),
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "default=" + peer, "--log-level", "error"}
	default:
		t.Fatalf("unknown store %q (STORES takes etcd and etcd-effect)", s.Kind)
	}
	args = append(args, s.tlsArgs()...)
	if s.opts.ProgressNotifyInterval != "" {
		args = append(args, "--experimental-watch-progress-notify-interval", s.opts.ProgressNotifyInterval)
	}
	return bin, append(args, s.opts.ExtraArgs...)
}

func (s *Store) start(t testing.TB) {
	t.Helper()
	bin, args := s.args(t)
	s.starts++
	s.proc = Spawn(t, s.dir, string(s.Kind)+"-"+strconv.Itoa(s.starts), bin, args, nil)
	s.proc.WaitFor(t, 60*time.Second, "a healthy /health", s.healthy)
}

// get GETs a path of the client URL (both servers serve /health and /metrics there).
func (s *Store) get(path string) (int, string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	if s.TLS != nil {
		cfg, err := s.TLS.ClientConfig()
		if err != nil {
			return 0, "", err
		}
		c.Transport = &http.Transport{TLSClientConfig: cfg}
	}
	resp, err := c.Get(s.Endpoint() + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func (s *Store) healthy() error {
	code, body, err := s.get("/health")
	if err != nil {
		return err
	}
	if code != 200 || !strings.Contains(body, `"true"`) {
		return fmt.Errorf("/health: %d %s", code, body)
	}
	return nil
}

// Metrics scrapes the store's /metrics.
func (s *Store) Metrics(t testing.TB) Metrics {
	t.Helper()
	code, body, err := s.get("/metrics")
	if err != nil || code != 200 {
		t.Fatalf("%s /metrics: %d %v", s.Kind, code, err)
	}
	return ParseMetrics(body)
}

// Kill ends the server with SIGKILL (no graceful stop, no flush beyond what it acknowledged).
func (s *Store) Kill() { s.proc.Kill() }

// Restart starts the server again on the same port and data dir, after Kill or Stop.
func (s *Store) Restart(t testing.TB) {
	t.Helper()
	if ended, _ := s.proc.Exited(); !ended {
		t.Fatalf("%s: Restart while it runs", s.Kind)
	}
	s.start(t)
}

// Stop stops the server gracefully (SIGTERM, then SIGKILL after 10 s).
func (s *Store) Stop() {
	if s.proc != nil {
		s.proc.Stop(10 * time.Second)
	}
}
