package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kubectl runs kubectl against one APIServer.
type Kubectl struct {
	bin        string
	kubeconfig string
}

// NewKubectl is kubectl with the admin kubeconfig of `api`.
func NewKubectl(t testing.TB, api *APIServer) *Kubectl {
	t.Helper()
	return &Kubectl{bin: KubectlBin(t), kubeconfig: api.Kubeconfig}
}

func (k *Kubectl) command(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	cmd.Env = cleanEnv()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd
}

// RunInput runs kubectl with `stdin` and returns its stdout; a failure carries stderr.
func (k *Kubectl) RunInput(stdin string, args ...string) (string, error) {
	cmd := k.command(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Run runs kubectl and returns its stdout.
func (k *Kubectl) Run(args ...string) (string, error) { return k.RunInput("", args...) }

// Must runs kubectl and fails the test on error.
func (k *Kubectl) Must(t testing.TB, args ...string) string {
	t.Helper()
	out, err := k.Run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Apply pipes `manifest` to `kubectl apply -f -`.
func (k *Kubectl) Apply(t testing.TB, manifest string) string {
	t.Helper()
	out, err := k.RunInput(manifest, "apply", "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Eventually runs kubectl every 250 ms until `ok(stdout)` holds; fails after `timeout`.
func (k *Kubectl) Eventually(t testing.TB, timeout time.Duration, what string, ok func(string) bool, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var out string
	var err error
	for time.Now().Before(deadline) {
		if out, err = k.Run(args...); err == nil && ok(out) {
			return out
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v; last `kubectl %s`: %q (err %v)", what, timeout, strings.Join(args, " "), out, err)
	return ""
}

// Stream is a long-running kubectl (get -w, get --raw of a watch) whose stdout lines are kept.
type Stream struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	errb  lockedBuffer
	done  chan struct{}
}

// lockedBuffer is a bytes.Buffer kubectl writes its stderr to while the test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Start runs kubectl in the background; the test stops it.
func (k *Kubectl) Start(t testing.TB, args ...string) *Stream {
	t.Helper()
	s := &Stream{cmd: k.command("", args...), done: make(chan struct{})}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = &s.errb
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			s.mu.Unlock()
		}
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.Stop)
	return s
}

// Lines is what it printed so far.
func (s *Stream) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// WaitLines waits until `ok(lines)` holds; fails after `timeout` showing what it printed.
func (s *Stream) WaitLines(t testing.TB, timeout time.Duration, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		lines := s.Lines()
		if ok(lines) {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; printed:\n%s\nstderr: %s", what, timeout, strings.Join(lines, "\n"), s.errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Done is closed when kubectl has exited.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Stop kills kubectl (if it still runs) and waits for it.
func (s *Stream) Stop() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
