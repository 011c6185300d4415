/**
 * cacher/watch_cache.go + watch_cache_history.go: the current state of one resource (a store of
 * objects with their selectable attributes) plus a ring of recent events, and the cache's
 * resourceVersion. The reflector feeds it (Replace, Add/Update/Delete as storage events,
 * UpdateResourceVersion on bookmarks); watchers read intervals from it.
 *
 * JS runs one thing at a time, so the watchCache lock is the synchronous method: a watcher takes
 * its interval and registers in the same step, and no event can land in between.
 */
import { Context, Deferred, Duration, Effect, FiberId, Layer, Metric } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import { newResourceExpired, newTooLargeResourceVersion, newInternalError, type StatusError } from "../api/status.js"
import { type AttrFunc, type Attrs, defaultAttrs } from "../storage/selection-predicate.js"
import { CacherConfig, resourcePrefixOf } from "./config.js"
import { OrderedStore, sortedByKey } from "./ordered-store.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"

/** defaultLowerBoundCapacity / defaultUpperBoundCapacity (watch_cache_history.go) */
export const LOWER_BOUND_CAPACITY = 100
export const UPPER_BOUND_CAPACITY = 100 * 1024
/** eventFreshDuration: bookmark frequency (1 min) + 15 s */
export const EVENT_FRESH_MS = 75_000
/** blockTimeout: how long a read waits for the cache to catch up */
export const BLOCK_TIMEOUT = Duration.seconds(3)
/** resourceVersionTooHighRetrySeconds */
export const TOO_HIGH_RETRY_SECONDS = 1

export interface StoreElement {
  readonly key: string
  readonly object: KubeObject
  readonly attrs: Attrs
}

interface Waiter {
  readonly rv: bigint
  readonly done: Deferred.Deferred<void>
}

/** What a new watcher replays first: a snapshot (sorted by key) or the events after its RV. */
export type Interval =
  | { readonly _tag: "Snapshot"; readonly elements: ReadonlyArray<StoreElement>; readonly resourceVersion: bigint }
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<WatchCacheEvent>; readonly resourceVersion: bigint }

/** watch_cache.go's watchCache as the Cacher's parts see it: read-only state and its operations. */
export interface WatchCacheShape {
  /** the ring's capacity: it grows and shrinks by the 75 s rule */
  readonly capacity: number
  /** the RV of the last Replace (relist) */
  readonly listResourceVersion: bigint
  readonly resourceVersion: bigint
  readonly store: ReadonlyMap<string, StoreElement>
  /** changes with every change of the store (an event or a relist): what was read from it is stale */
  readonly generation: number
  /** events held in the ring */
  readonly size: number
  /** how many readers wait for freshness (the progress requester runs while > 0) */
  readonly waiting: number
  /** Replace: the store from a relist at `rv`, the ring emptied */
  replace(objects: ReadonlyArray<KubeObject>, rv: bigint): void
  /** an event from the reflector: into the ring and the store */
  processEvent(type: "ADDED" | "MODIFIED" | "DELETED", object: KubeObject, rv: bigint): WatchCacheEvent
  /** a bookmark or progress notification: the cache is at `rv` */
  updateResourceVersion(rv: bigint): void
  /** the events after `rv`, or the store when the ring does not reach back (a 410 below both) */
  eventsSince(rv: bigint): Interval | StatusError
  /** etcd compacted at `rev`: no list snapshot below it */
  compact(rev: bigint): void
  /** the store as of `rv` (within the ring), optionally under a key prefix */
  snapshotAt(rv: bigint, prefix?: string): Interval | StatusError
  /** the store now, optionally under a key prefix */
  snapshot(prefix?: string): Extract<Interval, { readonly _tag: "Snapshot" }>
  /** returns once the cache is at `rv` or beyond; 504 "Too large resource version" after 3 s */
  waitUntilFresh(rv: bigint): Effect.Effect<void, StatusError>
}

