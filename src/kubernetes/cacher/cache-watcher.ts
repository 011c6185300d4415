/**
 * cacher/cache_watcher.go (seed 002): one client watch served from the watch cache. The dispatcher
 * puts events into it (non-blocking first; blocking only within the dispatch time budget); the
 * filter decides ADDED / MODIFIED / DELETED from the object and the object before it, and only
 * events newer than the last one processed go out. A watcher that cannot keep up is terminated:
 * its watch simply ends (no ERROR), and the client re-watches from its last RV.
 *
 * There is no fiber per watcher. It has one of two consumers, chosen when it is made:
 * - a sink (the HTTP watch, or any consumer that can take events synchronously): the dispatcher
 *   converts and pushes in its own step; when the sink says it is full, events wait in `pending`
 *   until the sink calls `resume`. This is how tens of thousands of watchers stay cheap.
 * - a queue (the Storage face's `Stream`): the consumer converts as it pulls.
 * Either way the watcher holds at most input + result capacity of upstream (2 × chanSize).
 */
import { Chunk, Effect, Queue, Stream } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import { bookmark, type WatchEvent } from "../api/watch-event.js"
import type { WatchSink } from "../storage/interfaces.js"
import type { Attrs } from "../storage/selection-predicate.js"
import { convertedAs, type WatchCacheEvent } from "./watch-cache-event.js"
import { EVENT_FRESH_MS } from "./watch-cache.js"

/** minWatchChanSize, maxWatchChanSizeWithIndexAndTrigger, …WithIndexWithoutTrigger, …WithoutIndex */
export const MIN_WATCH_CHAN_SIZE = 10
export const MAX_CHAN_SIZE_INDEX_AND_TRIGGER = 10
export const MAX_CHAN_SIZE_INDEX_NO_TRIGGER = 1000
export const MAX_CHAN_SIZE_NO_INDEX = 100

/** suggestedWatchChannelSize: min(max(ceil(capacity / window_seconds), 10), cap) */
export const suggestedWatchChannelSize = (capacity: number, indexExists: boolean, triggerUsed: boolean): number => {
  const cap =
    indexExists && triggerUsed
      ? MAX_CHAN_SIZE_INDEX_AND_TRIGGER
      : indexExists
        ? MAX_CHAN_SIZE_INDEX_NO_TRIGGER
        : MAX_CHAN_SIZE_NO_INDEX
  return Math.min(Math.max(Math.ceil(capacity / (EVENT_FRESH_MS / 1000)), MIN_WATCH_CHAN_SIZE), cap)
}

/** defaultBookmarkFrequency */
export const BOOKMARK_FREQUENCY_MS = 60_000

export type WatcherFilter = (key: string, attrs: Attrs, obj: KubeObject) => boolean

/** who takes the watcher's events: a queue its stream pulls from (made by the caller, `watcherCapacity` long), or a sink */
export type Consumer =
  | { readonly _tag: "Queue"; readonly queue: Queue.Queue<WatchCacheEvent> }
  | { readonly _tag: "Sink"; readonly sink: WatchSink }

/** input + result buffers of upstream: what a watcher of `chanSize` holds */
export const watcherCapacity = (chanSize: number): number => 2 * chanSize

export interface CacheWatcherOptions {
  readonly chanSize: number
  readonly filter: WatcherFilter
  readonly startRV: bigint
  readonly allowWatchBookmarks: boolean
  readonly typeMeta: { readonly apiVersion?: string; readonly kind?: string }
  readonly now: number
  /** the scope the dispatcher indexes it by */
  readonly namespace: string
  readonly name: string
  readonly triggerValue: string | undefined
  readonly bookmarkFrequencyMs?: number | undefined
  /** when the server ends the watch (ms on the Clock): its last bookmark goes 2 s before */
  readonly deadline?: number | undefined
  readonly consumer: Consumer
}

/** the last bookmark's lead on the watch's deadline (cache_watcher.go: deadline − 2 s) */
export const DEADLINE_BOOKMARK_LEAD_MS = 2000

