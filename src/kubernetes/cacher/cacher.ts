/**
 * cacher/cacher.go (seed 002): a Storage in front of a Storage. One reflector keeps the watch cache
 * in step with etcd; every client watch is a cacheWatcher served from memory; reads are served from
 * the cache where the apiserver's delegation rules allow, writes go to the storage underneath.
 *
 *   reflector fiber ──(incoming, bounded 100: back-pressure)──▶ dispatcher fiber ──▶ cacheWatchers
 *                                                          (+ a ~1 s jittered bookmark tick)
 *
 * The parts are services with their own layers (watch-cache.ts, indexed-watchers.ts, ready.ts,
 * dispatcher.ts, reflector.ts, progress-requester.ts); `Cacher.layer` composes them in one scope
 * with this file's Storage face on top. Closing the scope interrupts the fibers and ends every watch.
 */
import { Context, Effect, Either, Layer, Metric, Queue, type Scope, Stream } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import { isTooLargeResourceVersion, newNotFound, type StatusError, toStatus } from "../api/status.js"
import { errorEvent, type WatchEvent } from "../api/watch-event.js"
import { decodeContinue, encodeContinue } from "../storage/continue.js"
import { prepareKey } from "../storage/etcd3/store.js"
import {
  type ListOptions,
  Storage,
  type StorageShape,
  type WatchHandle,
  type WatchSink
} from "../storage/interfaces.js"
import { type Attrs, Everything, matchesAttributes, type SelectionPredicate } from "../storage/selection-predicate.js"
import { parseListResourceVersion, parseWatchResourceVersion } from "../storage/versioner.js"
import { CacheWatcher, type Consumer, suggestedWatchChannelSize, watcherCapacity } from "./cache-watcher.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"
import { IndexedWatchers } from "./indexed-watchers.js"
import { type CacherConfigShape, CacherConfig, resourcePrefixOf } from "./config.js"
import { Dispatcher } from "./dispatcher.js"
import { progressRequesterLayer } from "./progress-requester.js"
import { type ReadyShape, Ready } from "./ready.js"
import { reflectorLayer } from "./reflector.js"
import { type StoreElement, type WatchCacheShape, WatchCache } from "./watch-cache.js"

export type { CacherConfigShape } from "./config.js"

/** What tests and metrics may look at besides the Storage face. */
export interface CacherInternalsShape {
  readonly watchCache: WatchCacheShape
  readonly ready: ReadyShape
  /** live cacheWatchers */
  readonly watcherCount: () => number
  /** watchers terminated for not keeping up */
  readonly terminatedCount: () => number
  /** the RV of the last event the dispatcher handed to the watchers */
  readonly dispatchedRV: () => bigint
}

export class CacherInternals extends Context.Tag("etcd-effect/kubernetes/CacherInternals")<
  CacherInternals,
  CacherInternalsShape
>() {}

const listTotal = Metric.counter("apiserver_cache_list_total", {
  description: "Number of LIST requests served from watch cache"
})
const listFetched = Metric.counter("apiserver_cache_list_fetched_objects_total", {
  description: "Number of objects read from watch cache in the course of serving a LIST request"
})
const listReturned = Metric.counter("apiserver_cache_list_returned_objects_total", {
  description: "Number of objects returned for a LIST request from watch cache"
})

/** A watch as registered: a watcher with what it starts with, or an error to deliver as its only event. */
type Started =
  | { readonly _tag: "Watching"; readonly watcher: CacheWatcher; readonly head: ReadonlyArray<WatchEvent> }
  | { readonly _tag: "Failed"; readonly error: StatusError }

