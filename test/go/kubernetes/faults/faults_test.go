package faults

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"etcd-effect.test/kubernetes/harness"
)

const ns = "load"

func eachStore(t *testing.T, run func(*testing.T, harness.StoreKind)) {
	for _, kind := range harness.Stores() {
		t.Run(string(kind), func(t *testing.T) { run(t, kind) })
	}
}

// waitReady waits for the apiserver's /readyz, and requires it to be the same process.
func waitReady(t *testing.T, api *harness.APIServer, timeout time.Duration) {
	t.Helper()
	api.Process().WaitFor(t, timeout, "/readyz again", func() error {
		code, body, err := api.Get("/readyz")
		if err == nil && code != 200 {
			err = &readyzError{code, body}
		}
		return err
	})
}

// waitUnready waits until the apiserver's /readyz/etcd reports the store unreachable.
func waitUnready(t *testing.T, api *harness.APIServer, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if code, _, err := api.Get("/readyz/etcd"); err == nil && code != 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz/etcd still passes %v after the store was killed", timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type readyzError struct {
	code int
	body string
}

func (e *readyzError) Error() string { return strconv.Itoa(e.code) + " " + e.body }

// cacheMatchesConsistentList waits until a list from the apiserver's watch cache
// (resourceVersion=0) shows what a consistent list shows.
func cacheMatchesConsistentList(t *testing.T, api *harness.APIServer, timeout time.Duration) {
	t.Helper()
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	deadline := time.Now().Add(timeout)
	for {
		cached, err1 := api.List(path + "?resourceVersion=0")
		fresh, err2 := api.List(path)
		if err1 == nil && err2 == nil && names(cached) == names(fresh) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch cache's list differs from a consistent one after %v (%v %v)", timeout, err1, err2)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func names(l harness.ObjectList) string {
	var b strings.Builder
	for _, it := range l.Items {
		b.WriteString(it.Metadata.Name + "@" + it.Metadata.ResourceVersion + " ")
	}
	return b.String()
}

// TestStoreKilled: the store is SIGKILLed under a write load and restarted on its data dir. The
// apiserver (not restarted) is ready again, no acknowledged write is lost, and a watching client
// (re-watching or re-listing as client-go does) ends up with what a consistent list shows.
func TestStoreKilled(t *testing.T) {
	eachStore(t, func(t *testing.T, kind harness.StoreKind) {
		store := harness.StartStore(t, kind, harness.StoreOptions{})
		api := harness.StartAPIServer(t, store, harness.APIServerOptions{})
		harness.NewKubectl(t, api).Must(t, "create", "namespace", ns)
		watching := newMirror(api, ns)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go watching.run(ctx)

		writes := startLoad(t, api, ns, 4, 0, 64)
		writes.waitAcked(t, 200, time.Minute)
		store.Kill()
		killedAt, _ := writes.counts()
		waitUnready(t, api, 30*time.Second)
		store.Restart(t)
		waitReady(t, api, 2*time.Minute)
		writes.waitAcked(t, killedAt+200, time.Minute)
		writes.finish()

		writes.checkNoneLost(t, api, ns)
		watching.waitConsistent(t, time.Minute)
		cacheMatchesConsistentList(t, api, time.Minute)
	})
}

// TestStalledWatchers: a second apiserver stops reading its watches on the store (SIGSTOP) while
// the first writes through it, then resumes. Without compaction the store must hold on to the
// stalled watches and catch them up (the second apiserver does not need to re-list); with the
// first apiserver's compactor running every 5 s the stalled watches fall behind a compaction, are
// cancelled with its revision, and the second apiserver re-lists. Either way the second
// apiserver's cache and a client watching it end up with what a consistent list shows. The store's
// own gauge of slow watchers says when the stalled watches have fallen behind.
func TestStalledWatchers(t *testing.T) {
	for _, compaction := range []bool{false, true} {
		name := "without compaction"
		if compaction {
			name = "with compaction"
		}
		t.Run(name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, kind harness.StoreKind) { stalledWatchers(t, kind, compaction) })
		})
	}
}

