/**
 * cacher/cacher.go (seed 002): a Storage in front of a Storage. One reflector keeps the watch cache
 * in step with etcd; every client watch is a cacheWatcher served from memory; reads are served from
 * the cache where the apiserver's delegation rules allow, writes go to the storage underneath.
 *
 *   reflector fiber ──(incoming, bounded 100: back-pressure)──▶ dispatchEvents fiber ──▶ cacheWatchers
 *                                                          (+ a ~1 s jittered bookmark tick)
 *
 * Everything lives in the layer's scope: closing it interrupts the fibers and ends every watch.
 */
import { Context, Duration, Effect, Either, Layer, Metric, Queue, Random, Stream } from "effect"
import type { KubeList, KubeObject } from "../api/object-meta.js"
import {
  type GroupResource,
  isTooLargeResourceVersion,
  newNotFound,
  type StatusError,
  toStatus
} from "../api/status.js"
import { errorEvent, type WatchEvent } from "../api/watch-event.js"
import { prepareKey } from "../storage/etcd3/store.js"
import { type ListOptions, Storage, type StorageService } from "../storage/interfaces.js"
import {
  type AttrFunc,
  type Attrs,
  defaultAttrs,
  Everything,
  matchesAttributes,
  type SelectionPredicate
} from "../storage/selection-predicate.js"
import { parseListResourceVersion, parseWatchResourceVersion } from "../storage/versioner.js"
import { CacheWatcher, suggestedWatchChannelSize } from "./cache-watcher.js"
import { Ready } from "./ready.js"
import { runReflector } from "./reflector.js"
import { TimeBudget } from "./time-budget.js"
import { UPPER_BOUND_CAPACITY, WatchCache } from "./watch-cache.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

export interface CacherConfig {
  /** the resource's key prefix in the storage, e.g. "/pods/" */
  readonly resourcePrefix: string
  readonly groupResource: GroupResource
  /** apiVersion/kind of BOOKMARK objects */
  readonly typeMeta?: { readonly apiVersion?: string; readonly kind?: string } | undefined
  /** labels and selectable fields of an object (default: metadata.name/namespace) */
  readonly getAttrs?: AttrFunc | undefined
  /** an object's storage key (default: prefix + namespace/name, or prefix + name) */
  readonly keyFunc?: ((obj: KubeObject) => string) | undefined
  /** an indexed trigger: watchers selecting `field=value` get only events whose object (or previous object) has that value */
  readonly indexedTrigger?: { readonly field: string } | undefined
  /** the ring's upper bound (default 100 × 1024) */
  readonly upperBoundCapacity?: number | undefined
  /** how often a watcher that allows bookmarks gets one (default 1 min, as the apiserver) */
  readonly bookmarkFrequencyMs?: number | undefined
}

/** What tests and metrics may look at besides the Storage face. */
export interface CacherInternals {
  readonly watchCache: WatchCache
  readonly ready: Ready
  /** live cacheWatchers */
  readonly watcherCount: () => number
  /** watchers terminated for not keeping up */
  readonly terminatedCount: () => number
}

export class CacherInternalsTag extends Context.Tag("etcd-effect/kubernetes/CacherInternals")<CacherInternalsTag, CacherInternals>() {}

const terminatedWatchers = Metric.counter("apiserver_terminated_watchers_total", {
  description: "Counter of watchers closed due to unresponsiveness."
})
const eventsDispatched = Metric.counter("apiserver_watch_cache_events_dispatched_total", {
  description: "Counter of events dispatched in watch cache."
})
const cacheCapacity = Metric.gauge("apiserver_watch_cache_capacity", { description: "Total capacity of watch cache broken by resource type." })

const scopeKey = (namespace: string, name: string) => `${namespace}\u0000${name}`

