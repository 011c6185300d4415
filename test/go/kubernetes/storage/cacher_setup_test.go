package storage

import (
	"context"
	"sync"
	"testing"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"etcd-effect.test/kubernetes/harness"
)

// The cacher's tests store protobuf under /registry behind the identity transformer, as upstream's
// cacher_test.go.
type cacherSetup struct {
	clusterScoped bool
	indexed       bool // spec.nodeName and metadata.namespace indexes, as the pod registry
	codec         runtime.Codec
	transformer   value.Transformer
}

type cacherOption func(*cacherSetup)

func clusterScoped(o *cacherSetup) { o.clusterScoped = true }
func indexed(o *cacherSetup)       { o.indexed = true }

// podAttrs are a pod's labels and selectable fields (the pod registry's set).
func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod := obj.(*example.Pod)
	return labels.Set(pod.Labels), fields.Set{
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
		"spec.nodeName":      pod.Spec.NodeName,
		"spec.restartPolicy": string(pod.Spec.RestartPolicy),
		"status.phase":       string(pod.Status.Phase),
	}, nil
}

// cacherFixture is a Cacher and its CacheDelegator over an etcd3 store over a fresh server.
type cacherFixture struct {
	ctx       context.Context
	srv       *server
	etcdStore storage.Interface
	setup     cacherSetup

	mu        sync.RWMutex
	cacher    *cacher.Cacher
	delegator *cacher.CacheDelegator
}

func newCacherFixture(t *testing.T, opts ...cacherOption) *cacherFixture {
	t.Helper()
	o := cacherSetup{codec: protoCodec, transformer: identity.NewEncryptCheckTransformer()}
	for _, opt := range opts {
		opt(&o)
	}
	srv := startServer(t, harness.StoreOptions{})
	f := &cacherFixture{
		ctx:   context.Background(),
		srv:   srv,
		setup: o,
	}
	f.etcdStore = f.newEtcd3Store(t)
	f.start(t)
	t.Cleanup(f.stop)
	return f
}

func (f *cacherFixture) newEtcd3Store(t *testing.T) storage.Interface {
	return newEtcd3Store(t, f.srv, f.setup.codec, "/registry", f.setup.transformer, etcd3.NewDefaultLeaseManagerConfig())
}

// start builds a cacher over the etcd3 store, as upstream's testSetupWithEtcdServer: one injected
// list error (unless the reflector lists through a watch), then wait until the cache is ready.
func (f *cacherFixture) start(t *testing.T) {
	t.Helper()
	errs := 1
	if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		errs = 0
	}
	wrapped := &storagetesting.StorageInjectingListErrors{Interface: f.etcdStore, Errors: errs}
	keyFunc := func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) }
	if f.setup.clusterScoped {
		keyFunc = func(obj runtime.Object) (string, error) { return storage.NoNamespaceKeyFunc("/pods/", obj) }
	}
	var indexerFuncs storage.IndexerFuncs
	indexers := cache.Indexers{}
	if f.setup.indexed {
		indexerFuncs = storage.IndexerFuncs{"spec.nodeName": func(obj runtime.Object) string {
			return obj.(*example.Pod).Spec.NodeName
		}}
		indexers = cache.Indexers{
			"f:spec.nodeName":      func(obj any) ([]string, error) { return []string{obj.(*example.Pod).Spec.NodeName}, nil },
			"f:metadata.namespace": func(obj any) ([]string, error) { return []string{obj.(*example.Pod).Namespace}, nil },
		}
	}
	c, err := cacher.NewCacherFromConfig(cacher.Config{
		Storage:             wrapped,
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       podsResource,
		EventsHistoryWindow: cacher.DefaultEventFreshDuration,
		ResourcePrefix:      "/pods/",
		KeyFunc:             keyFunc,
		GetAttrsFunc:        podAttrs,
		NewFunc:             newPod,
		NewListFunc:         newPodList,
		IndexerFuncs:        indexerFuncs,
		Indexers:            &indexers,
		Codec:               f.setup.codec,
		Clock:               clock.RealClock{},
	})
	if err != nil {
		t.Fatalf("cacher: %v", err)
	}
	if err := wait.PollUntilContextTimeout(f.ctx, 100*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return wrapped.ErrorsConsumed() }); err != nil {
		t.Fatalf("injected list error not consumed: %v", err)
	}
	if err := c.Wait(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.cacher, f.delegator = c, cacher.NewCacheDelegator(c, wrapped)
	f.mu.Unlock()
}

