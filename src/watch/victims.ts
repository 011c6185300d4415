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
import { supervised } from "../mvcc/fatal.js"
import { MvccStore } from "../mvcc/kv.js"
import type { EventBatch } from "./event-batch.js"
import type { WatcherGroup } from "./watcher-group.js"
import { WatcherGroups } from "./watcher-groups.js"
import type { Watcher } from "./watcher.js"

/** The held batches, keyed by watcher. */
export class VictimBatches {
  private readonly batches = new Map<Watcher, EventBatch>()

  get size(): number {
    return this.batches.size
  }

  /** events held across all victims (etcd's pending work that has not reached a channel) */
  heldEvents(): number {
    let n = 0
    for (const eb of this.batches.values()) n += eb.evs.length
    return n
  }

  add(w: Watcher, eb: EventBatch): void {
    w.state = "victim"
    this.batches.set(w, eb)
  }

  delete(w: Watcher): boolean {
    return this.batches.delete(w)
  }

  /**
   * moveVictims: resends every held batch (header revision minRev-1: the watcher has seen the store
   * up to, not including, minRev). A delivered victim resumes at moreRev if its batch was cut, then
   * goes to `unsynced` when it is behind the store, else to `synced`. Returns how many were delivered.
   */
  retry(curRev: () => number, synced: WatcherGroup, unsynced: WatcherGroup): number {
    let moved = 0
    for (const [w, eb] of this.batches) {
      if (!w.send(eb.evs, w.minRev - 1)) continue
      this.batches.delete(w)
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
    return moved
  }
}

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

export interface VictimsConfig {
  /** redelivery period while victims exist (etcd: 10 ms) */
  readonly retryPeriod: Duration.DurationInput
}

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

export class Victims extends Context.Tag("etcd-effect/Victims")<Victims, VictimsShape>() {
  /** The victims with their loop, over `WatcherGroups` and the store's revision. */
  static readonly layerWith = (
    config: Partial<VictimsConfig> = {}
  ): Layer.Layer<Victims, never, WatcherGroups | MvccStore> =>
    Layer.scoped(Victims, make({ ...defaultVictimsConfig, ...config }))

  static readonly layer: Layer.Layer<Victims, never, WatcherGroups | MvccStore> = Victims.layerWith()
}
