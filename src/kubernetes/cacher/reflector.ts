/**
 * The cacher's reflector (client-go's Reflector over storage.ListerWatcher): list the resource in
 * pages of 10000 at one RV into the watch cache (Replace), then watch from that RV with progress
 * notifications (bookmarks move the cache's RV), re-watching from the last RV when a watch ends,
 * and relisting on 410 (compaction). Each storage chunk becomes watch-cache events in one
 * synchronous step, then one offer of the batch to the dispatcher's bounded queue (back-pressure).
 */
import { type Chunk, Effect, Layer, Metric, Queue, Schedule, Stream } from "effect"
import { supervised } from "../../supervision/fatal.js"
import type { KubeObject } from "../api/object-meta.js"
import type { StatusError } from "../api/status.js"
import type { WatchEvent } from "../api/watch-event.js"
import { Storage, type StorageShape } from "../storage/interfaces.js"
import { Everything } from "../storage/selection-predicate.js"
import { IndexedWatchers } from "./indexed-watchers.js"
import { CacherConfig, resourcePrefixOf } from "./config.js"
import { Dispatcher, qualified } from "./dispatcher.js"
import { type ReadyShape, Ready } from "./ready.js"
import { type WatchCacheShape, WatchCache } from "./watch-cache.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

/** storageWatchListPageSize */
export const LIST_PAGE_SIZE = 10000

export interface ReflectorDeps {
  readonly storage: StorageShape
  readonly resourcePrefix: string
  readonly watchCache: WatchCacheShape
  readonly incoming: Queue.Queue<WatchCacheEvent>
  readonly ready: ReadyShape
  readonly now: () => number
  /** closes every watcher (a relist: their RVs may no longer be servable) */
  readonly terminateAllWatchers: () => void
  /** apiserver_watch_cache_events_received_total, apiserver_watch_cache_initializations_total */
  readonly received?: Metric.Metric.Counter<number> | undefined
  readonly initializations?: Metric.Metric.Counter<number> | undefined
}

/** the paged list at one RV */
const list = (deps: ReflectorDeps): Effect.Effect<{ items: Array<KubeObject>; rv: bigint }, StatusError> =>
  Effect.gen(function* () {
    const items: Array<KubeObject> = []
    let token = ""
    let rv = 0n
    for (;;) {
      const page = yield* deps.storage.getList(deps.resourcePrefix, {
        recursive: true,
        predicate: { ...Everything, limit: LIST_PAGE_SIZE, continue: token }
      })
      items.push(...page.items)
      if (rv === 0n) rv = BigInt(page.metadata.resourceVersion ?? "0")
      token = page.metadata.continue ?? ""
      if (token === "") return { items, rv }
    }
  })

type WatchEnd = { readonly _tag: "Ended"; readonly rv: bigint } | { readonly _tag: "Relist"; readonly why: string }

/** one storage watch from `rv`, fed into the cache; how it ended */
const watchOnce = (deps: ReflectorDeps, rv: bigint): Effect.Effect<WatchEnd, StatusError> =>
  Effect.gen(function* () {
    const events = yield* deps.storage.watch(deps.resourcePrefix, {
      recursive: true,
      resourceVersion: rv.toString(),
      progressNotify: true,
      predicate: { ...Everything, allowWatchBookmarks: true }
    })
    let last = rv
    let end: WatchEnd | undefined
    yield* Stream.runForEachChunk(events, (chunk: Chunk.Chunk<WatchEvent>) => {
      const batch: Array<WatchCacheEvent> = []
      for (const e of chunk) {
        if (e.type === "ERROR") {
          end =
            e.object.code === 410 ? { _tag: "Relist", why: e.object.message ?? "expired" } : { _tag: "Ended", rv: last }
          break
        }
        const erv = BigInt(e.object.metadata.resourceVersion ?? "0")
        if (e.type === "BOOKMARK") {
          deps.watchCache.updateResourceVersion(erv)
          batch.push({
            type: "BOOKMARK",
            key: "",
            object: e.object,
            attrs: { labels: {}, fields: {} },
            prevObject: undefined,
            prevAttrs: undefined,
            resourceVersion: erv,
            recordTime: deps.now()
          })
        } else {
          batch.push(deps.watchCache.processEvent(e.type, e.object, erv))
        }
        last = erv
      }
      if (batch.length === 0) return Effect.void
      const offer = Queue.offerAll(deps.incoming, batch)
      return deps.received === undefined
        ? offer
        : Effect.zipRight(Metric.incrementBy(deps.received, batch.length), offer)
    })
    return end ?? { _tag: "Ended", rv: last }
  })

/**
 * ListAndWatch, forever: the cache is Ready from the first Replace until a relist; a failure
 * leaves it Pending and retries after 1 s (wait.Until(startCaching, 1s)).
 */
export const runReflector = (deps: ReflectorDeps): Effect.Effect<never> =>
  Effect.gen(function* () {
    const listed = yield* list(deps)
    deps.watchCache.replace(listed.items, listed.rv)
    deps.ready.setReady()
    if (deps.initializations !== undefined) yield* Metric.increment(deps.initializations)
    let rv = listed.rv
    for (;;) {
      const end = yield* watchOnce(deps, rv)
      if (end._tag === "Relist") return yield* Effect.fail(end.why)
      // a watch that ended (an error other than 410, or the stream closed): again from the last RV
      rv = end.rv
      yield* Effect.sleep("200 millis")
    }
  }).pipe(
    Effect.catchAll((e) =>
      Effect.sync(() => {
        deps.ready.setError(typeof e === "string" ? e : e.message)
        deps.terminateAllWatchers()
      })
    ),
    Effect.repeat(Schedule.spaced("1 second")),
    Effect.zipRight(Effect.never)
  ) as Effect.Effect<never>

const eventsReceived = Metric.counter("apiserver_watch_cache_events_received_total", {
  description: "Counter of events received in watch cache broken by resource type."
})
const initializations = Metric.counter("apiserver_watch_cache_initializations_total", {
  description: "Counter of watch cache initializations broken by resource type."
})

/** The reflector as a fiber of the Cacher's scope, over the Storage underneath. */
export const reflectorLayer: Layer.Layer<
  never,
  never,
  Storage | CacherConfig | WatchCache | Dispatcher | Ready | IndexedWatchers
> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* CacherConfig
    const storage = yield* Storage
    const watchCache = yield* WatchCache
    const dispatcher = yield* Dispatcher
    const ready = yield* Ready
    const watchers = yield* IndexedWatchers
    const clock = yield* Effect.clock
    const tagged = (m: Metric.Metric.Counter<number>) =>
      m.pipe(
        Metric.tagged("group", config.groupResource.group),
        Metric.tagged("resource", config.groupResource.resource)
      )
    // it retries what storage fails with; a defect ends it, and is reported (failOnFatal fails the program)
    const loop = runReflector({
      storage,
      resourcePrefix: resourcePrefixOf(config),
      watchCache,
      incoming: dispatcher.incoming,
      ready,
      now: () => clock.unsafeCurrentTimeMillis(),
      terminateAllWatchers: () => watchers.terminateAll(),
      received: tagged(eventsReceived),
      initializations: tagged(initializations)
    })
    yield* Effect.forkScoped(supervised(`watch cache reflector (${qualified(config.groupResource)})`, loop))
  })
)
