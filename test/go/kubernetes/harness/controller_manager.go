package harness

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// ControllerManager is a kube-controller-manager process beside an APIServer.
type ControllerManager struct {
	proc *Process
}

// ControllerManagerFlags are the flags kube-controller-manager needs beside `api` (leader election
// on, so it keeps a Lease in kube-system; its own serving port on loopback).
func ControllerManagerFlags(api *APIServer, port int) []string {
	return []string{
		"--kubeconfig=" + api.Kubeconfig,
		"--authentication-kubeconfig=" + api.Kubeconfig,
		"--authorization-kubeconfig=" + api.Kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=true",
		"--service-account-private-key-file=" + api.SAKey,
		"--root-ca-file=" + filepath.Join(api.CertDir, "apiserver.crt"),
		"--use-service-account-credentials=false",
		"--cluster-cidr=10.244.0.0/16",
		"--service-cluster-ip-range=10.96.0.0/16",
	}
}

// StartControllerManager starts kube-controller-manager against `api` and waits for /healthz.
func StartControllerManager(t testing.TB, api *APIServer) *ControllerManager {
	t.Helper()
	bin := KubeControllerManagerBin(t)
	dir := t.TempDir()
	port := FreePort(t)
	args := append(ControllerManagerFlags(api, port), "--v=1")
	c := &ControllerManager{proc: Spawn(t, dir, "kube-controller-manager", bin, args, nil)}
	t.Cleanup(func() { c.proc.Stop(20 * time.Second) })
	client := http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	c.proc.WaitFor(t, 90*time.Second, "/healthz", func() error {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("/healthz %d", resp.StatusCode)
		}
		return nil
	})
	return c
}

// Process is the kube-controller-manager process.
func (c *ControllerManager) Process() *Process { return c.proc }
