/**
 * etcd's victims (watchable_store.go: victims, addVictim, moveVictims, syncVictimsLoop): watchers
 * whose stream channel was full, each holding the batch it could not deliver. While a victim, a
 * watcher is in neither group, so nothing newer can overtake the held batch.
 *
 * A service with its own layer: the batches (plain synchronous bookkeeping, `VictimBatches`) and
 * syncVictimsLoop, a fiber of the layer's scope that redelivers every `retryPeriod` while victims
 * exist and otherwise waits for `add` to wake it. A delivered victim goes back to the groups of
 * `WatcherGroups`; the store's revision decides which.
 */
import { Context, Duration, Effect, Layer, type Scope } from "effect"
import { supervised } from "../supervision/fatal.js"
import { MvccStore } from "../mvcc/kv.js"
import type { EventBatch } from "./event-batch.js"
import type { WatcherGroup } from "./watcher-group.js"
import { WatcherGroups } from "./watcher-groups.js"
import type { ResponseSink, Watcher } from "./watcher.js"

/**
 * One sink's victims: their batches, and the order they became victims in as a queue with a head
 * (a Map iterated from its start would walk every entry a pass deleted before, until V8 rehashes
 * it: with 100k victims a stream, most of a pass). A slot is null once its watcher was delivered.
 */
class SinkVictims {
  readonly batches = new Map<Watcher, EventBatch>()
  order: Array<Watcher | null> = []
  head = 0

  /** Drops the delivered and cancelled slots before the head's first live one. */
  advance(): void {
    while (this.head < this.order.length) {
      const w = this.order[this.head]
      if (w !== null && w !== undefined && this.batches.has(w)) break
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head)
      this.head = 0
    }
  }
}

/**
 * The held batches, keyed by watcher and grouped by the watcher's sink (its stream's channel).
 * etcd's moveVictims tries every victim each pass; a channel that refused stays full until its send
 * loop takes, so every victim of a refusing sink would fail its send: a pass skips that sink's
 * victims at once. With a million victims on ten streams a pass is then the few that fit, not a
 * million failed sends every 10 ms (issue 29, docs/benchmarks.md "Lever 29c").
 */
export class VictimBatches {
  private readonly bySink = new Map<ResponseSink, SinkVictims>()
  private count = 0

  get size(): number {
    return this.count
  }

  /** events held across all victims (etcd's pending work that has not reached a channel) */
  heldEvents(): number {
    let n = 0
    for (const v of this.bySink.values()) for (const eb of v.batches.values()) n += eb.evs.length
    return n
  }

  add(w: Watcher, eb: EventBatch): void {
    w.state = "victim"
    let v = this.bySink.get(w.sink)
    if (v === undefined) {
      v = new SinkVictims()
      this.bySink.set(w.sink, v)
    }
    if (!v.batches.has(w)) {
      this.count++
      v.order.push(w)
    }
    v.batches.set(w, eb)
  }

  delete(w: Watcher): boolean {
    const v = this.bySink.get(w.sink)
    if (v === undefined || !v.batches.delete(w)) return false
    this.count--
    if (v.batches.size === 0) this.bySink.delete(w.sink)
    return true
  }

  /**
   * moveVictims: resends every held batch (header revision minRev-1: the watcher has seen the store
   * up to, not including, minRev), each sink's in the order they became victims. A delivered victim
   * resumes at moreRev if its batch was cut, then goes to `unsynced` when it is behind the store,
   * else to `synced`. A sink that refuses ends its victims' turn for this pass (a victim's batch
   * always has events its filters keep, so each of them would be offered and refused). Returns how
   * many were delivered.
   */
  retry(curRev: () => number, synced: WatcherGroup, unsynced: WatcherGroup): number {
    let moved = 0
    for (const [sink, v] of this.bySink) {
      v.advance()
      const order = v.order
      for (let i = v.head; i < order.length; i++) {
        if (sink.refusing === true) break
        const w = order[i]
        if (w === null || w === undefined) continue
        const eb = v.batches.get(w)
        if (eb === undefined) {
          order[i] = null // cancelled while a victim
          continue
        }
        if (!w.send(eb.evs, w.minRev - 1)) continue
        v.batches.delete(w)
        order[i] = null
        this.count--
        moved++
        if (eb.moreRev !== 0) w.minRev = eb.moreRev
        if (w.minRev <= curRev()) {
          w.state = "unsynced"
          unsynced.add(w)
        } else {
          w.state = "synced"
          synced.add(w)
        }
      }
      if (v.batches.size === 0) this.bySink.delete(sink)
      else v.advance()
    }
    return moved
  }
}

/** The victims' operations: watchers whose events a full channel refused, held and redelivered by a loop. */
export interface VictimsShape {
  /** victims held now */
  readonly size: () => number
  /** events held across all victims */
  readonly heldEvents: () => number
  /** addVictim: `w` (out of its group already) holds `eb`; wakes the victim loop */
  readonly add: (w: Watcher, eb: EventBatch) => void
  /** drops a victim (its watcher was cancelled) */
  readonly delete: (w: Watcher) => boolean
  /** moveVictims: one redelivery pass now. Returns how many were delivered. */
  readonly moveVictims: () => number
}

/** How often victims are retried. */
export interface VictimsConfig {
  /** redelivery period while victims exist (etcd: 10 ms) */
  readonly retryPeriod: Duration.DurationInput
}

/** etcd's default: a retry every 10 ms while victims exist. */
export const defaultVictimsConfig: VictimsConfig = { retryPeriod: Duration.millis(10) }

/** The victims over the groups and store in context; the loop lives in the caller's scope. */
const make = (config: VictimsConfig): Effect.Effect<VictimsShape, never, WatcherGroups | MvccStore | Scope.Scope> =>
  Effect.gen(function* () {
    const { synced, unsynced } = yield* WatcherGroups
    const store = yield* MvccStore
    const batches = new VictimBatches()
    const signal = yield* Effect.makeLatch(false)
    const moveVictims = (): number => batches.retry(store.rev, synced, unsynced)

    const syncVictimsLoop = Effect.gen(function* () {
      const period = Duration.decode(config.retryPeriod)
      while (true) {
        moveVictims()
        if (batches.size === 0) {
          signal.unsafeClose()
          yield* signal.await
        } else {
          yield* Effect.sleep(period)
        }
      }
    })
    yield* Effect.forkScoped(supervised("watch victim loop", syncVictimsLoop))

    return {
      size: () => batches.size,
      heldEvents: () => batches.heldEvents(),
      add: (w, eb) => {
        batches.add(w, eb)
        signal.unsafeOpen()
      },
      delete: (w) => batches.delete(w),
      moveVictims
    } satisfies VictimsShape
  })

/** The victims service (etcd's victims list in watchable_store.go) and its redelivery loop. */
export class Victims extends Context.Tag("etcd-effect/Victims")<Victims, VictimsShape>() {
  /** The victims with their loop, over `WatcherGroups` and the store's revision. */
  static readonly layerWith = (
    config: Partial<VictimsConfig> = {}
  ): Layer.Layer<Victims, never, WatcherGroups | MvccStore> =>
    Layer.scoped(Victims, make({ ...defaultVictimsConfig, ...config }))

  static readonly layer: Layer.Layer<Victims, never, WatcherGroups | MvccStore> = Victims.layerWith()
}
