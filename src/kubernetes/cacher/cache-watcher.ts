/**
 * cacher/cache_watcher.go (seed 002): one client watch served from the watch cache. The dispatcher
 * puts events into its bounded input (non-blocking first; blocking only within the dispatch time
 * budget); the consumer's stream replays the initial interval, then converts each queued event
 * for this watcher: the filter decides ADDED / MODIFIED / DELETED from the object and the object
 * before it, and only events newer than the last one processed go out. A watcher that cannot keep
 * up is terminated: its stream simply ends (no ERROR), and the client re-watches from its last RV.
 *
 * There is no fiber per watcher: the dispatcher offers synchronously, the consumer converts as it
 * pulls. The input queue holds input + result capacity of upstream (2 × chanSize).
 */
import { Effect, Queue, Stream } from "effect"
import type { KubeObject } from "../api/object-meta.js"
import { bookmark, type WatchEvent } from "../api/watch-event.js"
import type { Attrs } from "../storage/selection-predicate.js"
import type { WatchCacheEvent } from "./watch-cache-event.js"
import { EVENT_FRESH_MS } from "./watch-cache.js"

/** minWatchChanSize, maxWatchChanSizeWithIndexAndTrigger, …WithIndexWithoutTrigger, …WithoutIndex */
export const MIN_WATCH_CHAN_SIZE = 10
export const MAX_CHAN_SIZE_INDEX_AND_TRIGGER = 10
export const MAX_CHAN_SIZE_INDEX_NO_TRIGGER = 1000
export const MAX_CHAN_SIZE_NO_INDEX = 100

/** suggestedWatchChannelSize: min(max(ceil(capacity / window_seconds), 10), cap) */
export const suggestedWatchChannelSize = (capacity: number, indexExists: boolean, triggerUsed: boolean): number => {
  const cap = indexExists && triggerUsed
    ? MAX_CHAN_SIZE_INDEX_AND_TRIGGER
    : indexExists
    ? MAX_CHAN_SIZE_INDEX_NO_TRIGGER
    : MAX_CHAN_SIZE_NO_INDEX
  return Math.min(Math.max(Math.ceil(capacity / (EVENT_FRESH_MS / 1000)), MIN_WATCH_CHAN_SIZE), cap)
}

/** defaultBookmarkFrequency */
export const BOOKMARK_FREQUENCY_MS = 60_000

export type WatcherFilter = (key: string, attrs: Attrs, obj: KubeObject) => boolean

export type BookmarkState = "WaitingForBookmark" | "BookmarkReceived" | "BookmarkSent"

let nextId = 0

export class CacheWatcher {
  readonly id = nextId++
  readonly queue: Queue.Queue<WatchCacheEvent>
  /** the RV of the last event this watcher processed (sent or filtered out) */
  private lastProcessed: bigint
  /** the RV of the last bookmark sent (-1: none) */
  private lastBookmark = -1n
  private state: BookmarkState
  /** when the dispatcher should next give it a bookmark (ms) */
  nextBookmarkTime: number
  terminated = false
  stopped = false

  constructor(
    readonly chanSize: number,
    private readonly filter: WatcherFilter,
    startRV: bigint,
    readonly allowWatchBookmarks: boolean,
    /** the end bookmark is owed until an RV ≥ this is bookmarked (0: none owed) */
    private readonly bookmarkAfterRV: bigint,
    private readonly typeMeta: { readonly apiVersion?: string; readonly kind?: string },
    now: number,
    /** the scope the dispatcher indexes it by */
    readonly namespace: string,
    readonly name: string,
    readonly triggerValue: string | undefined,
    private readonly bookmarkFrequencyMs = BOOKMARK_FREQUENCY_MS
  ) {
    this.queue = Effect.runSync(Queue.bounded<WatchCacheEvent>(2 * chanSize))
    this.lastProcessed = startRV
    this.state = bookmarkAfterRV === 0n ? "BookmarkSent" : "WaitingForBookmark"
    this.nextBookmarkTime = now + bookmarkFrequencyMs
  }

