package storage

import (
	"context"
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apimachinery/pkg/api/apitesting"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"etcd-effect.test/kubernetes/harness"
)

// The etcd3 store's tests store with a JSON codec behind a PrefixTransformer ("test!"), as
// upstream's store_test.go.
const valuePrefix = "test!"

type etcd3Setup struct {
	codec          runtime.Codec
	transformer    value.Transformer
	lease          etcd3.LeaseManagerConfig
	progressNotify string // the server's --experimental-watch-progress-notify-interval
}

type etcd3Option func(*etcd3Setup)

func withProgressNotify(interval string) etcd3Option {
	return func(o *etcd3Setup) { o.progressNotify = interval }
}

func withStoreCodec(codec runtime.Codec) etcd3Option {
	return func(o *etcd3Setup) { o.codec = codec }
}

func withStoreTransformer(tr value.Transformer) etcd3Option {
	return func(o *etcd3Setup) { o.transformer = tr }
}

// etcd3Fixture is one etcd3 store over a fresh server.
type etcd3Fixture struct {
	ctx         context.Context
	store       storage.Interface
	srv         *server
	codec       runtime.Codec
	transformer *swapTransformer
}

func newEtcd3Fixture(t *testing.T, opts ...etcd3Option) *etcd3Fixture {
	t.Helper()
	lease := etcd3.NewDefaultLeaseManagerConfig()
	lease.ReuseDurationSeconds = 1 // as upstream: the suites wait less than a default lease reuse
	o := etcd3Setup{
		codec:       apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion),
		transformer: storagetesting.NewPrefixTransformer([]byte(valuePrefix), false),
		lease:       lease,
	}
	for _, opt := range opts {
		opt(&o)
	}
	srv := startServer(t, harness.StoreOptions{ProgressNotifyInterval: o.progressNotify})
	tr := &swapTransformer{cur: o.transformer}
	return &etcd3Fixture{
		ctx:         context.Background(),
		store:       newEtcd3Store(t, srv, o.codec, "", tr, o.lease),
		srv:         srv,
		codec:       o.codec,
		transformer: tr,
	}
}

func (f *etcd3Fixture) prefixed() withPrefixTransformer {
	return withPrefixTransformer{Interface: f.store, transformer: f.transformer}
}

func (f *etcd3Fixture) overridable(s storage.Interface) withTransformerOverride {
	return withTransformerOverride{Interface: s, transformer: f.transformer}
}

// compaction compacts and, when ListFromCacheSnapshot is on (the store then watches the compact
// key), waits for the store to observe it.
func (f *etcd3Fixture) compaction() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv := f.srv.compact(ctx, t, resourceVersion)
		if utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			waitCompactRevision(ctx, t, rv, "etcd3 store", f.store.CompactRevision)
		}
	}
}

// keyInvariants checks what the store wrote under `key`: decodable after the prefix, with neither
// resourceVersion nor selfLink stored.
func (f *etcd3Fixture) keyInvariants() storagetesting.KeyValidation {
	return func(ctx context.Context, t *testing.T, key string) {
		resp, err := f.srv.client.Client.KV.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		if len(resp.Kvs) == 0 {
			t.Fatalf("nothing stored at %s", key)
		}
		obj, err := runtime.Decode(f.codec, resp.Kvs[0].Value[len(valuePrefix):])
		if err != nil {
			t.Fatalf("stored value of %s does not decode: %v", key, err)
		}
		pod := obj.(*example.Pod)
		if pod.ResourceVersion != "" || pod.SelfLink != "" {
			t.Errorf("stored object carries resourceVersion %q / selfLink %q", pod.ResourceVersion, pod.SelfLink)
		}
	}
}

// callsValidation counts the transformer's reads and the client's range calls of a paged list:
// pages double from the requested size up to the store's maximum of 10000.
func (f *etcd3Fixture) callsValidation() storagetesting.CallsValidation {
	prefix := f.transformer.get().(*storagetesting.PrefixTransformer)
	return func(t *testing.T, pageSize, processed uint64) {
		if reads := prefix.GetReadsAndReset(); reads != processed {
			t.Errorf("transformer reads: %d, want %d", reads, processed)
		}
		want := uint64(1)
		if pageSize != 0 {
			limit := pageSize
			for sum := uint64(1); sum < processed; want++ {
				limit = min(limit*2, 10000)
				sum += limit
			}
		}
		if got := f.srv.kv.GetReadsAndReset() + f.srv.kv.GetStreamReadsAndReset(); got != want {
			t.Fatalf("range calls: %d, want %d", got, want)
		}
	}
}