/** A watch cache (the WatchCache layer builds one per Cacher; tests build their own). */
export const makeWatchCache = (
  keyFunc: (obj: KubeObject) => string,
  getAttrs: AttrFunc,
  now: () => number,
  upperBound = UPPER_BOUND_CAPACITY,
  onResize: (from: number, to: number) => void = () => {}
): WatchCacheShape => new WatchCacheState(keyFunc, getAttrs, now, upperBound, onResize)

class WatchCacheState implements WatchCacheShape {
  /** the ring: events[head, events.length) are live; capacity grows and shrinks by the 75 s rule */
  private events: Array<WatchCacheEvent> = []
  private head = 0
  capacity = LOWER_BOUND_CAPACITY
  private removedEventSinceRelist = false
  /** the last etcd compaction the cache was told of: no list snapshot below it */
  private compactedRevision = 0n
  /** the RV of the last Replace (relist) */
  listResourceVersion = 0n
  resourceVersion = 0n
  readonly store = new Map<string, StoreElement>()
  /** changes with every change of the store (an event or a relist): what was read from it is stale */
  generation = 0
  /** the store's elements in key order: a snapshot of a prefix without a walk and a sort */
  private readonly order = new OrderedStore<StoreElement>()
  private waiters = new Set<Waiter>()

  constructor(
    private readonly keyFunc: (obj: KubeObject) => string,
    private readonly getAttrs: AttrFunc,
    private readonly now: () => number,
    private readonly upperBound = UPPER_BOUND_CAPACITY,
    /** told of every resize, old and new capacity (doCacheResizeLocked's RecordsWatchCacheCapacityChange) */
    private readonly onResize: (from: number, to: number) => void = () => {}
  ) {}

  get size(): number {
    return this.events.length - this.head
  }

  /** how many readers wait for freshness (the progress requester runs while > 0) */
  get waiting(): number {
    return this.waiters.size
  }

  private setResourceVersion(rv: bigint): void {
    if (rv <= this.resourceVersion) return
    this.resourceVersion = rv
    for (const w of this.waiters) {
      if (w.rv <= rv) {
        this.waiters.delete(w)
        Deferred.unsafeDone(w.done, Effect.void)
      }
    }
  }

  /** Replace: a relist. The store becomes exactly `objects`; the ring is emptied. */
  replace(objects: ReadonlyArray<KubeObject>, rv: bigint): void {
    this.store.clear()
    for (const o of objects) {
      const key = this.keyFunc(o)
      this.store.set(key, { key, object: o, attrs: this.getAttrs(o) })
    }
    this.order.reset(this.store.values())
    this.generation++
    this.events = []
    this.head = 0
    this.removedEventSinceRelist = false
    this.listResourceVersion = rv
    this.resourceVersion = 0n
    this.setResourceVersion(rv)
  }

  /** processEvent: record a storage event; returns what the dispatcher sends to watchers. */
  processEvent(type: "ADDED" | "MODIFIED" | "DELETED", object: KubeObject, rv: bigint): WatchCacheEvent {
    const key = this.keyFunc(object)
    const prev = this.store.get(key)
    const attrs = this.getAttrs(object)
    const event: WatchCacheEvent = {
      type,
      key,
      object,
      attrs,
      prevObject: prev?.object,
      prevAttrs: prev?.attrs,
      resourceVersion: rv,
      recordTime: this.now()
    }
    this.updateCache(event)
    if (type === "DELETED") {
      if (this.store.delete(key)) this.order.delete(key)
    } else {
      const el: StoreElement = { key, object, attrs }
      this.store.set(key, el)
      this.order.set(el)
    }
    this.generation++
    this.setResourceVersion(rv)
    return event
  }

  /** UpdateResourceVersion: a storage bookmark moves the cache's RV without an event. */
  updateResourceVersion(rv: bigint): void {
    this.setResourceVersion(rv)
  }

