/**
 * etcd's watchableStore (watchable_store.go) as a scoped service over an MvccStore.
 *
 * - Synced path: the store's commit listener (etcd's notify) runs once per committed revision, in
 *   order, as one plain synchronous pass: every synced watcher matching the revision's events gets
 *   one response offered without blocking to its stream's channel; a full channel makes it a victim.
 * - Unsynced path: syncWatchersLoop catches up to maxWatchersPerSync watchers per round from history.
 * - Victims: syncVictimsLoop redelivers held batches every 10 ms while any exist, else waits for a signal.
 *
 * `layerWith` composes three services: `WatcherGroups` (the synced and unsynced groups), `Victims`
 * (with syncVictimsLoop) and the store proper (`layerOver`, with syncWatchersLoop); each can be
 * provided on its own. Each loop is a fiber forked in its layer's scope and supervised: one that dies
 * fails the member's program (src/supervision/fatal.ts). Closing the scope interrupts them, removes the
 * commit listener and closes every open stream. The services are resolved once, when the layer is
 * built; watchers are plain records, never fibers; all group bookkeeping happens inside synchronous
 * sections, which is what etcd's `s.mu` is for.
 */
import { Clock, Context, Duration, Effect, Layer, Mailbox, type Scope } from "effect"
import type { Event } from "../mvcc/key-value.js"
import { supervised } from "../supervision/fatal.js"
import { MvccStore, type MvccStoreShape } from "../mvcc/kv.js"
import { EventBatch, newWatcherBatch, WATCH_BATCH_MAX_REVS } from "./event-batch.js"
import { Victims, type VictimsShape } from "./victims.js"
import { type Watchable, type WatchStream, WatchStreamImpl } from "./watch-stream.js"
import { WatcherGroup } from "./watcher-group.js"
import { WatcherGroups } from "./watcher-groups.js"
import { keyString, type ResponseSink, Watcher, type WatchId, type WatchResponse } from "./watcher.js"

/** etcd's tunables (package vars there, "non-const so modifiable by tests"). */
export interface WatchableStoreConfig {
  /** capacity of each stream's channel (chanBufLen) */
  readonly chanBufLen: number
  /** watchers caught up per sync round (maxWatchersPerSync) */
  readonly maxWatchersPerSync: number
  /** distinct revisions per catch-up response (watchBatchMaxRevs) */
  readonly watchBatchMaxRevs: number
  /** period of the unsynced loop when idle or stuck (watchResyncPeriod) */
  readonly watchResyncPeriod: Duration.DurationInput
  /** victim retry period while victims exist (for the Victims layer `layerWith` builds; `layerOver` uses the one provided) */
  readonly victimRetryPeriod: Duration.DurationInput
  /** revisions read from history per chunk of a sync round (bounds memory and event-loop stalls) */
  readonly historyChunkRevs: number
  /**
   * After a round that made progress with unsynced watchers left: true starts the next round at once
   * (after yielding to I/O); false waits as long as the last round took, as etcd does.
   */
  readonly immediateResync: boolean
}

/** etcd's defaults: 128-event channels, 512 watchers per sync round, 100 ms resync, 10 ms victim retry. */
export const defaultWatchableStoreConfig: WatchableStoreConfig = {
  chanBufLen: 128,
  maxWatchersPerSync: 512,
  watchBatchMaxRevs: WATCH_BATCH_MAX_REVS,
  watchResyncPeriod: Duration.millis(100),
  victimRetryPeriod: Duration.millis(10),
  historyChunkRevs: 1024,
  immediateResync: true
}