let nextId = 0

export class CacheWatcher {
  readonly id = nextId++
  readonly chanSize: number
  readonly allowWatchBookmarks: boolean
  readonly namespace: string
  readonly name: string
  readonly triggerValue: string | undefined
  /** queue consumer: what its stream pulls from */
  private readonly queue: Queue.Queue<WatchCacheEvent> | undefined
  /** sink consumer, and what waits while the sink is full */
  private readonly sink: WatchSink | undefined
  private paused = false
  private pending: Array<WatchCacheEvent> = []
  private roomWaiters: Array<() => void> = []
  private readonly filter: WatcherFilter
  private readonly typeMeta: { readonly apiVersion?: string; readonly kind?: string }
  private readonly bookmarkFrequencyMs: number
  private readonly deadline: number | undefined
  /** the RV of the last event this watcher processed (sent or filtered out) */
  private lastProcessed: bigint
  /** the RV of the last bookmark sent (-1: none) */
  private lastBookmark = -1n
  /** when the dispatcher should next give it a bookmark (ms) */
  nextBookmarkTime: number
  terminated = false
  stopped = false

  constructor(o: CacheWatcherOptions) {
    this.chanSize = o.chanSize
    this.filter = o.filter
    this.lastProcessed = o.startRV
    this.allowWatchBookmarks = o.allowWatchBookmarks
    this.typeMeta = o.typeMeta
    this.namespace = o.namespace
    this.name = o.name
    this.triggerValue = o.triggerValue
    this.bookmarkFrequencyMs = o.bookmarkFrequencyMs ?? BOOKMARK_FREQUENCY_MS
    this.deadline = o.deadline
    this.nextBookmarkTime = this.bookmarkTimeAfter(o.now)
    if (o.consumer._tag === "Queue") this.queue = o.consumer.queue
    else this.sink = o.consumer.sink
  }

  /** input + result buffers of upstream */
  get capacity(): number {
    return watcherCapacity(this.chanSize)
  }

  /** nonblockingAdd: true if taken (a BOOKMARK below the owed RV is dropped, as upstream) */
  nonblockingAdd(e: WatchCacheEvent): boolean {
    if (this.stopped) return true
    if (e.type === "BOOKMARK" && !this.allowWatchBookmarks) return true
    if (this.queue !== undefined) return Queue.unsafeOffer(this.queue, e)
    if (this.paused) {
      if (this.pending.length >= this.capacity) return false
      this.pending.push(e)
      return true
    }
    const out = this.convert(e)
    if (out !== undefined && !this.sink!.push([out])) this.paused = true
    return true
  }

  /** add: waits for room; the caller bounds the wait with the dispatch budget */
  add(e: WatchCacheEvent): Effect.Effect<boolean> {
    if (this.queue !== undefined) return this.stopped ? Effect.succeed(true) : Queue.offer(this.queue, e)
    return Effect.async<boolean>((resume) => {
      const retry = () => {
        if (this.stopped || this.nonblockingAdd(e)) resume(Effect.succeed(true))
        else this.roomWaiters.push(retry)
      }
      retry()
      return Effect.sync(() => {
        this.roomWaiters = this.roomWaiters.filter((w) => w !== retry)
      })
    })
  }

  /**
   * The sink took what it had and wants more: push what waited, in order, until it is full
   * again; then let blocked dispatches in.
   */
  resume(): void {
    if (this.sink === undefined || this.stopped) return
    this.paused = false
    let i = 0
    const out: Array<WatchEvent> = []
    while (i < this.pending.length) {
      const w = this.convert(this.pending[i++]!)
      if (w === undefined) continue
      out.push(w)
      if (out.length >= this.chanSize) {
        if (!this.sink.push(out.splice(0))) {
          this.paused = true
          break
        }
      }
    }
    if (!this.paused && out.length > 0 && !this.sink.push(out)) this.paused = true
    this.pending = i === this.pending.length ? [] : this.pending.slice(i)
    if (this.roomWaiters.length > 0 && this.pending.length < this.capacity) {
      const waiters = this.roomWaiters
      this.roomWaiters = []
      for (const w of waiters) w()
    }
  }