  private updateCache(event: WatchCacheEvent): void {
    this.resize(event.recordTime)
    if (this.size >= this.capacity) {
      this.head++
      this.removedEventSinceRelist = true
      if (this.head > 1024 && this.head * 2 > this.events.length) {
        this.events = this.events.slice(this.head)
        this.head = 0
      }
    }
    this.events.push(event)
  }

  /** resizeCacheLocked: grow ×2 while the whole ring is younger than 75 s; shrink ×2 when its newest quarter is older. */
  private resize(eventTime: number): void {
    if (this.size < this.capacity) return
    const oldest = this.events[this.head]!
    if (eventTime - oldest.recordTime < EVENT_FRESH_MS) {
      const grown = Math.min(this.capacity * 2, this.upperBound)
      if (grown > this.capacity) this.setCapacity(grown)
      return
    }
    const quarter = this.events[this.events.length - Math.floor(this.capacity / 4)]
    if (
      quarter !== undefined &&
      eventTime - quarter.recordTime > EVENT_FRESH_MS &&
      this.capacity > LOWER_BOUND_CAPACITY
    ) {
      const shrunk = Math.max(Math.floor(this.capacity / 2), LOWER_BOUND_CAPACITY)
      this.setCapacity(shrunk)
      const drop = this.size - shrunk
      if (drop > 0) {
        this.head += drop
        this.removedEventSinceRelist = true
      }
    }
  }

  private setCapacity(capacity: number): void {
    const from = this.capacity
    this.capacity = capacity
    this.onResize(from, capacity)
  }

  /** The events a watch from `rv` replays (getAllEventsSinceLocked), or 410 when they are gone. */
  eventsSince(rv: bigint): Interval | StatusError {
    const size = this.size
    if (size === 0 && this.listResourceVersion === 0n)
      return newInternalError("watch cache isn't correctly initialized")
    const oldest =
      this.listResourceVersion > 0n && !this.removedEventSinceRelist
        ? this.listResourceVersion + 1n
        : size > 0
          ? this.events[this.head]!.resourceVersion
          : this.resourceVersion + 1n
    if (rv < oldest - 1n) return newResourceExpired(`too old resource version: ${rv} (${oldest - 1n})`)
    // binary search for the first event newer than rv
    let lo = this.head
    let hi = this.events.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.events[mid]!.resourceVersion <= rv) lo = mid + 1
      else hi = mid
    }
    return { _tag: "Events", events: this.events.slice(lo), resourceVersion: this.resourceVersion }
  }

  /**
   * Compact(rev): forget the events at or below `rev` (what the apiserver does when etcd compacts
   * with the watch cache's snapshots on): a watch from before it then gets 410 from the cache too.
   */
  compact(rev: bigint): void {
    if (rev > this.compactedRevision) this.compactedRevision = rev
    while (this.head < this.events.length && this.events[this.head]!.resourceVersion <= rev) {
      this.head++
      this.removedEventSinceRelist = true
    }
    if (this.listResourceVersion <= rev) this.removedEventSinceRelist = true
  }

  /**
   * The state at `rv` (the list snapshot of ListFromCacheSnapshot), sorted by key, optionally under
   * a key prefix: the current store with the ring's events after `rv` undone, newest first. Any RV
   * from the oldest the ring can serve a watch from up to the cache's own is servable; older is
   * 410 "too old resource version: N" (the caller may ask etcd instead).
   */
  snapshotAt(rv: bigint, prefix?: string): Interval | StatusError {
    // etcd compacted past it: the snapshots below the compaction are gone (snapshots.RemoveLess)
    if (rv < this.compactedRevision) return newResourceExpired(`too old resource version: ${rv}`)
    if (rv >= this.resourceVersion) return this.snapshot(prefix)
    const since = this.eventsSince(rv)
    if (since._tag !== "Events") return newResourceExpired(`too old resource version: ${rv}`)
    const state = new Map<string, StoreElement>()
    for (const e of this.store.values()) if (prefix === undefined || e.key.startsWith(prefix)) state.set(e.key, e)
    for (let i = since.events.length - 1; i >= 0; i--) {
      const e = since.events[i]!
      if (prefix !== undefined && !e.key.startsWith(prefix)) continue
      if (e.prevObject === undefined) state.delete(e.key)
      else state.set(e.key, { key: e.key, object: e.prevObject, attrs: e.prevAttrs! })
    }
    return { _tag: "Snapshot", elements: sortedByKey(state.values()), resourceVersion: rv }
  }

  /** The current state as a list sorted by key, optionally under a key prefix. */
  snapshot(prefix?: string): Extract<Interval, { readonly _tag: "Snapshot" }> {
    return { _tag: "Snapshot", elements: this.order.withPrefix(prefix), resourceVersion: this.resourceVersion }
  }

  /**
   * waitUntilFreshLocked: returns once the cache is at `rv` or beyond; after 3 s fails with
   * "Too large resource version" (retry after 1 s).
   */
  waitUntilFresh(rv: bigint): Effect.Effect<void, StatusError> {
    return Effect.suspend(() => {
      if (rv === 0n || rv <= this.resourceVersion) return Effect.void
      const done = Deferred.unsafeMake<void>(FiberId.none)
      const waiter: Waiter = { rv, done }
      this.waiters.add(waiter)
      return Deferred.await(done).pipe(
        Effect.timeoutFail({
          duration: BLOCK_TIMEOUT,
          onTimeout: () => newTooLargeResourceVersion(rv, this.resourceVersion, TOO_HIGH_RETRY_SECONDS)
        }),
        Effect.ensuring(Effect.sync(() => this.waiters.delete(waiter)))
      )
    })
  }
}

