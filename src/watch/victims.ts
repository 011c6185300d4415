/**
 * etcd's victims (watchable_store.go: victims, addVictim, moveVictims): watchers whose stream channel
 * was full, each holding the batch it could not deliver. While a victim, a watcher is in neither
 * group, so nothing newer can overtake the held batch.
 */
import type { EventBatch } from "./event-batch.js"
import type { WatcherGroup } from "./watcher-group.js"
import type { Watcher } from "./watcher.js"

export class Victims {
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
