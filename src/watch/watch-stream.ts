/**
 * etcd's mvcc watchStream (watcher.go): one per client stream. Its watchers share one bounded
 * channel (a Mailbox of capacity chanBufLen) that the server's send loop drains with `takeAll`.
 * Ids are allocated here; the watchable store does the rest. A stream is a scoped resource: closing
 * its scope cancels its watchers and ends the channel.
 */
import { type Chunk, Effect, type Mailbox, Option } from "effect"
import { isCreate, type KeyValue } from "../mvcc/key-value.js"
import { TRACE_PUT_EVENT, traceStamp } from "../debug/put-event-trace.js"
import { WatchError } from "./errors.js"
import { WatchIdMap } from "./watch-id-map.js"
import {
  AutoWatchId,
  filterMask,
  keyString,
  ProgressAllWatchId,
  type FilterType,
  type ResponseSink,
  toWatchId,
  type WatchId,
  type Watcher,
  type WatchResponse
} from "./watcher.js"

/** A Watch call (mvcc.WatchStream.Watch arguments). */
export interface WatchRequest {
  /** 0 or absent: allocate one (auto ids count from 0, skipping ids in use) */
  readonly id?: WatchId | undefined
  readonly key: Uint8Array
  /** absent: the single key; empty: every key >= key (from-key); otherwise [key, end) */
  readonly end?: Uint8Array | undefined
  /** 0 or absent: events after the current revision; otherwise events from it, inclusive */
  readonly startRev?: number | undefined
  readonly filters?: ReadonlyArray<FilterType> | undefined
  /** kept for the server, which attaches prev_kv at send time (see attachPrevKv) */
  readonly prevKv?: boolean | undefined
}

/** A watch stream (etcd's mvcc.WatchStream): watchers created and canceled on it, their responses on one channel. */
export interface WatchStream {
  /** Watch: registers a watcher and returns its id. */
  readonly watch: (req: WatchRequest) => Effect.Effect<WatchId, WatchError>
  /**
   * Watch as a plain call (a WatchError is thrown): the server's recv takes it when present, so a
   * create costs no Effect (an Effect per create was most of the garbage of creating idle watchers).
   */
  readonly unsafeWatch?: (req: WatchRequest) => WatchId
  /** Cancel: removes a watcher; unknown ids fail with "mvcc: watcher does not exist". */
  readonly cancel: (id: WatchId) => Effect.Effect<void, WatchError>
  /** Cancel as a plain call: false for an unknown id. */
  readonly unsafeCancel?: (id: WatchId) => boolean
  /** RequestProgress: a progress response for `id`, only when it is synced and the store reached its start. */
  readonly requestProgress: (id: WatchId) => Effect.Effect<void>
  /** RequestProgress as a plain call (the server's progress ticker, a timer callback) */
  readonly unsafeRequestProgress: (id: WatchId) => void
  /**
   * RequestProgressAll: one response with watch id -1 when EVERY watcher of the stream is synced
   * (and none waits for a future start revision); otherwise nothing is sent and false is returned.
   */
  readonly requestProgressAll: Effect.Effect<boolean>
  /** Waits for at least one response and takes every buffered one; done=true once the stream is closed. */
  readonly takeAll: Effect.Effect<readonly [responses: Chunk.Chunk<WatchResponse>, done: boolean]>
  /** responses buffered in the channel (0 once closed) */
  readonly chanLen: () => number
  /** whether the watcher asked for prev_kv (false for unknown ids) */
  readonly prevKv: (id: WatchId) => boolean
  /** the ids of the live watchers of this stream */
  readonly ids: () => ReadonlyArray<WatchId>
  /** Close: cancels every watcher and ends the channel (also done by closing the stream's scope). */
  readonly close: Effect.Effect<void>
  /** Close as a plain call (the server's stream ends from a transport callback) */
  readonly unsafeClose: () => void
  /** Rev: the store's current revision. */
  readonly rev: () => number
}

/** What a stream needs from its watchable store (etcd's `watchable` interface). @internal */
export interface Watchable {
  readonly rev: () => number
  readonly watch: (
    key: string,
    end: string | undefined,
    startRev: number,
    id: WatchId,
    filter: number,
    prevKv: boolean,
    sink: ResponseSink
  ) => Watcher
  readonly cancelWatcher: (w: Watcher) => void
  readonly progressIfSync: (watchers: Iterable<Watcher>, responseId: WatchId) => boolean
  /** pending-events gauge: events offered to channels and not yet taken */
  readonly addPending: (n: number) => void
  /** events handed to the send loops (etcd's events_total) */
  readonly addReceived: (n: number) => void
  readonly streamClosed: (s: WatchStreamImpl) => void
}

/**
 * Methods live on the prototype (no per-stream closures): a server may hold 100k streams.
 * @internal
 */
export class WatchStreamImpl implements WatchStream, ResponseSink {
  /** by id: an array slot for the ids this stream allocates (8 B a watcher instead of a Map entry) */
  private readonly watchers = new WatchIdMap<Watcher>()
  private nextId = 0
  private closed = false
  /** events in the channel */
  private pending = 0

  constructor(
    private readonly store: Watchable,
    private readonly chan: Mailbox.Mailbox<WatchResponse>
  ) {}