/** The Storage face over the running parts. */
const makeFace = Effect.gen(function* () {
  const config = yield* CacherConfig
  const storage = yield* Storage
  const watchCache = yield* WatchCache
  const watchers = yield* IndexedWatchers
  const ready = yield* Ready
  const dispatcher = yield* Dispatcher
  const clock = yield* Effect.clock
  const now = () => clock.unsafeCurrentTimeMillis()
  const gr = config.groupResource
  const prefix = resourcePrefixOf(config)
  const typeMeta = config.typeMeta ?? {}
  const trigger = config.indexedTrigger?.field
  const listTags = <T extends Metric.Metric.Counter<number>>(m: T) =>
    m.pipe(Metric.tagged("resource_prefix", prefix), Metric.tagged("index", ""))
  const listTotalM = listTags(listTotal)
  const listFetchedM = listTags(listFetched)
  const listReturnedM = listTags(listReturned)

  const prepare = (key: string, recursive: boolean) =>
    Effect.suspend(() =>
      Either.map(prepareKey("/", prefix, key, recursive), () => (recursive && !key.endsWith("/") ? key + "/" : key))
    )

  const filterFor = (key: string, recursive: boolean, pred: SelectionPredicate) => {
    const empty = pred.label.empty() && pred.field.empty()
    return (k: string, attrs: Attrs) =>
      (recursive ? k.startsWith(key) : k === key) && (empty || matchesAttributes(pred, attrs))
  }

  /** Cacher.Watch up to registration: the freshness wait, the interval, and the watcher, registered in one step */
  const startWatch = (
    key: string,
    options: ListOptions,
    wanted: { readonly _tag: "Queue" } | Extract<Consumer, { _tag: "Sink" }>
  ): Effect.Effect<Started, StatusError> =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      const k = yield* prepare(key, recursive)
      const rv = yield* parseWatchResourceVersion(options.resourceVersion, gr)
      if (!ready.isReady) return yield* Effect.fail(ready.notReady())
      const pred = options.predicate ?? Everything
      const S = options.sendInitialEvents
      const B = pred.allowWatchBookmarks
      const rvText = options.resourceVersion ?? ""

      // the RV the watch must not start before (waits for the cache up to 3 s)
      let requiredRV = 0n
      if (S === true)
        requiredRV = rvText === "" ? yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n) : rv
      else if (S === false && rvText === "")
        requiredRV = yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n)
      if (S === true && requiredRV > 0n) {
        const fresh = yield* Effect.either(watchCache.waitUntilFresh(requiredRV))
        if (Either.isLeft(fresh)) return { _tag: "Failed", error: fresh.left } as const
      }

      // the watcher's scope for dispatch: namespace and name from the key or the field selector
      const parts = k.slice(prefix.length).split("/")
      const namespace = pred.field.requiresExactMatch("metadata.namespace") ?? (parts.length >= 2 ? parts[0]! : "")
      const name =
        pred.field.requiresExactMatch("metadata.name") ??
        (!recursive && parts.length >= 1 ? parts[parts.length - 1]! : "")
      const triggerValue = trigger === undefined ? undefined : pred.field.requiresExactMatch(trigger)
      const chanSize = suggestedWatchChannelSize(watchCache.capacity, trigger !== undefined, triggerValue !== undefined)
      const filter = filterFor(k, recursive, pred)

      const consumer: Consumer =
        wanted._tag === "Queue"
          ? { _tag: "Queue", queue: yield* Queue.bounded<WatchCacheEvent>(watcherCapacity(chanSize)) }
          : wanted

      // take the interval and register in one synchronous step: no event can fall in between
      return yield* Effect.sync((): Started => {
        const snapshotWanted = S === true || (rv === 0n && S === undefined)
        let startRV: bigint
        const initial: Array<WatchEvent> = []
        let pending: ReadonlyArray<import("./watch-cache-event.js").WatchCacheEvent> = []
        if (snapshotWanted) {
          const snap = watchCache.snapshot(recursive ? k : undefined)
          startRV = snap.resourceVersion
          if (snap._tag === "Snapshot")
            for (const el of snap.elements)
              if (filter(el.key, el.attrs)) initial.push({ type: "ADDED", object: el.object })
        } else if (S === false) {
          startRV = rvText === "" ? requiredRV : watchCache.resourceVersion
        } else {
          const interval = watchCache.eventsSince(rv)
          if (interval._tag !== "Events" && interval._tag !== "Snapshot") return { _tag: "Failed", error: interval }
          startRV = rv
          pending = interval._tag === "Events" ? interval.events : []
        }
        const watcher = new CacheWatcher({
          chanSize,
          filter: (key2, attrs) => filter(key2, attrs),
          startRV,
          allowWatchBookmarks: B,
          typeMeta,
          now: now(),
          namespace,
          name: triggerValue === undefined ? name : "",
          triggerValue,
          bookmarkFrequencyMs: config.bookmarkFrequencyMs,
          deadline: options.deadline,
          consumer
        })
        for (const e of pending) {
          const out = watcher.convert(e)
          if (out !== undefined) initial.push(out)
        }
        const head = watcher.begin(initial, S === true && B ? watchCache.resourceVersion : undefined)
        watchers.add(watcher)
        return { _tag: "Watching", watcher, head }
      })
    })

  const watch: StorageShape["watch"] = (key, options) =>
    Effect.map(startWatch(key, options, { _tag: "Queue" }), (started): Stream.Stream<WatchEvent> => {
      if (started._tag === "Failed") return Stream.succeed(errorEvent(toStatus(started.error)))
      const { head, watcher } = started
      return watcher.stream(head).pipe(Stream.ensuring(Effect.sync(() => watchers.remove(watcher))))
    })

  const watchSink = (
    key: string,
    options: ListOptions,
    sink: WatchSink
  ): Effect.Effect<WatchHandle, StatusError, Scope.Scope> =>
    Effect.flatMap(startWatch(key, options, { _tag: "Sink", sink }), (started) => {
      if (started._tag === "Failed") {
        sink.push([errorEvent(toStatus(started.error))])
        sink.end()
        return Effect.succeed({ resume: () => {} })
      }
      const { watcher } = started
      return Effect.as(
        Effect.addFinalizer(() => Effect.sync(() => watchers.remove(watcher))),
        { resume: () => watcher.resume() }
      )
    })

  /**
   * A page of a list served from a cache snapshot: items from `fromKey` on that pass the
   * predicate, at most `limit` (0: all), with a continue token (the next key after the last
   * item, at the snapshot's RV) when more would follow.
   */
  const page = (
    elements: ReadonlyArray<StoreElement>,
    rv: bigint,
    listKey: string,
    recursive: boolean,
    pred: SelectionPredicate,
    limit: number,
    fromKey: string
  ): Effect.Effect<KubeList> => {
    const filter = filterFor(listKey, recursive, pred)
    const items: Array<KubeObject> = []
    let i = 0
    while (i < elements.length && elements[i]!.key < fromKey) i++
    let lastKey = ""
    let more = 0
    for (; i < elements.length; i++) {
      const el = elements[i]!
      if (!filter(el.key, el.attrs)) continue
      if (limit > 0 && items.length >= limit) {
        more++
        continue
      }
      items.push(el.object)
      lastKey = el.key
    }
    const metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } = {
      resourceVersion: rv.toString()
    }
    if (more > 0) {
      const token = encodeContinue(lastKey + "\u0000", listKey, rv)
      if (Either.isRight(token)) metadata.continue = token.right
      if (pred.label.empty() && pred.field.empty()) metadata.remainingItemCount = more
    }
    return Effect.as(
      Effect.all(
        [
          Metric.increment(listTotalM),
          Metric.incrementBy(listFetchedM, elements.length),
          Metric.incrementBy(listReturnedM, items.length)
        ],
        {
          discard: true
        }
      ),
      { metadata, items }
    )
  }

  /** the cache's state at `rv` (0: its latest), after waiting for it; a state it no longer has goes to etcd */
  const snapshotList = (
    key: string,
    options: ListOptions,
    k: string,
    recursive: boolean,
    rv: bigint,
    limit: number,
    fromKey: string
  ): Effect.Effect<KubeList, StatusError> =>
    Effect.gen(function* () {
      const pred = options.predicate ?? Everything
      // below a compaction the storage has seen, etcd answers (with its "too old" error)
      if (rv !== 0n && rv < (yield* storage.compactRevision)) return yield* storage.getList(key, options)
      if (!recursive) {
        // a single object: the latest state (Exact at an older RV goes to etcd)
        if (rv !== 0n && rv < watchCache.resourceVersion) return yield* storage.getList(key, options)
        const el = watchCache.store.get(k)
        const filter = filterFor(k, false, pred)
        return {
          metadata: { resourceVersion: watchCache.resourceVersion.toString() },
          items: el !== undefined && filter(el.key, el.attrs) ? [el.object] : []
        }
      }
      const snap = rv === 0n ? watchCache.snapshot(k) : watchCache.snapshotAt(rv, k)
      if (snap._tag !== "Snapshot") return yield* storage.getList(key, options)
      return yield* page(snap.elements, snap.resourceVersion, k, true, pred, limit, fromKey)
    })

  /**
   * Whether the cache may wait to reach `rv`. A quiet resource's cache reaches it only through a
   * requested progress notification, which an etcd before 3.4.31/3.5.13 sends ahead of pending
   * events (storage/etcd3/feature-support.ts): there the progress requester asks nothing and a
   * read the cache has not reached yet goes to etcd instead.
   */
  const mayWaitFor = (rv: bigint): Effect.Effect<boolean> =>
    rv <= watchCache.resourceVersion || storage.requestWatchProgressSupported === undefined
      ? Effect.succeed(true)
      : storage.requestWatchProgressSupported

  /** a consistent read: the cache must reach etcd's current RV, else etcd answers */
  const waitConsistent = Effect.gen(function* () {
    const current = yield* storage.getCurrentResourceVersion
    if (!(yield* mayWaitFor(current))) return false
    const fresh = yield* Effect.either(watchCache.waitUntilFresh(current))
    if (Either.isRight(fresh)) return true
    if (isTooLargeResourceVersion(fresh.left)) return false
    return yield* Effect.fail(fresh.left)
  })

  /**
   * Cacher.GetList by the delegator's rules with the cache's snapshots (ListFromCacheSnapshot on):
   * continue tokens and Exact (or a limit with a specific RV) from the snapshot at that RV, when
   * the ring still holds it; RV "" after a consistent freshness wait; "0" and NotOlderThan from the
   * latest state. What the cache cannot serve goes to etcd, which also gives the exact errors.
   */
  const getList: StorageShape["getList"] = (key, options) =>
    Effect.gen(function* () {
      const recursive = options.recursive === true
      const pred = options.predicate ?? Everything
      const rvText = options.resourceVersion ?? ""
      const match = options.resourceVersionMatch ?? ""
      if (!ready.isReady) {
        // while the cache is not ready only a paged list without selectors may go to etcd
        if (pred.limit > 0 && pred.label.empty() && pred.field.empty()) return yield* storage.getList(key, options)
        return yield* Effect.fail(ready.notReady())
      }
      const k = yield* prepare(key, recursive)
      if (pred.continue !== "") {
        const token = decodeContinue(pred.continue, k)
        // a bad token, or an RV beside one, gets etcd3's error
        if (!recursive || Either.isLeft(token) || (rvText !== "" && rvText !== "0"))
          return yield* storage.getList(key, options)
        if (token.right.rv < 0n) {
          if (!(yield* waitConsistent)) return yield* storage.getList(key, options)
          return yield* snapshotList(key, options, k, true, 0n, pred.limit, token.right.fromKey)
        }
        if (!(yield* mayWaitFor(token.right.rv))) return yield* storage.getList(key, options)
        yield* watchCache.waitUntilFresh(token.right.rv)
        return yield* snapshotList(key, options, k, true, token.right.rv, pred.limit, token.right.fromKey)
      }
      const rv = yield* parseListResourceVersion(rvText)
      if (match === "Exact" || (match === "" && pred.limit > 0 && rvText !== "" && rvText !== "0")) {
        // Exact "0" and the like: etcd3 has the validation errors
        if (rv === 0n || !(yield* mayWaitFor(rv))) return yield* storage.getList(key, options)
        yield* watchCache.waitUntilFresh(rv)
        return yield* snapshotList(key, options, k, recursive, rv, pred.limit, "")
      }
      if (match !== "" && match !== "NotOlderThan") return yield* storage.getList(key, options)
      if (rvText === "") {
        if (!(yield* waitConsistent)) return yield* storage.getList(key, options)
        return yield* snapshotList(key, options, k, recursive, 0n, pred.limit, "")
      }
      if (!(yield* mayWaitFor(rv))) return yield* storage.getList(key, options)
      yield* watchCache.waitUntilFresh(rv)
      // RV "0" (and NotOlderThan): the latest state; with RV "0" the cache ignores the limit (cacher.go)
      return yield* snapshotList(key, options, k, recursive, 0n, rvText === "0" ? 0 : pred.limit, "")
    })

  const get: StorageShape["get"] = (key, options = {}) =>
    Effect.gen(function* () {
      const rvText = options.resourceVersion ?? ""
      if (rvText === "" || !ready.isReady) return yield* storage.get(key, options)
      const k = yield* prepare(key, false)
      const rv = yield* parseListResourceVersion(rvText)
      if (!(yield* mayWaitFor(rv))) return yield* storage.get(key, options)
      yield* watchCache.waitUntilFresh(rv)
      const el = watchCache.store.get(k)
      if (el === undefined) {
        if (options.ignoreNotFound === true) return undefined
        return yield* Effect.fail(newNotFound(gr, k.slice(k.lastIndexOf("/") + 1)))
      }
      return el.object
    })

  const guaranteedUpdate: StorageShape["guaranteedUpdate"] = (key, options) =>
    Effect.suspend(() => {
      // the cached object saves a read when it is current (the store retries when it is not)
      const cached = options.cachedExistingObject ?? watchCache.store.get(key)?.object
      return storage.guaranteedUpdate(
        key,
        cached === undefined ? options : { ...options, cachedExistingObject: cached }
      )
    })

  const face: StorageShape = {
    create: storage.create,
    delete: storage.delete,
    watch,
    watchSink,
    get,
    getList,
    guaranteedUpdate,
    stats: storage.stats,
    readinessCheck: Effect.suspend(() => (ready.isReady ? storage.readinessCheck : Effect.fail(ready.notReady()))),
    requestWatchProgress: storage.requestWatchProgress,
    getCurrentResourceVersion: storage.getCurrentResourceVersion,
    compactRevision: storage.compactRevision
  }
  const internals: CacherInternalsShape = {
    watchCache,
    ready,
    watcherCount: () => watchers.size,
    terminatedCount: () => watchers.terminated,
    dispatchedRV: dispatcher.lastProcessedRV
  }
  return { face, internals }
})