  /**
   * cacheWatcher.nextBookmarkTime: a minute on, or 2 s before the watch's deadline if that is
   * sooner; none once that time has passed (Infinity). Upstream also gives a watcher a bookmark at
   * every tick while its watch-list end bookmark is owed; here the end bookmark goes out when
   * the watch starts (the cache was waited on until fresh first), so it is never owed later.
   */
  private bookmarkTimeAfter(now: number): number {
    let next = now + this.bookmarkFrequencyMs
    if (this.deadline === undefined) return next
    const preTimeout = this.deadline - DEADLINE_BOOKMARK_LEAD_MS
    if (preTimeout < next) next = preTimeout
    return next < now ? Number.POSITIVE_INFINITY : next
  }

  /** after a bookmark tick served it */
  scheduleNextBookmark(now: number): void {
    this.nextBookmarkTime = this.bookmarkTimeAfter(now)
  }

  /** stop / forget: the watch ends after what its consumer has taken; nothing more is queued */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.pending = []
    // eslint-disable-next-line no-restricted-properties -- Queue.shutdown has no unsafe twin; it is a synchronous state change (wakes the stream's take)
    if (this.queue !== undefined) Effect.runSync(Queue.shutdown(this.queue))
    else this.sink!.end()
    const waiters = this.roomWaiters
    this.roomWaiters = []
    for (const w of waiters) w()
  }

  /** convertToWatchEvent + the process loop's "only newer than the last processed RV" rule */
  convert(e: WatchCacheEvent): WatchEvent | undefined {
    if (e.type === "BOOKMARK") {
      // a periodic bookmark with no progress since the last one is suppressed: bookmarks never repeat or go back
      if (e.resourceVersion < this.lastProcessed) return undefined
      if (e.resourceVersion === this.lastBookmark) return undefined
      this.lastBookmark = e.resourceVersion
      this.lastProcessed = e.resourceVersion
      return bookmark(e.resourceVersion, false, this.typeMeta)
    }
    if (e.resourceVersion <= this.lastProcessed) return undefined
    this.lastProcessed = e.resourceVersion
    const curPasses = e.type !== "DELETED" && this.filter(e.key, e.attrs, e.object)
    const oldPasses = e.prevObject !== undefined && this.filter(e.key, e.prevAttrs!, e.prevObject)
    if (curPasses) return convertedAs(e, oldPasses ? "MODIFIED" : "ADDED")
    if (oldPasses) return convertedAs(e, "DELETED")
    return undefined
  }

  /**
   * What the watch starts with: the initial events, then the end bookmark of a watch-list (which
   * is then no longer owed). For a sink they are pushed now, before the watcher is registered.
   */
  begin(initial: ReadonlyArray<WatchEvent>, endBookmark: bigint | undefined): ReadonlyArray<WatchEvent> {
    const head = endBookmark === undefined ? initial : [...initial, bookmark(endBookmark, true, this.typeMeta)]
    if (endBookmark !== undefined) {
      this.lastBookmark = endBookmark
      if (endBookmark > this.lastProcessed) this.lastProcessed = endBookmark
    }
    if (this.sink !== undefined && head.length > 0 && !this.sink.push(head)) this.paused = true
    return head
  }

  /** The queue consumer's watch: the head, then the queue as it fills; ends when stopped. */
  stream(head: ReadonlyArray<WatchEvent>): Stream.Stream<WatchEvent> {
    const live = Stream.fromQueue(this.queue!, { maxChunkSize: 128 }).pipe(
      Stream.mapChunks((chunk) => {
        const out: Array<WatchEvent> = []
        for (const e of chunk) {
          const w = this.convert(e)
          if (w !== undefined) out.push(w)
        }
        return out.length === 0 ? Chunk.empty<WatchEvent>() : Chunk.unsafeFromArray(out)
      })
    )
    return head.length === 0 ? live : Stream.concat(Stream.fromIterable(head), live)
  }
}