  /** an offer was refused and nothing was taken since (the channel is full or closed) */
  refusing = false

  offer(response: WatchResponse): boolean {
    if (this.refusing) return false
    if (!this.chan.unsafeOffer(response)) {
      this.refusing = true
      return false
    }
    const n = response.events.length
    if (TRACE_PUT_EVENT && n !== 0) traceStamp("offered", response.revision)
    if (n !== 0) {
      this.pending += n
      this.store.addPending(n)
    }
    return true
  }

  rev(): number {
    return this.store.rev()
  }

  unsafeWatch(req: WatchRequest): WatchId {
    const end = req.end
    // A watch request with 'WithFromKey' has an empty range end; key >= end is an empty range.
    if (end !== undefined && end.byteLength !== 0 && Buffer.compare(req.key, end) >= 0) {
      throw WatchError.of("EmptyRange")
    }
    if (this.closed) throw WatchError.of("StreamClosed")
    const startRev = req.startRev ?? 0
    if (startRev < 0) throw WatchError.of("Compacted")
    let id = req.id === undefined ? AutoWatchId : toWatchId(req.id)
    if (id === AutoWatchId) {
      while (this.watchers.has(this.nextId)) this.nextId++
      id = this.nextId++
    } else if (this.watchers.has(id)) {
      throw WatchError.of("DuplicateId")
    }
    const w = this.store.watch(
      keyString(req.key),
      end === undefined ? undefined : keyString(end),
      startRev,
      id,
      filterMask(req.filters),
      req.prevKv === true,
      this
    )
    this.watchers.set(id, w)
    return id
  }

  watch(req: WatchRequest): Effect.Effect<WatchId, WatchError> {
    return Effect.suspend(() => {
      try {
        return Effect.succeed(this.unsafeWatch(req))
      } catch (e) {
        if (e instanceof WatchError) return Effect.fail(e)
        throw e
      }
    })
  }

  unsafeCancel(rawId: WatchId): boolean {
    const id = toWatchId(rawId)
    const w = this.watchers.get(id)
    if (w === undefined) return false
    this.watchers.delete(id)
    this.store.cancelWatcher(w)
    return true
  }

  cancel(id: WatchId): Effect.Effect<void, WatchError> {
    return Effect.suspend(() => (this.unsafeCancel(id) ? Effect.void : Effect.fail(WatchError.of("NotExist"))))
  }

  requestProgress(id: WatchId): Effect.Effect<void> {
    return Effect.sync(() => this.unsafeRequestProgress(id))
  }

  unsafeRequestProgress(id: WatchId): void {
    const w = this.watchers.get(id)
    if (w !== undefined) this.store.progressIfSync([w], id)
  }

  get requestProgressAll(): Effect.Effect<boolean> {
    return Effect.sync(() => this.store.progressIfSync(this.watchers.values(), ProgressAllWatchId))
  }

  get takeAll(): Effect.Effect<readonly [Chunk.Chunk<WatchResponse>, boolean]> {
    return Effect.map(this.chan.takeAll, (taken) => {
      if (!this.closed) this.refusing = false
      let n = 0
      for (const r of taken[0]) n += r.events.length
      if (n !== 0) {
        this.pending -= n
        this.store.addPending(-n)
        this.store.addReceived(n)
      }
      return taken
    })
  }

  chanLen(): number {
    return Option.getOrElse(this.chan.unsafeSize(), () => 0)
  }

  prevKv(id: WatchId): boolean {
    return this.watchers.get(id)?.prevKv === true
  }

  ids(): ReadonlyArray<WatchId> {
    return this.watchers.keys()
  }

  get watcherCount(): number {
    return this.watchers.size
  }

  unsafeClose(): void {
    if (this.closed) return
    this.closed = true
    for (const w of this.watchers.values()) this.store.cancelWatcher(w)
    this.watchers.clear()
    // Responses still buffered are dropped with the stream: take them out of the gauge.
    if (this.pending !== 0) this.store.addPending(-this.pending)
    this.pending = 0
    // Ends the channel at once (buffered responses are dropped): a waiting takeAll returns done.
    // eslint-disable-next-line no-restricted-properties -- Mailbox.shutdown (drop what is buffered, end now) has no unsafe twin; it is a synchronous state change
    Effect.runSync(this.chan.shutdown)
    this.store.streamClosed(this)
  }

  get close(): Effect.Effect<void> {
    return Effect.sync(() => this.unsafeClose())
  }
}

/**
 * The prev_kv of each event that is not a create: the key's KeyValue at modRevision-1 (undefined when
 * absent or compacted), as etcd's send loop computes it at send time. `getAt` is MvccStore.getAt.
 */
export const attachPrevKv = (
  getAt: (key: Uint8Array, rev: number) => KeyValue | undefined,
  response: WatchResponse
): WatchResponse => {
  if (response.events.length === 0) return response
  const events = response.events.map((ev) => {
    if (isCreate(ev)) return ev
    const prevKv = getAt(ev.kv.key, ev.kv.modRevision - 1)
    return prevKv === undefined ? ev : { ...ev, prevKv }
  })
  return { ...response, events }
}