/** The running parts of one Cacher, over the Storage underneath. */
const partsLayer = Layer.mergeAll(reflectorLayer, progressRequesterLayer).pipe(
  Layer.provideMerge(Dispatcher.layer),
  Layer.provideMerge(Layer.mergeAll(WatchCache.layer, IndexedWatchers.layer, Ready.layer))
)

/** The Cacher's layer with its internals beside the Storage face (for `make`, tests and metrics). */
export const layerWithInternals = (config: CacherConfigShape): Layer.Layer<Storage | CacherInternals, never, Storage> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const underlying = yield* Storage
      const parts = yield* Layer.build(partsLayer.pipe(Layer.provide(Layer.succeed(CacherConfig, config))))
      const { face, internals } = yield* Effect.provide(
        makeFace,
        Context.add(parts, CacherConfig, config).pipe(Context.add(Storage, underlying))
      )
      return Context.make(Storage, face).pipe(Context.add(CacherInternals, internals))
    })
  )

/**
 * The Cacher as a Layer: it takes the `Storage` underneath and provides a `Storage`, so a program
 * turns the watch cache on by adding this layer.
 */
export const layer = (config: CacherConfigShape): Layer.Layer<Storage, never, Storage> => layerWithInternals(config)

/** The Cacher over `storage`, living in the current scope. */
export const make = (
  storage: StorageShape,
  config: CacherConfigShape
): Effect.Effect<StorageShape & { readonly internals: CacherInternalsShape }, never, Scope.Scope> =>
  Effect.map(Layer.build(layerWithInternals(config).pipe(Layer.provide(Layer.succeed(Storage, storage)))), (ctx) => ({
    ...Context.get(ctx, Storage),
    internals: Context.get(ctx, CacherInternals)
  }))

export const Cacher = { make, layer } as const
