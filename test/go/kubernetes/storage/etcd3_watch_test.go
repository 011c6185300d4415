package storage

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

func TestEtcd3Watch(t *testing.T) {
	plain := func(run func(context.Context, *testing.T, storage.Interface)) func(*testing.T) {
		return func(t *testing.T) { f := newEtcd3Fixture(t); run(f.ctx, t, f.store) }
	}
	t.Run("Watch", plain(storagetesting.RunTestWatch))
	t.Run("ClusterScopedWatch", plain(storagetesting.RunTestClusterScopedWatch))
	t.Run("NamespaceScopedWatch", plain(storagetesting.RunTestNamespaceScopedWatch))
	t.Run("DeleteTriggerWatch", plain(storagetesting.RunTestDeleteTriggerWatch))
	t.Run("WatchFromZero", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestWatchFromZero(f.ctx, t, f.store, f.compaction())
	})
	t.Run("WatchFromNonZero", plain(storagetesting.RunTestWatchFromNonZero))
	t.Run("DelayedWatchDelivery", plain(storagetesting.RunTestDelayedWatchDelivery))
	t.Run("WatchError", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunTestWatchError(f.ctx, t, f.prefixed())
	})
	t.Run("WatchContextCancel", plain(storagetesting.RunTestWatchContextCancel))
	t.Run("WatcherTimeout", plain(storagetesting.RunTestWatcherTimeout))
	t.Run("WatchDeleteEventObjectHaveLatestRV", plain(storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV))
	t.Run("WatchInitializationSignal", plain(storagetesting.RunTestWatchInitializationSignal))
	t.Run("ProgressNotify", func(t *testing.T) {
		f := newEtcd3Fixture(t, withProgressNotify("1s"))
		storagetesting.RunOptionalTestProgressNotify(f.ctx, t, f.store, f.srv.increaseRV())
	})
	t.Run("WatchWithUnsafeDelete", func(t *testing.T) {
		setGate(t, features.AllowUnsafeMalformedObjectDeletion, true)
		f := newEtcd3Fixture(t)
		storagetesting.RunTestWatchWithUnsafeDelete(f.ctx, t, f.overridable(f.store), corruptObjectError())
	})
	t.Run("WatchDispatchBookmarkEvents", func(t *testing.T) {
		f := newEtcd3Fixture(t, withProgressNotify("1s"))
		storagetesting.RunTestWatchDispatchBookmarkEvents(f.ctx, t, f.store, false)
	})
	t.Run("SendInitialEventsBackwardCompatibility", plain(storagetesting.RunSendInitialEventsBackwardCompatibility))
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprintf("WatchSemantics/ConcurrentWatchObjectDecode=%v", concurrent), func(t *testing.T) {
			setGate(t, features.ConcurrentWatchObjectDecode, concurrent)
			f := newEtcd3Fixture(t)
			storagetesting.RunWatchSemantics(f.ctx, t, f.store)
		})
	}
	t.Run("WatchSemanticInitialEventsExtended", plain(storagetesting.RunWatchSemanticInitialEventsExtended))
	t.Run("WatchListMatchSingle", plain(storagetesting.RunWatchListMatchSingle))
	t.Run("WatchErrorIsBlockingFurtherEvents", func(t *testing.T) {
		f := newEtcd3Fixture(t)
		storagetesting.RunWatchErrorIsBlockingFurtherEvents(f.ctx, t, f.prefixed())
	})
}