/** The watchable store's operations: new watch streams, the store's revision, and the counts its metrics read. */
export interface WatchableStoreShape {
  /** NewWatchStream: a stream whose lifetime is the caller's scope. */
  readonly newWatchStream: Effect.Effect<WatchStream, never, Scope.Scope>
  /** the store's current revision */
  readonly rev: () => number
  /** live watchers (etcd_debugging_mvcc_watcher_total) */
  readonly watcherCount: () => number
  /** open streams (etcd_debugging_mvcc_watch_stream_total) */
  readonly streamCount: () => number
  /** unsynced watchers plus victims (etcd_debugging_mvcc_slow_watcher_total) */
  readonly slowWatcherCount: () => number
  /** events in stream channels not yet taken by a send loop (etcd_debugging_mvcc_pending_events_total) */
  readonly pendingEventsCount: () => number
  /** events taken by send loops so far (etcd_debugging_mvcc_events_total) */
  readonly eventsTotal: () => number
  /** watchers at the store's head (the synced group) */
  readonly syncedWatcherCount: () => number
  /** watchers catching up from history (the unsynced group) */
  readonly unsyncedWatcherCount: () => number
  /** watchers whose events are held for redelivery (victims) */
  readonly victimCount: () => number
  /**
   * One round of the unsynced loop now (etcd's syncWatchers, which its tests call directly);
   * serialised with the loop's own rounds. Returns the number of unsynced watchers left.
   */
  readonly syncWatchers: Effect.Effect<number>
  /** One victim redelivery pass now (etcd's moveVictims). Returns how many were delivered. */
  readonly moveVictims: Effect.Effect<number>
}

/**
 * The watchable store service (etcd's watchableStore): watchers over the mvcc store, fed by its
 * commits and its history.
 */
export class WatchableStore extends Context.Tag("etcd-effect/WatchableStore")<WatchableStore, WatchableStoreShape>() {}

/** Gives I/O callbacks a turn (a macrotask), unlike yieldNow which stays on the microtask queue. */
const yieldToIo: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

const eventKey = (ev: Event): string => keyString(ev.kv.key)

/**
 * One catch-up round over a snapshot of chosen watchers. Each `step` is one synchronous section:
 * it reads the next chunk of history and, when the round is over, settles every watcher in that
 * same section, against the store revision of that section (so no commit can slip in between).
 */
class SyncRound {
  /** batches by representative watcher (see `reps`) */
  private readonly batches = new Map<Watcher, EventBatch>()
  /**
   * Watchers of one key or range with one minRev get the same batch: only the first of them (its
   * representative) is matched against history, and its twins share its batch, read-only, whose
   * events array then reaches the encoder as one array (encoded once, server/watch-wire.ts). A
   * fan-out of 1,000 watchers of a key caught up together did the match, the batch and its array
   * a thousand times per revision.
   */
  private readonly rep = new Map<Watcher, Watcher>()
  private readonly reps = new WatcherGroup()
  private cursor: number
  progressed: boolean

  constructor(
    private readonly store: MvccStoreShape,
    private readonly config: WatchableStoreConfig,
    private readonly chosen: WatcherGroup,
    minRev: number,
    /** the compaction revision `choose` used: watchers still below it are owed its response */
    private readonly compactRev: number,
    compacted: boolean,
    private readonly synced: WatcherGroup,
    private readonly unsynced: WatcherGroup,
    private readonly victims: VictimsShape
  ) {
    this.cursor = minRev
    this.progressed = compacted
    const first = new Map<string, Watcher>()
    for (const w of chosen.watchers) {
      const twin = `${w.minRev} ${w.end === undefined ? "" : `${w.end.length} ${w.end}`} ${w.key}`
      const r = first.get(twin)
      if (r === undefined) {
        first.set(twin, w)
        this.reps.add(w)
      } else this.rep.set(w, r)
    }
  }

  private batchOf(w: Watcher): EventBatch | undefined {
    return this.batches.get(this.rep.get(w) ?? w)
  }

  /** One chunk; true when the round is finished. */
  step(): boolean {
    const store = this.store
    const tip = store.rev()
    // History below a newer compaction may be vanishing: deliver what was read, stop there.
    if (store.compactRevision() > this.cursor) return this.finish(tip, this.cursor)
    const next = this.nextNeeded()
    if (next > tip) return this.finish(tip, tip + 1)
    this.cursor = next
    const chunk = this.config.historyChunkRevs
    const evs = store.eventsBetween(next, tip, chunk)
    newWatcherBatch(this.reps, evs, eventKey, this.config.watchBatchMaxRevs, this.batches)
    let revs = 0
    let last = 0
    for (const ev of evs) {
      if (ev.kv.modRevision !== last) {
        last = ev.kv.modRevision
        revs++
      }
    }
    this.cursor = revs < chunk ? tip + 1 : last + 1
    if (this.cursor > tip) return this.finish(tip, tip + 1)
    return false
  }

