/**
 * etcd's mvcc and backend gauges (server/storage/mvcc/metrics.go), read at scrape time from the
 * counters the watchable store, the store and the backend already keep: nothing is added to the
 * write or watch paths.
 */
import { Effect } from "effect"
import type { BackendShape } from "../../backend/backend.js"
import type { MvccStoreShape } from "../../mvcc/kv.js"
import type { WatchableStoreShape } from "../../watch/watchable-store.js"
import { type Collector, counter, gauge } from "./prometheus.js"

export interface MvccSources {
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly backend: BackendShape
}

export const mvccCollector = ({ backend, store, watchable }: MvccSources): Collector =>
  Effect.sync(() => {
    const dbSize = backend.sizeBytes()
    return [
      gauge("etcd_debugging_mvcc_watch_stream_total", "Total number of watch streams.", watchable.streamCount()),
      gauge("etcd_debugging_mvcc_watcher_total", "Total number of watchers.", watchable.watcherCount()),
      gauge(
        "etcd_debugging_mvcc_slow_watcher_total",
        "Total number of unsynced slow watchers.",
        watchable.slowWatcherCount()
      ),
      gauge(
        "etcd_debugging_mvcc_pending_events_total",
        "Total number of pending events to be sent.",
        watchable.pendingEventsCount()
      ),
      counter(
        "etcd_debugging_mvcc_events_total",
        "Total number of events sent by this member.",
        watchable.eventsTotal()
      ),
      gauge("etcd_debugging_mvcc_current_revision", "The current revision of store.", store.rev()),
      // -1 before the first compaction, as etcd reports it
      gauge(
        "etcd_debugging_mvcc_compact_revision",
        "The revision of the last compaction in store.",
        store.compactRevision()
      ),
      gauge(
        "etcd_debugging_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
        dbSize
      ),
      gauge(
        "etcd_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
        dbSize
      ),
      gauge(
        "etcd_mvcc_db_total_size_in_use_in_bytes",
        "Total size of the underlying database logically in use in bytes.",
        backend.sizeInUseBytes()
      )
    ]
  })