/**
 * The apiserver's capacity metrics (cacher/metrics/metrics.go), under its names: the gauge and the
 * two counters have a subsystem and no namespace, so no `apiserver_` prefix. The gauge holds the
 * capacity from the moment the cache exists (newWatchCache sets it) and follows every resize.
 */
const capacityGauge = Metric.gauge("watch_cache_capacity", {
  description: "Total capacity of watch cache broken by resource type."
})
const capacityIncreases = Metric.counter("watch_cache_capacity_increase_total", {
  description: "Total number of watch cache capacity increase events broken by resource type."
})
const capacityDecreases = Metric.counter("watch_cache_capacity_decrease_total", {
  description: "Total number of watch cache capacity decrease events broken by resource type."
})

/** The Cacher's watch cache as a service (one per Cacher: its layer is built in the Cacher's). */
export class WatchCache extends Context.Tag("etcd-effect/kubernetes/cacher/WatchCache")<WatchCache, WatchCacheShape>() {
  static readonly layer: Layer.Layer<WatchCache, never, CacherConfig> = Layer.effect(
    WatchCache,
    Effect.gen(function* () {
      const config = yield* CacherConfig
      const clock = yield* Effect.clock
      const prefix = resourcePrefixOf(config)
      const keyFunc =
        config.keyFunc ??
        ((o: KubeObject) => prefix + (o.metadata.namespace ? `${o.metadata.namespace}/` : "") + (o.metadata.name ?? ""))
      const tagged = <T extends Metric.Metric<any, any, any>>(m: T) =>
        m.pipe(
          Metric.tagged("group", config.groupResource.group),
          Metric.tagged("resource", config.groupResource.resource)
        ) as T
      const gauge = tagged(capacityGauge)
      const increases = tagged(capacityIncreases)
      const decreases = tagged(capacityDecreases)
      const watchCache = makeWatchCache(
        keyFunc,
        config.getAttrs ?? defaultAttrs,
        () => clock.unsafeCurrentTimeMillis(),
        config.upperBoundCapacity ?? UPPER_BOUND_CAPACITY,
        // a resize is rare (the ring doubles or halves), so the registry lookup per call is fine
        (from, to) => {
          gauge.unsafeUpdate(to, [])
          ;(to > from ? increases : decreases).unsafeUpdate(1, [])
        }
      )
      yield* Metric.set(gauge, watchCache.capacity)
      return watchCache
    })
  )
}