  /** The lowest revision a live watcher with room in its batch still needs. */
  private nextNeeded(): number {
    let next = Number.MAX_SAFE_INTEGER
    for (const w of this.chosen.watchers) {
      if (w.state !== "unsynced") continue
      if (this.batchOf(w)?.full === true) continue
      const need = w.minRev > this.cursor ? w.minRev : this.cursor
      if (need < next) next = need
    }
    return next
  }

  /** Settles the round: `readTo` is the first revision not read (tip+1 when caught up). */
  private finish(tip: number, readTo: number): true {
    for (const w of this.chosen.watchers) {
      // Cancelled during the round, or still owed a compaction response (retried next round). A
      // watcher overtaken by a compaction during the round gets what was read, then that response.
      if (w.state !== "unsynced" || w.minRev < this.compactRev) continue
      const before = w.minRev
      const eb = this.batchOf(w)
      const resume = eb !== undefined && eb.moreRev !== 0 ? eb.moreRev : readTo
      if (resume > w.minRev) w.minRev = resume
      if (eb !== undefined && eb.evs.length > 0) {
        if (!w.send(eb.evs, tip)) {
          this.unsynced.delete(w)
          this.victims.add(w, eb)
          this.progressed = true
          continue
        }
      }
      if (w.minRev > tip) {
        this.unsynced.delete(w)
        w.state = "synced"
        this.synced.add(w)
        this.progressed = true
      } else {
        this.unsynced.requeue(w)
        if (w.minRev > before) this.progressed = true
      }
    }
    return true
  }
}

