// Package storage runs the storage test suites k8s.io/apiserver exports (pkg/storage/testing) against
// a k8s.io/apiserver etcd3 store and a cacher over it, whose etcd client talks to one real server:
// etcd-effect's (STORE=etcd-effect) or etcd 3.4 (STORE=etcd). Each test gets a fresh server, as
// upstream's tests get a fresh embedded etcd. The wiring follows what k8s.io/apiserver's own
// pkg/storage/etcd3/store_test.go and pkg/storage/cacher/cacher_test.go do, through exported API
// only; where upstream reaches into unexported state, the replacement is said beside it.
package storage

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.uber.org/zap"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/clock"

	"etcd-effect.test/kubernetes/harness"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	// protoCodec is what the cacher's tests store with (protobuf, example/v1)
	protoCodec runtime.Codec
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	pb := protobuf.NewSerializer(scheme, scheme)
	protoCodec = codecs.CodecForVersions(pb, pb, schema.GroupVersions{examplev1.SchemeGroupVersion}, nil)
}

// storeKind is $STORE: the one server this test process runs against. One per process, because
// k8s.io/apiserver keeps process-wide state about the server (etcdfeature.DefaultFeatureSupportChecker:
// whether RequestWatchProgress is supported, which etcd 3.4.23 is not and ours is).
func storeKind(t testing.TB) harness.StoreKind {
	t.Helper()
	switch s := os.Getenv("STORE"); s {
	case "", string(harness.EtcdEffect):
		return harness.EtcdEffect
	case string(harness.Etcd):
		return harness.Etcd
	default:
		t.Fatalf("STORE=%q: etcd or etcd-effect", s)
		return ""
	}
}

// consistentReadsSupported is what the server's version makes k8s.io/apiserver decide
// (feature_support_checker.go): etcd 3.4.23 is below 3.4.31, so RequestWatchProgress is off and the
// cacher serves consistent lists from etcd; ours reports 3.5.24.
func consistentReadsSupported(t testing.TB) bool { return storeKind(t) == harness.EtcdEffect }

// server is one fresh store with a client as upstream's testserver.RunEtcd builds it: KV and the
// Kubernetes interface wrapped in the recorders the list suites count calls with.
type server struct {
	store  *harness.Store
	client *kubernetes.Client
	kv     *storagetesting.KVRecorder
	lists  *storagetesting.KubernetesRecorder
}

