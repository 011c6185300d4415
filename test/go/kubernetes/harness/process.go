package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a loopback port nobody listens on at the moment of the call.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Process is a child process whose output goes to a log file; its test stops it at the end.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// Spawn starts `bin args...` with the cleaned environment plus `env`, logging to dir/name.log, or
// under $KUBE_PROCESS_LOGS (kept after the test) as <test>-<name>.log.
func Spawn(t testing.TB, dir, name, bin string, args []string, env []string) *Process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	if keep := os.Getenv("KUBE_PROCESS_LOGS"); keep != "" {
		must(t, os.MkdirAll(keep, 0o755))
		logPath = filepath.Join(keep, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())+"-"+name+".log")
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("%s: log: %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("%s: start %s: %v", name, bin, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited says whether the process has ended, and how.
func (p *Process) Exited() (bool, string) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, "exit 0"
		}
		return true, p.err.Error()
	default:
		return false, ""
	}
}

// Signal sends sig to the process (nothing if it has ended).
func (p *Process) Signal(sig syscall.Signal) {
	if ended, _ := p.Exited(); !ended {
		_ = p.cmd.Process.Signal(sig)
	}
}

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() {
	p.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM, waits up to `grace`, then SIGKILL.
func (p *Process) Stop(grace time.Duration) {
	p.Signal(syscall.SIGCONT) // a stopped process cannot act on SIGTERM
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// LogTail is the end of the process's log, for failure messages.
func (p *Process) LogTail(lines int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// RSSBytes is the process's resident set size (VmRSS), 0 if unknown.
func (p *Process) RSSBytes() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

// WaitFor polls `ready` every 100 ms until it returns nil, the process exits, or `timeout` passes.
func (p *Process) WaitFor(t testing.TB, timeout time.Duration, what string, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if ended, how := p.Exited(); ended {
			t.Fatalf("%s exited (%s) before %s:\n%s", p.Name, how, what, p.LogTail(30))
		}
		if last = ready(); last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: no %s within %v (last: %v):\n%s", p.Name, what, timeout, last, p.LogTail(30))
}