func stalledWatchers(t *testing.T, kind harness.StoreKind, compaction bool) {
	store := harness.StartStore(t, kind, harness.StoreOptions{})
	interval := "0"
	if compaction {
		interval = "5s"
	}
	writer := harness.StartAPIServer(t, store, harness.APIServerOptions{CompactionInterval: interval})
	stalled := harness.StartAPIServer(t, store, harness.APIServerOptions{CompactionInterval: "0"})
	harness.NewKubectl(t, writer).Must(t, "create", "namespace", ns)
	harness.NewKubectl(t, stalled).Eventually(t, 30*time.Second, "the namespace", func(string) bool { return true }, "get", "namespace", ns)
	watching := newMirror(stalled, ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watching.run(ctx)
	cacheInits := func() float64 {
		return stalled.Metrics(t).Sum("apiserver_watch_cache_initializations_total", map[string]string{"resource": "configmaps"})
	}
	initsBefore := cacheInits()

	writes := startLoad(t, writer, ns, 2, 0, 64<<10)
	writes.waitAcked(t, 50, time.Minute)
	stalled.Process().Signal(syscall.SIGSTOP)
	stoppedAt := revision(t, store)
	// the writes fill the sockets and HTTP/2 windows to the stalled apiserver, then the store's
	// own buffer: from then on the store counts its watches as slow (unsynced or victims)
	lagging := waitSlowWatchers(t, store, 3*time.Minute)
	if compaction {
		waitCompacted(t, store, lagging+1, 2*time.Minute)
	} else {
		time.Sleep(5 * time.Second)
	}
	writes.finish()
	stalled.Process().Signal(syscall.SIGCONT)

	waitReady(t, stalled, time.Minute)
	writes.checkNoneLost(t, writer, ns)
	cacheMatchesConsistentList(t, stalled, 2*time.Minute)
	watching.waitConsistent(t, 2*time.Minute)
	relists := cacheInits() - initsBefore
	acked, _ := writes.counts()
	t.Logf("%s: %d writes of 64 KiB; stalled at revision %d, its watches slow from %d; the stalled apiserver's configmaps cache re-listed %g times",
		kind, acked, stoppedAt, lagging, relists)
	if !compaction && relists != 0 {
		t.Errorf("the stalled apiserver re-listed configmaps %g times: its watch was dropped though nothing was compacted", relists)
	}
	if compaction && relists == 0 {
		t.Errorf("the stalled apiserver never re-listed although its watch fell behind a compaction")
	}
}

// revision is the store's current revision.
func revision(t *testing.T, store *harness.Store) int64 {
	t.Helper()
	c := etcdClient(t, store)
	resp, err := c.Get(context.Background(), "compact_rev_key")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// waitSlowWatchers waits until the store reports slow watchers (etcd_debugging_mvcc_slow_watcher_total,
// etcd's gauge of unsynced watchers and victims) and returns its revision at that moment.
func waitSlowWatchers(t *testing.T, store *harness.Store, timeout time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if store.Metrics(t).Sum("etcd_debugging_mvcc_slow_watcher_total", nil) > 0 {
			return revision(t, store)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slow watcher on the store within %v of the apiserver's stop", timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitCompacted waits until the apiserver's compactor has compacted at `rev` or later: it records
// each compaction's revision in compact_rev_key before compacting.
func waitCompacted(t *testing.T, store *harness.Store, rev int64, timeout time.Duration) {
	t.Helper()
	c := etcdClient(t, store)
	deadline := time.Now().Add(timeout)
	for {
		resp, err := c.Get(context.Background(), "compact_rev_key")
		if err == nil && len(resp.Kvs) == 1 {
			if at, _ := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); at >= rev {
				// the Compact call follows the key's update; give it a moment to land
				time.Sleep(time.Second)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction at %d or later within %v", rev, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func etcdClient(t *testing.T, store *harness.Store) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{store.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