// keysFunc lists the keys under /pods/ (the store's own getKeys is unexported).
func (f *etcd3Fixture) keysFunc(ctx context.Context) ([]string, error) {
	resp, err := f.srv.client.Client.KV.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys, nil
}

func TestEtcd3Store(t *testing.T) {
	plain := func(run func(context.Context, *testing.T, storage.Interface)) func(*testing.T) {
		return func(t *testing.T) { f := newEtcd3Fixture(t); run(f.ctx, t, f.store) }
	}
	t.Run("Create", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestCreate(f.ctx, t, f.store, f.keyInvariants())
	})
	t.Run("CreateWithTTL", plain(storagetesting.RunTestCreateWithTTL))
	t.Run("CreateWithKeyExist", plain(storagetesting.RunTestCreateWithKeyExist))
	t.Run("Get", plain(storagetesting.RunTestGet))
	t.Run("UnconditionalDelete", plain(storagetesting.RunTestUnconditionalDelete))
	t.Run("ConditionalDelete", plain(storagetesting.RunTestConditionalDelete))
	t.Run("DeleteWithSuggestion", plain(storagetesting.RunTestDeleteWithSuggestion))
	t.Run("DeleteWithSuggestionAndConflict", plain(storagetesting.RunTestDeleteWithSuggestionAndConflict))
	t.Run("DeleteWithSuggestionOfDeletedObject", plain(storagetesting.RunTestDeleteWithSuggestionOfDeletedObject))
	t.Run("ValidateDeletionWithSuggestion", plain(storagetesting.RunTestValidateDeletionWithSuggestion))
	t.Run("ValidateDeletionWithOnlySuggestionValid", plain(storagetesting.RunTestValidateDeletionWithOnlySuggestionValid))
	t.Run("DeleteWithConflict", plain(storagetesting.RunTestDeleteWithConflict))
	t.Run("PreconditionalDeleteWithSuggestion", plain(storagetesting.RunTestPreconditionalDeleteWithSuggestion))
	t.Run("PreconditionalDeleteWithOnlySuggestionPass", plain(storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass))
	t.Run("ListPaging", plain(storagetesting.RunTestListPaging))
	t.Run("GetListRecursivePrefix", plain(storagetesting.RunTestGetListRecursivePrefix))
	t.Run("KeySchema", plain(storagetesting.RunTestKeySchema))
	t.Run("NamespaceScopedList", plain(storagetesting.RunTestNamespaceScopedList))
	t.Run("GuaranteedUpdateWithTTL", plain(storagetesting.RunTestGuaranteedUpdateWithTTL))
	t.Run("GuaranteedUpdateWithConflict", plain(storagetesting.RunTestGuaranteedUpdateWithConflict))
	t.Run("GuaranteedUpdateWithSuggestionAndConflict", plain(storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict))

	t.Run("DeleteWithConflictAndMissingExpectedTransformOrDecodeError", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		codec := &failingCodec{Codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
		f := newEtcd3Fixture(t, withStoreCodec(codec))
		storagetesting.RunTestDeleteWithConflictAndMissingExpectedTransformOrDecodeError(f.ctx, t, f.store, codec.setFailing)
	})
	t.Run("DeleteWithConflictAndExpectedTransformError", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		tr := &failingSwitch{Transformer: storagetesting.NewPrefixTransformer([]byte(valuePrefix), false)}
		f := newEtcd3Fixture(t, withStoreTransformer(tr))
		storagetesting.RunTestDeleteExpectedTransformOrDecodeError(f.ctx, t, f.store, tr.setFailing)
	})
	t.Run("DeleteWithConflictAndExpectedDecodeError", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		codec := &failingCodec{Codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
		f := newEtcd3Fixture(t, withStoreCodec(codec))
		storagetesting.RunTestDeleteExpectedTransformOrDecodeError(f.ctx, t, f.store, codec.setFailing)
	})
	t.Run("DeleteWithSuggestionAndMissingExpectedTransformOrDecodeError", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		f := newEtcd3Fixture(t)
		storagetesting.RunTestDeleteWithSuggestionAndMissingExpectedTransformOrDecodeError(f.ctx, t, f.store)
	})

	t.Run("GetListNonRecursive", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestGetListNonRecursive(f.ctx, t, f.srv.increaseRV(), f.store)
	})
	t.Run("GetListWithErrorAggregation", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		f := newEtcd3Fixture(t)
		deleter := etcd3.NewStoreWithUnsafeCorruptObjectDeletion(f.store, podsResource)
		storagetesting.RunTestGetListWithErrorAggregation(f.ctx, t, f.overridable(deleter), corruptObjectError())
	})
	t.Run("GetListWithoutErrorAggregation", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, false)
		f := newEtcd3Fixture(t)
		storagetesting.RunTestGetListWithoutErrorAggregation(f.ctx, t, f.overridable(f.store), corruptObjectError())
	})
	t.Run("GuaranteedUpdate", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestGuaranteedUpdate(f.ctx, t, f.prefixed(), f.keyInvariants())
	})
	t.Run("GuaranteedUpdateChecksStoredData", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestGuaranteedUpdateChecksStoredData(f.ctx, t, f.prefixed())
	})
	t.Run("TransformationFailure", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestTransformationFailure(f.ctx, t, f.prefixed())
	})
	t.Run("List", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestList(f.ctx, t, f.store, f.compaction(), false, f.srv.lists)
	})
	t.Run("ConsistentList", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestConsistentList(f.ctx, t, f.store, f.srv.increaseRV(), false, true, false)
	})
	t.Run("CompactRevision", func(t *testing.T) {
		// the store observes compactions made by others through its watch of the compact key,
		// which ListFromCacheSnapshot turns on
		setGate(t, features.ListFromCacheSnapshot, true)
		f := newEtcd3Fixture(t)
		storagetesting.RunTestCompactRevision(f.ctx, t, f.store, f.srv.increaseRV(), f.compaction())
	})
	t.Run("ListContinuation", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestListContinuation(f.ctx, t, f.store, f.callsValidation())
	})
	t.Run("ListPaginationRareObject", func(t *testing.T) {
		// as upstream: ListFromCacheSnapshot adds a read of the compact key to the count
		setGate(t, features.ListFromCacheSnapshot, false)
		f := newEtcd3Fixture(t)
		storagetesting.RunTestListPaginationRareObject(f.ctx, t, f.store, f.callsValidation())
	})
	t.Run("ListContinuationWithFilter", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestListContinuationWithFilter(f.ctx, t, f.store, f.callsValidation())
	})
	t.Run("ListInconsistentContinuation", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestListInconsistentContinuation(f.ctx, t, f.store, f.compaction())
	})
	t.Run("ListResourceVersionMatch", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestListResourceVersionMatch(f.ctx, t, f.prefixed())
	})
	for _, sized := range []bool{true, false} {
		t.Run(fmt.Sprintf("Stats/SizeBasedListCostEstimate=%v", sized), func(t *testing.T) {
			f := newEtcd3Fixture(t)
			if sized {
				if err := f.store.EnableResourceSizeEstimation(f.keysFunc); err != nil {
					t.Fatal(err)
				}
			}
			storagetesting.RunTestStats(f.ctx, t, f.store, f.codec, f.transformer, sized)
		})
	}
}

// TestRangeStreamFallback: with EtcdRangeStream on (its default since 1.37) the store first asks
// for etcd 3.7's KV.RangeStream; neither server has it, and on the Unimplemented answer the store
// must fall back to paged ranges and list correctly.
func TestRangeStreamFallback(t *testing.T) {
	setGate(t, features.EtcdRangeStream, true)
	f := newEtcd3Fixture(t)
	storagetesting.RunTestGetListRecursivePrefix(f.ctx, t, f.store)
	if f.srv.kv.GetStreamReadsAndReset() == 0 {
		t.Errorf("no RangeStream was tried: the fallback was not exercised")
	}
}