export const make = (
  options: Partial<WatchableStoreConfig> = {}
): Effect.Effect<WatchableStoreShape, never, MvccStore | WatcherGroups | Victims | Scope.Scope> =>
  Effect.gen(function* () {
    const config: WatchableStoreConfig = { ...defaultWatchableStoreConfig, ...options }
    const store = yield* MvccStore
    const { synced, unsynced } = yield* WatcherGroups
    const victims = yield* Victims
    const streams = new Set<WatchStreamImpl>()
    let watchers = 0
    let pendingEvents = 0
    let eventsTotal = 0

    // notify: the synced path, one synchronous pass per committed revision.
    const notify = (rev: number, events: ReadonlyArray<Event>): void => {
      if (synced.size === 0 || events.length === 0) return
      let slow: Array<Watcher> | undefined
      let slowBatches: Array<EventBatch> | undefined
      /** the batch held by every victim that missed the whole revision (shared, read-only) */
      let whole: EventBatch | undefined
      const deliver = (w: Watcher, evs: ReadonlyArray<Event>): void => {
        if (!w.send(evs, rev)) {
          ;(slow ??= []).push(w)
          ;(slowBatches ??= []).push(evs === events ? (whole ??= EventBatch.of(evs)) : EventBatch.of(evs))
        }
        // Always, even on failure: the held batch carries this revision (etcd #15271).
        w.minRev = rev + 1
      }
      if (events.length === 1) {
        synced.forEachMatch(eventKey(events[0]!), (w) => {
          if (rev >= w.minRev) deliver(w, events)
        })
      } else {
        for (const [w, eb] of newWatcherBatch(synced, events, eventKey, config.watchBatchMaxRevs)) {
          // Every event matched: share the store's array (events are immutable).
          deliver(w, eb.evs.length === events.length ? events : eb.evs)
        }
      }
      if (slow !== undefined) {
        // Group changes after the walk: the interval tree must not change under a stab.
        for (let i = 0; i < slow.length; i++) {
          const w = slow[i]!
          synced.delete(w)
          victims.add(w, slowBatches![i]!)
        }
      }
    }

    // Rounds span yields: one at a time, whether the loop or a direct call runs it.
    const roundLock = yield* Effect.makeSemaphore(1)
    const syncRound: Effect.Effect<boolean> = Effect.gen(function* () {
      const curRev = store.rev()
      const compactRev = store.compactRevision()
      const { group, minRev, compacted } = unsynced.choose(config.maxWatchersPerSync, curRev, compactRev)
      if (group.size === 0) return compacted > 0
      const round = new SyncRound(store, config, group, minRev, compactRev, compacted > 0, synced, unsynced, victims)
      while (!round.step()) yield* yieldToIo
      return round.progressed
    })
    const syncWatchers = roundLock.withPermits(1)(syncRound)

    const syncWatchersLoop = Effect.gen(function* () {
      const period = Duration.decode(config.watchResyncPeriod)
      while (true) {
        const started = yield* Clock.currentTimeMillis
        const progressed = unsynced.size > 0 ? yield* syncWatchers : false
        if (unsynced.size > 0 && progressed) {
          if (config.immediateResync) yield* yieldToIo
          else yield* Effect.sleep(Duration.millis((yield* Clock.currentTimeMillis) - started))
        } else {
          yield* Effect.sleep(period)
        }
      }
    })

    const watchable: Watchable = {
      rev: store.rev,
      watch: (key, end, startRev, id, filter, prevKv, sink: ResponseSink) => {
        const curRev = store.rev()
        const isSynced = startRev > curRev || startRev === 0
        let minRev = startRev
        if (isSynced) {
          minRev = curRev + 1
          if (startRev > minRev) minRev = startRev
        }
        const w = new Watcher(key, end, startRev, minRev, id, filter, prevKv, sink)
        if (isSynced) synced.add(w)
        else {
          w.state = "unsynced"
          unsynced.add(w)
        }
        watchers++
        return w
      },
      cancelWatcher: (w) => {
        switch (w.state) {
          case "synced":
            synced.delete(w)
            break
          case "unsynced":
            unsynced.delete(w)
            break
          case "victim":
            victims.delete(w)
            break
          case "compacted":
            break
          case "canceled":
            return
        }
        w.state = "canceled"
        watchers--
      },
      progressIfSync: (ws: Iterable<Watcher>, responseId: WatchId) => {
        const rev = store.rev()
        let first: Watcher | undefined
        for (const w of ws) {
          if (w.state !== "synced" || rev < w.startRev) return false
          first ??= w
        }
        // A stream without watchers gets no response (etcd sends through its first watcher).
        if (first !== undefined) {
          const progress: WatchResponse = { watchId: responseId, events: [], revision: rev, compactRevision: 0 }
          first.sink.offer(progress)
        }
        return true
      },
      addPending: (n) => {
        pendingEvents += n
      },
      addReceived: (n) => {
        eventsTotal += n
      },
      streamClosed: (s) => {
        streams.delete(s)
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const s of Array.from(streams)) s.unsafeClose()
      })
    )
    // after the finalizer above, so it is removed first: no commit reaches closing streams
    yield* store.subscribeCommits(notify)
    yield* Effect.forkScoped(supervised("watch sync loop", syncWatchersLoop))

    const newWatchStream: Effect.Effect<WatchStream, never, Scope.Scope> = Effect.acquireRelease(
      Effect.map(Mailbox.make<WatchResponse>({ capacity: config.chanBufLen, strategy: "suspend" }), (chan) => {
        const s = new WatchStreamImpl(watchable, chan)
        streams.add(s)
        return s
      }),
      (s) => s.close
    )

    return {
      newWatchStream,
      rev: store.rev,
      watcherCount: () => watchers,
      streamCount: () => streams.size,
      slowWatcherCount: () => unsynced.size + victims.size(),
      pendingEventsCount: () => pendingEvents,
      eventsTotal: () => eventsTotal,
      syncedWatcherCount: () => synced.size,
      unsyncedWatcherCount: () => unsynced.size,
      victimCount: victims.size,
      syncWatchers: Effect.map(syncWatchers, () => unsynced.size),
      moveVictims: Effect.sync(victims.moveVictims)
    } satisfies WatchableStoreShape
  })

/** The store proper over the `WatcherGroups` and `Victims` in context (each provided on its own). */
export const layerOver = (
  options: Partial<WatchableStoreConfig> = {}
): Layer.Layer<WatchableStore, never, MvccStore | WatcherGroups | Victims> =>
  Layer.scoped(WatchableStore, make(options))

/**
 * The watchable store with etcd's constants, composed of its services (new groups and victims for
 * each build); `layerWith` overrides the constants (tests).
 */
export const layerWith = (options: Partial<WatchableStoreConfig>): Layer.Layer<WatchableStore, never, MvccStore> => {
  const victimRetryPeriod = options.victimRetryPeriod ?? defaultWatchableStoreConfig.victimRetryPeriod
  return layerOver(options).pipe(
    Layer.provide(Victims.layerWith({ retryPeriod: victimRetryPeriod }).pipe(Layer.provideMerge(WatcherGroups.layer)))
  )
}

/** The watchable store with etcd's defaults over the mvcc store. */
export const layer: Layer.Layer<WatchableStore, never, MvccStore> = layerWith({})