func (f *cacherFixture) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delegator != nil {
		f.delegator.Stop()
		f.cacher.Stop()
		f.delegator, f.cacher = nil, nil
	}
}

// store is the storage.Interface under test: whichever CacheDelegator is current.
func (f *cacherFixture) store() storage.Interface { return (*currentDelegator)(f) }

// increaseRV is the server's.
func (f *cacherFixture) increaseRV() storagetesting.IncreaseRVFunc { return f.srv.increaseRV() }

// compaction compacts the server and brings the cache along, as upstream's compactStore: once
// the etcd3 store has observed the compaction, the watch cache's store is compacted at the same
// revision (Cacher.Compact; upstream calls the cacher's compactor directly, which is unexported),
// and the delegator reports it after the compactor's next poll (every 15 s).
func (f *cacherFixture) compaction() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv := f.srv.compact(ctx, t, resourceVersion)
		if !utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			return
		}
		waitCompactRevision(ctx, t, rv, "etcd3 store", f.etcdStore.CompactRevision)
		f.mu.RLock()
		c, d := f.cacher, f.delegator
		f.mu.RUnlock()
		if err := c.Compact(resourceVersion); err != nil {
			t.Fatal(err)
		}
		waitCompactRevision(ctx, t, rv, "cacher", d.CompactRevision)
	}
}

// historyCompaction is WatchFromZero's compaction for the cacher: the server is compacted and the
// watch cache no longer holds the events before it. Upstream trims the cache's unexported history
// ring in place; here the cacher is replaced by a fresh one over the same store, whose history
// starts at the current revision (the suite holds no open watch at that point, as upstream requires).
// The new cacher needs its own etcd3 store: a cacher turns on its store's size estimation, once.
func (f *cacherFixture) historyCompaction() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		f.srv.compact(ctx, t, resourceVersion)
		f.stop()
		f.etcdStore = f.newEtcd3Store(t)
		f.start(t)
	}
}

// createAndWait is upstream's createWrapper: Create, then wait until the cache serves the object.
type createAndWait struct{ storage.Interface }

func (c createAndWait) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.Interface.Create(ctx, key, obj, out, ttl); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		current := &example.Pod{}
		if err := c.Interface.Get(ctx, key, storage.GetOptions{ResourceVersion: "0"}, current); err != nil {
			if storage.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return apiequality.Semantic.DeepEqual(current, out), nil
	})
}

// currentDelegator forwards storage.Interface to the fixture's current CacheDelegator.
type currentDelegator cacherFixture

func (c *currentDelegator) get() *cacher.CacheDelegator {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.delegator
}

func (c *currentDelegator) Versioner() storage.Versioner { return c.get().Versioner() }
func (c *currentDelegator) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return c.get().Create(ctx, key, obj, out, ttl)
}
func (c *currentDelegator) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, cached runtime.Object, opts storage.DeleteOptions) error {
	return c.get().Delete(ctx, key, out, pre, validate, cached, opts)
}
func (c *currentDelegator) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return c.get().Watch(ctx, key, opts)
}
func (c *currentDelegator) Get(ctx context.Context, key string, opts storage.GetOptions, obj runtime.Object) error {
	return c.get().Get(ctx, key, opts, obj)
}
func (c *currentDelegator) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	return c.get().GetList(ctx, key, opts, list)
}
func (c *currentDelegator) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, update storage.UpdateFunc, cached runtime.Object) error {
	return c.get().GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, update, cached)
}
func (c *currentDelegator) Stats(ctx context.Context) (storage.Stats, error) {
	return c.get().Stats(ctx)
}
func (c *currentDelegator) ReadinessCheck() error { return c.get().ReadinessCheck() }
func (c *currentDelegator) RequestWatchProgress(ctx context.Context) error {
	return c.get().RequestWatchProgress(ctx)
}
func (c *currentDelegator) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	return c.get().GetCurrentResourceVersion(ctx)
}
func (c *currentDelegator) EnableResourceSizeEstimation(keys storage.KeysFunc) error {
	return c.get().EnableResourceSizeEstimation(keys)
}
func (c *currentDelegator) CompactRevision() int64 { return c.get().CompactRevision() }