func startServer(t testing.TB, opts harness.StoreOptions) *server {
	t.Helper()
	store := harness.StartStore(t, storeKind(t), opts)
	client, err := kubernetes.New(clientv3.Config{
		Endpoints:   []string{store.Endpoint()},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	lists := storagetesting.NewKubernetesRecorder(client.Kubernetes)
	kv := storagetesting.NewKVRecorder(client.KV, lists)
	client.KV, client.Kubernetes = kv, lists
	return &server{store: store, client: client, kv: kv, lists: lists}
}

// increaseRV writes an unrelated key, as upstream's increaseRVFunc.
func (s *server) increaseRV() storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 {
		resp, err := s.client.KV.Put(ctx, "increaseRV", "ok")
		if err != nil {
			t.Fatalf("increaseRV: %v", err)
		}
		return resp.Header.Revision
	}
}

// compact compacts the server at `rv` the way the apiserver's compactor does (etcd3.Compact: the
// compact_rev_key transaction, then Compact), retrying once on a version conflict.
func (s *server) compact(ctx context.Context, t *testing.T, resourceVersion string) int64 {
	t.Helper()
	rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	var version int64
	version, _, _, err = etcd3.Compact(ctx, s.client.Client, version, int64(rv))
	if err != nil {
		_, _, _, err = etcd3.Compact(ctx, s.client.Client, version, int64(rv))
	}
	if err != nil {
		t.Fatalf("compact at %d: %v", rv, err)
	}
	return int64(rv)
}

// waitCompactRevision waits until `observed()` reports `rv` (the store learns of a compaction
// through its watch on compact_rev_key).
func waitCompactRevision(ctx context.Context, t *testing.T, rv int64, what string, observed func() int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for observed() != rv {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: compact revision %d not observed (has %d)", what, rv, observed())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// swapTransformer is a value.Transformer whose implementation a test may replace while the store
// runs. Upstream's tests assign the store's unexported transformer fields instead; giving the store
// this wrapper reaches the same state (the store and its watcher read through it) from outside.
type swapTransformer struct {
	mu  sync.RWMutex
	cur value.Transformer
}

func (s *swapTransformer) get() value.Transformer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cur
}

// set installs `next` and returns what restores the previous one.
func (s *swapTransformer) set(next value.Transformer) func() {
	s.mu.Lock()
	prev := s.cur
	s.cur = next
	s.mu.Unlock()
	return func() { s.mu.Lock(); s.cur = prev; s.mu.Unlock() }
}

func (s *swapTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	return s.get().TransformFromStorage(ctx, data, dataCtx)
}

func (s *swapTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	return s.get().TransformToStorage(ctx, data, dataCtx)
}

// withPrefixTransformer is storagetesting.InterfaceWithPrefixTransformer over a store whose
// transformer is a swapTransformer holding a *storagetesting.PrefixTransformer.
type withPrefixTransformer struct {
	storage.Interface
	transformer *swapTransformer
}

func (s withPrefixTransformer) UpdatePrefixTransformer(modify storagetesting.PrefixTransformerModifier) func() {
	copied := *s.transformer.get().(*storagetesting.PrefixTransformer)
	return s.transformer.set(modify(&copied))
}

// withTransformerOverride is storagetesting.InterfaceWithTransformerOverride likewise.
type withTransformerOverride struct {
	storage.Interface
	transformer *swapTransformer
}

func (s withTransformerOverride) UpdateTransformer(modify storagetesting.TransformerModifier) func() {
	return s.transformer.set(modify(s.transformer.get()))
}

// corruptObjectError is the error etcd3's corrupt-object handling produces for data the
// transformer cannot read ("bits flipped"), obtained from its exported wrapper; upstream builds the
// same unexported value directly.
func corruptObjectError() error {
	_, _, err := etcd3.WithCorruptObjErrorHandlingTransformer(failingTransformer{}).
		TransformFromStorage(context.Background(), nil, nil)
	return err
}

type failingTransformer struct{}

func (failingTransformer) TransformFromStorage(context.Context, []byte, value.Context) ([]byte, bool, error) {
	return nil, false, errors.New("bits flipped")
}

func (failingTransformer) TransformToStorage(context.Context, []byte, value.Context) ([]byte, error) {
	return nil, errors.New("bits flipped")
}

// newEtcd3Store is etcd3.New over `srv` with a compactor that never compacts on its own.
func newEtcd3Store(t testing.TB, srv *server, codec runtime.Codec, prefix string, transformer value.Transformer, lease etcd3.LeaseManagerConfig) storage.Interface {
	t.Helper()
	versioner := storage.APIObjectVersioner{}
	compactor := etcd3.NewCompactor(srv.client.Client, 0, clock.RealClock{}, nil)
	t.Cleanup(compactor.Stop)
	s, err := etcd3.New(srv.client, compactor, codec, newPod, newPodList, prefix, "/pods/",
		schema.GroupResource{Resource: "pods"}, transformer, lease,
		etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func newPod() runtime.Object     { return &example.Pod{} }
func newPodList() runtime.Object { return &example.PodList{} }

// setGate sets a feature gate for the rest of the test.
func setGate(t *testing.T, gate featuregate.Feature, on bool) {
	t.Helper()
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, gate, on)
}

// TestMain turns EtcdRangeStream off for the suites: it asks for etcd 3.7's KV.RangeStream, which
// neither etcd 3.4 nor etcd-effect serves, and after the first Unimplemented answer the store
// falls back to paged ranges for 10 minutes (process-wide), which would make the first list of
// a process count one more etcd call than the call-counting suites expect. TestRangeStreamFallback
// runs with it on.
func TestMain(m *testing.M) {
	if err := utilfeature.DefaultMutableFeatureGate.Set(string(features.EtcdRangeStream) + "=false"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
