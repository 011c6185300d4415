/**
 * What the Cacher's Storage face works with (the fields of cacher.go's `Cacher` struct): its
 * config, the storage underneath, the running parts (watch cache, indexed watchers, ready), the
 * clock, and the resource's key prefix; read once when the face is built. With the two small steps
 * the watch and the reads share: prepare a key, and the filter of a key and a predicate.
 */
import { Effect, Either } from "effect"
import type { GroupResource, StatusError } from "../api/status.js"
import { prepareKey } from "../storage/etcd3/store.js"
import { Storage, type StorageShape } from "../storage/interfaces.js"
import { type Attrs, matchesAttributes, type SelectionPredicate } from "../storage/selection-predicate.js"
import { type CacherConfigShape, CacherConfig, resourcePrefixOf } from "./config.js"
import { IndexedWatchers, type IndexedWatchersShape } from "./indexed-watchers.js"
import { InitialEvents } from "./initial-events.js"
import { listMetricsFor, type ListMetrics } from "./list-metrics.js"
import { type ReadyShape, Ready } from "./ready.js"
import { type WatchCacheShape, WatchCache } from "./watch-cache.js"

export interface CacherDeps {
  readonly config: CacherConfigShape
  /** the storage underneath */
  readonly storage: StorageShape
  readonly watchCache: WatchCacheShape
  readonly watchers: IndexedWatchersShape
  readonly ready: ReadyShape
  /** the layer's clock, in ms */
  readonly now: () => number
  readonly gr: GroupResource
  /** the resource's key prefix ("/pods/") */
  readonly prefix: string
  readonly typeMeta: NonNullable<CacherConfigShape["typeMeta"]>
  /** the indexed trigger's field, if any */
  readonly trigger: string | undefined
  readonly listMetrics: ListMetrics
  /** what watches from resourceVersion 0 start with, shared while the cache is unchanged */
  readonly initialEvents: InitialEvents
}

/** The face's dependencies, from the Cacher's services. */
export const makeCacherDeps: Effect.Effect<
  CacherDeps,
  never,
  CacherConfig | Storage | WatchCache | IndexedWatchers | Ready
> = Effect.gen(function* () {
  const config = yield* CacherConfig
  const storage = yield* Storage
  const watchCache = yield* WatchCache
  const watchers = yield* IndexedWatchers
  const ready = yield* Ready
  const clock = yield* Effect.clock
  const prefix = resourcePrefixOf(config)
  return {
    config,
    storage,
    watchCache,
    watchers,
    ready,
    now: () => clock.unsafeCurrentTimeMillis(),
    gr: config.groupResource,
    prefix,
    typeMeta: config.typeMeta ?? {},
    trigger: config.indexedTrigger?.field,
    listMetrics: listMetricsFor(prefix),
    initialEvents: new InitialEvents()
  }
})

/** The key as the cache holds it (a recursive key ends with "/"), failing as the etcd3 store does. */
export const prepare = (d: CacherDeps, key: string, recursive: boolean): Effect.Effect<string, StatusError> =>
  Effect.suspend(() =>
    Either.map(prepareKey("/", d.prefix, key, recursive), () => (recursive && !key.endsWith("/") ? key + "/" : key))
  )

/** Whether a cached object (its key and attributes) is under `key` and passes the predicate. */
export const filterFor = (key: string, recursive: boolean, pred: SelectionPredicate) => {
  const empty = pred.label.empty() && pred.field.empty()
  return (k: string, attrs: Attrs) =>
    (recursive ? k.startsWith(key) : k === key) && (empty || matchesAttributes(pred, attrs))
}
