// Package faults runs kube-apiserver over a store (etcd-effect, and etcd 3.4 as the control) while
// a write load runs, and breaks things: the store is SIGKILLed and restarted, the apiserver's
// compactor compacts while another apiserver's watches lag behind, and an apiserver stops reading
// its watches altogether. The apiserver must recover on its own, lose no acknowledged write, and its
// watchers must end up with what a consistent list shows.
package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"etcd-effect.test/kubernetes/harness"
)

// load creates ConfigMaps (a value of `size` bytes each) through one apiserver from `workers`
// goroutines until stopped, and records each one the apiserver acknowledged (201) with its
// resourceVersion.
type load struct {
	mu     sync.Mutex
	acked  map[string]string
	failed int
	stop   context.CancelFunc
	done   sync.WaitGroup
}

func startLoad(t *testing.T, api *harness.APIServer, ns string, workers int, pause time.Duration, size int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{acked: map[string]string{}, stop: cancel}
	value := strings.Repeat("v", size)
	for w := 0; w < workers; w++ {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("load-%d-%05d", w, i)
				callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
				code, rv, err := api.CreateConfigMap(callCtx, ns, name, value)
				callCancel()
				l.mu.Lock()
				if err == nil && code == 201 {
					l.acked[name] = rv
				} else if ctx.Err() == nil {
					l.failed++
				}
				l.mu.Unlock()
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		}()
	}
	t.Cleanup(l.finish)
	return l
}

// finish stops the load and waits for the workers.
func (l *load) finish() { l.stop(); l.done.Wait() }

// counts is how many writes were acknowledged and how many failed so far.
func (l *load) counts() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked), l.failed
}

// waitAcked waits until at least n writes have been acknowledged.
func (l *load) waitAcked(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if acked, _ := l.counts(); acked >= n {
			return
		}
		if time.Now().After(deadline) {
			acked, failed := l.counts()
			t.Fatalf("only %d writes acknowledged (%d failed) in %v", acked, failed, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkNoneLost requires every acknowledged object in a consistent list, at the revision the
// apiserver acknowledged it with.
func (l *load) checkNoneLost(t *testing.T, api *harness.APIServer, ns string) {
	t.Helper()
	list, err := api.List("/api/v1/namespaces/" + ns + "/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	for _, it := range list.Items {
		stored[it.Metadata.Name] = it.Metadata.ResourceVersion
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lost := 0
	for name, rv := range l.acked {
		if got, ok := stored[name]; !ok || got != rv {
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged %s@%s, stored %q", name, rv, got)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost", lost, len(l.acked))
	}
	t.Logf("%d acknowledged writes all stored (%d failed during the fault)", len(l.acked), l.failed)
}