  /** nonblockingAdd: true if queued (a BOOKMARK below the owed RV is dropped, as upstream) */
  nonblockingAdd(e: WatchCacheEvent): boolean {
    if (this.stopped) return true
    if (e.type === "BOOKMARK" && !this.allowWatchBookmarks) return true
    return Queue.unsafeOffer(this.queue, e)
  }

  /** add: waits for room; the caller bounds the wait with the dispatch budget */
  add(e: WatchCacheEvent): Effect.Effect<boolean> {
    return this.stopped ? Effect.succeed(true) : Queue.offer(this.queue, e)
  }

  /** nextBookmarkTime once served: while an end bookmark is still owed, at every tick */
  scheduleNextBookmark(now: number): void {
    this.nextBookmarkTime = this.state === "BookmarkSent" || this.state === "BookmarkReceived" ? now + this.bookmarkFrequencyMs : now
  }

  /** stop / forget: the stream ends after what it is reading now; nothing more is queued */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    Effect.runSync(Queue.shutdown(this.queue))
  }

  /** convertToWatchEvent + the process loop's "only newer than the last processed RV" rule */
  convert(e: WatchCacheEvent): WatchEvent | undefined {
    if (e.type === "BOOKMARK") {
      // a periodic bookmark with no progress since the last one is suppressed: bookmarks never repeat or go back
      if (e.resourceVersion < this.lastProcessed) return undefined
      if (e.resourceVersion === this.lastBookmark) return undefined
      this.lastBookmark = e.resourceVersion
      const owed = this.state !== "BookmarkSent" && this.bookmarkAfterRV !== 0n && e.resourceVersion >= this.bookmarkAfterRV
      this.lastProcessed = e.resourceVersion
      if (this.bookmarkAfterRV === 0n || owed) this.state = "BookmarkSent"
      return bookmark(e.resourceVersion, owed, this.typeMeta)
    }
    if (e.resourceVersion <= this.lastProcessed) return undefined
    this.lastProcessed = e.resourceVersion
    const curPasses = e.type !== "DELETED" && this.filter(e.key, e.attrs, e.object)
    const oldPasses = e.prevObject !== undefined && this.filter(e.key, e.prevAttrs!, e.prevObject)
    if (curPasses && !oldPasses) return { type: "ADDED", object: e.object }
    if (curPasses) return { type: "MODIFIED", object: e.object }
    if (oldPasses) {
      // the last state this watcher could see, at the deletion's (or the update's) RV
      return { type: "DELETED", object: { ...e.prevObject!, metadata: { ...e.prevObject!.metadata, resourceVersion: e.resourceVersion.toString() } } }
    }
    return undefined
  }

  /**
   * The watch as its consumer sees it: the initial events, the end bookmark if owed right away,
   * then the queue as it fills. Ends when the watcher is stopped or terminated.
   */
  stream(initial: ReadonlyArray<WatchEvent>, endBookmark: bigint | undefined): Stream.Stream<WatchEvent> {
    const head = endBookmark === undefined
      ? initial
      : [...initial, bookmark(endBookmark, true, this.typeMeta)]
    if (endBookmark !== undefined) {
      this.state = "BookmarkSent"
      this.lastBookmark = endBookmark
      if (endBookmark > this.lastProcessed) this.lastProcessed = endBookmark
    }
    const live = Stream.fromQueue(this.queue, { maxChunkSize: 128 }).pipe(
      Stream.mapChunks((chunk) => {
        const out: Array<WatchEvent> = []
        for (const e of chunk) {
          const w = this.convert(e)
          if (w !== undefined) out.push(w)
        }
        return out.length === 0 ? (emptyChunk as never) : chunkOf(out)
      })
    )
    return Stream.concat(Stream.fromIterable(head), live)
  }
}

import { Chunk } from "effect"
const emptyChunk = Chunk.empty<WatchEvent>()
const chunkOf = (xs: Array<WatchEvent>) => Chunk.unsafeFromArray(xs)