export const make = (
  storage: StorageService,
  config: CacherConfig
): Effect.Effect<StorageService & { readonly internals: CacherInternals }, never, import("effect").Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const gr = config.groupResource
    const prefix = config.resourcePrefix.endsWith("/") ? config.resourcePrefix : config.resourcePrefix + "/"
    const getAttrs = config.getAttrs ?? defaultAttrs
    const keyFunc = config.keyFunc ??
      ((o: KubeObject) => prefix + (o.metadata.namespace ? `${o.metadata.namespace}/` : "") + (o.metadata.name ?? ""))
    const typeMeta = config.typeMeta ?? {}
    const trigger = config.indexedTrigger?.field
    const metricTags = (m: typeof terminatedWatchers) => m.pipe(Metric.tagged("group", gr.group), Metric.tagged("resource", gr.resource))
    const terminatedMetric = metricTags(terminatedWatchers)
    const dispatchedMetric = metricTags(eventsDispatched)
    const capacityMetric = cacheCapacity.pipe(Metric.tagged("group", gr.group), Metric.tagged("resource", gr.resource))

    const watchCache = new WatchCache(keyFunc, getAttrs, now, config.upperBoundCapacity ?? UPPER_BOUND_CAPACITY)
    const ready = new Ready(now)
    const incoming = yield* Queue.bounded<WatchCacheEvent>(100)
    yield* Effect.addFinalizer(() => Queue.shutdown(incoming))
    const budget = new TimeBudget(now)

    // ---- the watchers, indexed as the dispatcher looks them up ----
    const watchers = new Map<number, CacheWatcher>()
    const byScope = new Map<string, Set<CacheWatcher>>()
    const byTrigger = new Map<string, Set<CacheWatcher>>()
    const bookmarkWatchers = new Set<CacheWatcher>()
    let terminated = 0
    let lastProcessedRV = 0n

    const indexOf = (w: CacheWatcher): [Map<string, Set<CacheWatcher>>, string] =>
      w.triggerValue !== undefined ? [byTrigger, w.triggerValue] : [byScope, scopeKey(w.namespace, w.name)]
    const addWatcher = (w: CacheWatcher) => {
      watchers.set(w.id, w)
      const [index, k] = indexOf(w)
      let set = index.get(k)
      if (set === undefined) index.set(k, (set = new Set()))
      set.add(w)
      if (w.allowWatchBookmarks) bookmarkWatchers.add(w)
    }
    const removeWatcher = (w: CacheWatcher) => {
      if (!watchers.delete(w.id)) return
      const [index, k] = indexOf(w)
      const set = index.get(k)
      set?.delete(w)
      if (set?.size === 0) index.delete(k)
      bookmarkWatchers.delete(w)
      w.stop()
    }
    const terminateAllWatchers = () => {
      for (const w of Array.from(watchers.values())) removeWatcher(w)
    }
    yield* Effect.addFinalizer(() => Effect.sync(terminateAllWatchers))

    /** startDispatching: the watchers that may care about an event (its namespace/name scope, its trigger values) */
    const candidates = (e: WatchCacheEvent, out: Array<CacheWatcher>) => {
      const nss = new Set<string>([e.attrs.fields["metadata.namespace"] ?? "", e.prevAttrs?.fields["metadata.namespace"] ?? ""])
      const names = new Set<string>([e.attrs.fields["metadata.name"] ?? "", e.prevAttrs?.fields["metadata.name"] ?? ""])
      const seen = new Set<string>()
      for (const ns of [...nss, ""]) {
        for (const name of [...names, ""]) {
          const k = scopeKey(ns, name)
          if (seen.has(k)) continue
          seen.add(k)
          const set = byScope.get(k)
          if (set !== undefined) for (const w of set) out.push(w)
        }
      }
      if (trigger === undefined) return
      const values = new Set<string>([e.attrs.fields[trigger] ?? "", e.prevAttrs?.fields[trigger] ?? ""])
      for (const v of values) {
        const set = byTrigger.get(v)
        if (set !== undefined) for (const w of set) out.push(w)
      }
    }

    const terminate = (w: CacheWatcher) => {
      terminated++
      w.terminated = true
      removeWatcher(w)
    }

    /** dispatchEvent: non-blocking to every candidate; the blocked ones get what is left of the budget, together */
    const dispatchEvent = (e: WatchCacheEvent): Effect.Effect<void> | undefined => {
      lastProcessedRV = e.resourceVersion
      if (e.type === "BOOKMARK") return undefined // storage bookmarks only advance lastProcessedRV
      const targets: Array<CacheWatcher> = []
      candidates(e, targets)
      let blocked: Array<CacheWatcher> | undefined
      for (const w of targets) if (!w.nonblockingAdd(e)) (blocked ??= []).push(w)
      if (blocked === undefined) return undefined
      const timeout = budget.takeAvailable()
      const started = now()
      const done = new Set<CacheWatcher>()
      const waits = blocked.map((w) => Effect.map(w.add(e), () => void done.add(w)))
      return Effect.all(waits, { concurrency: "unbounded", discard: true }).pipe(
        Effect.timeout(Duration.millis(timeout)),
        Effect.ignore,
        Effect.zipRight(
          Effect.suspend(() => {
            const blockedNow = blocked!.filter((w) => !done.has(w))
            budget.returnUnused(timeout - (now() - started))
            if (blockedNow.length === 0) return Effect.void
            for (const w of blockedNow) terminate(w)
            return Effect.zipRight(
              Metric.incrementBy(terminatedMetric, blockedNow.length),
              Effect.logWarning(`Forcing ${gr.resource} watcher close due to unresponsiveness`).pipe(
                Effect.annotateLogs({ watchers: blockedNow.length })
              )
            )
          })
        )
      )
    }

    /** the bookmark tick: due watchers get a BOOKMARK at the last processed RV, never blocking */
    const dispatchBookmarks = () => {
      if (lastProcessedRV === 0n) return
      const t = now()
      const e: WatchCacheEvent = {
        type: "BOOKMARK",
        key: "",
        object: { metadata: {} },
        attrs: { labels: {}, fields: {} },
        prevObject: undefined,
        prevAttrs: undefined,
        resourceVersion: lastProcessedRV,
        recordTime: t
      }
      for (const w of bookmarkWatchers) {
        if (w.nextBookmarkTime > t) continue
        w.nonblockingAdd(e)
        w.scheduleNextBookmark(t)
      }
    }

    const dispatchEvents = Effect.gen(function*() {
      let nextTick = now() + 1000
      for (;;) {
        const wait = Math.max(0, nextTick - now())
        const batch = yield* Effect.option(Effect.timeout(Queue.takeBetween(incoming, 1, 100), Duration.millis(wait)))
        if (batch._tag === "Some") {
          let dispatched = 0
          for (const e of batch.value) {
            const blocked = dispatchEvent(e)
            if (blocked !== undefined) yield* blocked
            if (e.type !== "BOOKMARK") dispatched++
          }
          if (dispatched > 0) yield* Metric.incrementBy(dispatchedMetric, dispatched)
        }
        if (now() >= nextTick) {
          dispatchBookmarks()
          // wait.Jitter(1s, 0.25)
          nextTick = now() + 1000 + Math.floor((yield* Random.next) * 250)
          yield* Metric.set(capacityMetric, watchCache.capacity)
        }
      }
    })

    /** the progress requester: etcd RequestProgress every 100 ms while a read waits for freshness */
    const progressRequester = Effect.gen(function*() {
      for (;;) {
        yield* Effect.sleep("100 millis")
        if (watchCache.waiting > 0) yield* Effect.ignore(storage.requestWatchProgress)
      }
    })

    yield* Effect.forkScoped(dispatchEvents)
    yield* Effect.forkScoped(progressRequester)
    yield* Effect.forkScoped(
      runReflector({ storage, resourcePrefix: prefix, watchCache, incoming, ready, now, terminateAllWatchers })
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => ready.stop()))

    // ---- the Storage face ----

    const prepare = (key: string, recursive: boolean) =>
      Effect.suspend(() => Either.map(prepareKey("/", prefix, key, recursive), () => (recursive && !key.endsWith("/") ? key + "/" : key)))

    const filterFor = (key: string, recursive: boolean, pred: SelectionPredicate) => {
      const empty = pred.label.empty() && pred.field.empty()
      return (k: string, attrs: Attrs) =>
        (recursive ? k.startsWith(key) : k === key) && (empty || matchesAttributes(pred, attrs))
    }

    const parseRV = (rv: string | undefined) => parseWatchResourceVersion(rv, gr)

    const errorStream = (e: StatusError): Stream.Stream<WatchEvent> => Stream.succeed(errorEvent(toStatus(e)))

    const watch: StorageService["watch"] = (key, options: ListOptions) =>
      Effect.gen(function*() {
        const recursive = options.recursive === true
        const k = yield* prepare(key, recursive)
        const rv = yield* parseRV(options.resourceVersion)
        if (!ready.isReady) return yield* Effect.fail(ready.notReady())
        const pred = options.predicate ?? Everything
        const S = options.sendInitialEvents
        const B = pred.allowWatchBookmarks
        const rvText = options.resourceVersion ?? ""

        // the RV the watch must not start before (waits for the cache up to 3 s)
        let requiredRV = 0n
        if (S === true) requiredRV = rvText === "" ? yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n) : rv
        else if (S === false && rvText === "") requiredRV = yield* Effect.orElseSucceed(storage.getCurrentResourceVersion, () => 0n)
        if (S === true && requiredRV > 0n) {
          const fresh = yield* Effect.either(watchCache.waitUntilFresh(requiredRV))
          if (Either.isLeft(fresh)) return errorStream(fresh.left)
        }

        // the watcher's scope for dispatch: namespace and name from the key or the field selector
        const parts = k.slice(prefix.length).split("/")
        const namespace = pred.field.requiresExactMatch("metadata.namespace") ?? (parts.length >= 2 ? parts[0]! : "")
        const name = pred.field.requiresExactMatch("metadata.name") ?? (!recursive && parts.length >= 1 ? parts[parts.length - 1]! : "")
        const triggerValue = trigger === undefined ? undefined : pred.field.requiresExactMatch(trigger)
        const chanSize = suggestedWatchChannelSize(watchCache.capacity, trigger !== undefined, triggerValue !== undefined)
        const filter = filterFor(k, recursive, pred)

        // take the interval and register in one synchronous step: no event can fall in between
        const registered = yield* Effect.sync(() => {
          const snapshotWanted = S === true || (rv === 0n && S === undefined)
          let startRV: bigint
          let initial: Array<WatchEvent> = []
          let pending: ReadonlyArray<WatchCacheEvent> = []
          if (snapshotWanted) {
            const snap = watchCache.snapshot(recursive ? k : undefined)
            startRV = snap._tag === "Snapshot" ? snap.resourceVersion : watchCache.resourceVersion
            if (snap._tag === "Snapshot") {
              for (const el of snap.elements) if (filter(el.key, el.attrs)) initial.push({ type: "ADDED", object: el.object })
            }
          } else if (S === false) {
            startRV = rvText === "" ? requiredRV : watchCache.resourceVersion
          } else {
            const interval = watchCache.eventsSince(rv)
            if (!("_tag" in interval) || (interval._tag !== "Events" && interval._tag !== "Snapshot")) {
              return { error: interval as StatusError }
            }
            startRV = rv
            pending = interval._tag === "Events" ? interval.events : []
          }
          const w = new CacheWatcher(
            chanSize,
            (key2, attrs) => filter(key2, attrs),
            startRV,
            B,
            0n,
            typeMeta,
            now(),
            namespace,
            triggerValue === undefined ? name : "",
            triggerValue,
            config.bookmarkFrequencyMs
          )
          for (const e of pending) {
            const out = w.convert(e)
            if (out !== undefined) initial.push(out)
          }
          addWatcher(w)
          const endBookmark = S === true && B ? watchCache.resourceVersion : undefined
          return { watcher: w, initial, endBookmark }
        })
        if ("error" in registered) return errorStream(registered.error)
        const { endBookmark, initial, watcher } = registered
        return watcher.stream(initial, endBookmark).pipe(Stream.ensuring(Effect.sync(() => removeWatcher(watcher))))
      })

    /** the cache's current objects under a key (recursive) or at it, through a predicate */
    const fromCache = (k: string, recursive: boolean, pred: SelectionPredicate): KubeList => {
      const filter = filterFor(k, recursive, pred)
      const items: Array<KubeObject> = []
      if (recursive) {
        const snap = watchCache.snapshot(k)
        if (snap._tag === "Snapshot") for (const el of snap.elements) if (filter(el.key, el.attrs)) items.push(el.object)
      } else {
        const el = watchCache.store.get(k)
        if (el !== undefined && filter(el.key, el.attrs)) items.push(el.object)
      }
      return { metadata: { resourceVersion: watchCache.resourceVersion.toString() }, items }
    }

    const getList: StorageService["getList"] = (key, options) =>
      Effect.gen(function*() {
        const recursive = options.recursive === true
        const k = yield* prepare(key, recursive)
        const pred = options.predicate ?? Everything
        const rvText = options.resourceVersion ?? ""
        const match = options.resourceVersionMatch ?? ""
        // ShouldDelegateList: continue, Exact, a limit with a specific RV, or an unready cache
        // (paginated lists with RV "" go to etcd too: this cache keeps no snapshots to page through)
        const delegate = pred.continue !== "" || (match !== "" && match !== "NotOlderThan") || (pred.limit > 0 && rvText !== "0") ||
          !ready.isReady
        if (delegate) return yield* storage.getList(key, options)
        const rv = yield* parseListResourceVersion(rvText)
        if (rvText === "") {
          // a consistent read: the cache must reach etcd's current RV, else etcd answers
          const current = yield* storage.getCurrentResourceVersion
          const fresh = yield* Effect.either(watchCache.waitUntilFresh(current))
          if (Either.isLeft(fresh)) {
            if (isTooLargeResourceVersion(fresh.left)) return yield* storage.getList(key, options)
            return yield* Effect.fail(fresh.left)
          }
        } else {
          yield* watchCache.waitUntilFresh(rv)
        }
        // RV "0" with a limit: the cache ignores the limit (cacher.go); otherwise the limit holds, no continue
        return fromCache(k, recursive, { ...pred, limit: 0 })
      })

    const get: StorageService["get"] = (key, options = {}) =>
      Effect.gen(function*() {
        const rvText = options.resourceVersion ?? ""
        if (rvText === "" || !ready.isReady) return yield* storage.get(key, options)
        const k = yield* prepare(key, false)
        const rv = yield* parseListResourceVersion(rvText)
        yield* watchCache.waitUntilFresh(rv)
        const el = watchCache.store.get(k)
        if (el === undefined) {
          if (options.ignoreNotFound === true) return undefined
          return yield* Effect.fail(newNotFound(gr, k.slice(k.lastIndexOf("/") + 1)))
        }
        return el.object
      })

    const guaranteedUpdate: StorageService["guaranteedUpdate"] = (key, options) =>
      Effect.suspend(() => {
        // the cached object saves a read when it is current (the store retries when it is not)
        const cached = options.cachedExistingObject ?? watchCache.store.get(key)?.object
        return storage.guaranteedUpdate(key, cached === undefined ? options : { ...options, cachedExistingObject: cached })
      })

    const internals: CacherInternals = {
      watchCache,
      ready,
      watcherCount: () => watchers.size,
      terminatedCount: () => terminated
    }

    return {
      create: storage.create,
      delete: storage.delete,
      watch,
      get,
      getList,
      guaranteedUpdate,
      stats: storage.stats,
      readinessCheck: Effect.suspend(() => (ready.isReady ? storage.readinessCheck : Effect.fail(ready.notReady()))),
      requestWatchProgress: storage.requestWatchProgress,
      getCurrentResourceVersion: storage.getCurrentResourceVersion,
      compactRevision: storage.compactRevision,
      internals
    }
  })

/**
 * The Cacher as a Layer: it takes the `Storage` underneath and provides a `Storage` (and its
 * internals), so a program turns the watch cache on by adding this layer.
 */
export const layer = (config: CacherConfig): Layer.Layer<Storage | CacherInternalsTag, never, Storage> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const storage = yield* Storage
      const cacher = yield* make(storage, config)
      return Context.make(Storage, cacher).pipe(Context.add(CacherInternalsTag, cacher.internals))
    })
  )

export const Cacher = { make, layer } as const
