/**
 * etcd's watcherGroup (watcher_group.go): the synced or the unsynced watchers of a watchable store.
 * Single-key watchers sit in a Map by key; range, prefix and from-key watchers in an interval tree
 * where watchers of the same exact interval share one node. An ordered group (the unsynced one and
 * a sync round's) also holds them all in insertion order, which `choose` walks; the synced group is
 * never chosen from, so it keeps no such Set (30–40 B a watcher at a million watchers, issue 29).
 */
import { IntervalTree } from "./interval-tree.js"
import type { Watcher } from "./watcher.js"

/** One watcher, or several sharing a key or interval (most keys have one: no Set for them). */
type Slot = Watcher | Set<Watcher>

const slotAdd = (slot: Slot | undefined, w: Watcher): Slot => {
  if (slot === undefined) return w
  if (slot instanceof Set) return slot.add(w)
  return new Set([slot, w])
}

/** The slot without `w`, or undefined when it becomes empty. */
const slotDelete = (slot: Slot, w: Watcher): Slot | undefined => {
  if (!(slot instanceof Set)) return slot === w ? undefined : slot
  slot.delete(w)
  if (slot.size === 1) return slot.values().next().value
  return slot.size === 0 ? undefined : slot
}

const slotHas = (slot: Slot | undefined, w: Watcher): boolean =>
  slot === undefined ? false : slot instanceof Set ? slot.has(w) : slot === w

const slotEach = (slot: Slot, f: (w: Watcher) => void): void => {
  if (slot instanceof Set) for (const w of slot) f(w)
  else f(slot)
}

export interface WatcherGroupOptions {
  /**
   * Keep the watchers in insertion order for `choose` (default). The synced group passes false:
   * it is looked up by key only, and membership is read from its key map and interval tree.
   */
  readonly ordered?: boolean
}

export class WatcherGroup {
  private readonly keyWatchers = new Map<string, Slot>()
  private readonly ranges = new IntervalTree<Slot>()
  /** every watcher of an ordered group, in insertion order */
  private readonly order: Set<Watcher> | undefined
  private count = 0

  constructor(options: WatcherGroupOptions = {}) {
    this.order = options.ordered === false ? undefined : new Set()
  }

  /**
   * Every watcher of the group: an ordered group's in insertion order; an unordered group builds
   * the set from its index (tests and diagnostics, not the hot paths).
   */
  get watchers(): ReadonlySet<Watcher> {
    if (this.order !== undefined) return this.order
    const all = new Set<Watcher>()
    for (const slot of this.keyWatchers.values()) slotEach(slot, (w) => all.add(w))
    for (const [, , slot] of this.ranges.entries()) slotEach(slot, (w) => all.add(w))
    return all
  }

  get size(): number {
    return this.count
  }

  has(w: Watcher): boolean {
    if (this.order !== undefined) return this.order.has(w)
    return w.end === undefined ? slotHas(this.keyWatchers.get(w.key), w) : slotHas(this.ranges.get(w.key, w.end), w)
  }

  add(w: Watcher): void {
    if (this.has(w)) return
    this.order?.add(w)
    this.count++
    if (w.end === undefined) {
      this.keyWatchers.set(w.key, slotAdd(this.keyWatchers.get(w.key), w))
    } else {
      const slot = this.ranges.get(w.key, w.end)
      const next = slotAdd(slot, w)
      if (next !== slot) this.ranges.insert(w.key, w.end, next)
    }
  }

  delete(w: Watcher): boolean {
    if (!this.has(w)) return false
    this.order?.delete(w)
    this.count--
    if (w.end === undefined) {
      const next = slotDelete(this.keyWatchers.get(w.key)!, w)
      if (next === undefined) this.keyWatchers.delete(w.key)
      else this.keyWatchers.set(w.key, next)
    } else {
      const slot = this.ranges.get(w.key, w.end)!
      const next = slotDelete(slot, w)
      if (next === undefined) this.ranges.delete(w.key, w.end)
      else if (next !== slot) this.ranges.insert(w.key, w.end, next)
    }
    return true
  }

  /** Moves `w` to the back of the choosing order (round-robin across sync rounds). */
  requeue(w: Watcher): void {
    if (this.order?.delete(w) === true) this.order.add(w)
  }

  /** Whether any watcher of the group matches `key` (latin1). */
  contains(key: string): boolean {
    return this.keyWatchers.has(key) || this.ranges.contains(key)
  }

  /** etcd's watcherSetByKey, as a visitor: each matching watcher once (no set is built). */
  forEachMatch(key: string, f: (w: Watcher) => void): void {
    const slot = this.keyWatchers.get(key)
    if (slot !== undefined) slotEach(slot, f)
    if (this.ranges.size > 0) this.ranges.stab(key, (s) => slotEach(s, f))
  }

  /** number of distinct range intervals (tests) */
  get intervalCount(): number {
    return this.ranges.size
  }

  /**
   * Picks up to `maxWatchers` watchers for one sync round, in choosing order, into a new group: a
   * snapshot, because our round yields between history chunks and watchers added meanwhile must not
   * join it half way (etcd holds its lock for the whole round and reuses the group when small).
   * Watchers behind the compaction (minRev < compactRev) get the compaction response if their
   * channel has room and are then removed from the chosen group AND from this group (etcd removes
   * them only from its temporary group above 512 watchers, and so resends the response every round,
   * #22294); otherwise they leave the chosen group and stay in this one for a retry in a later
   * round, moved to the back of the order. Returns the smallest minRev of the chosen
   * (MAX_SAFE_INTEGER when none).
   */
  choose(
    maxWatchers: number,
    curRev: number,
    compactRev: number
  ): { readonly group: WatcherGroup; readonly minRev: number; readonly compacted: number } {
    const group = new WatcherGroup()
    for (const w of this.order ?? this.watchers) {
      if (group.size >= maxWatchers) break
      group.add(w)
    }
    let minRev = Number.MAX_SAFE_INTEGER
    let compacted = 0
    for (const w of group.watchers) {
      if (w.minRev < compactRev) {
        if (w.sendCompacted(compactRev)) {
          w.state = "compacted"
          group.delete(w)
          this.delete(w)
          compacted++
        } else {
          // Not part of this round (nothing to read for it); to the back of the order, so that
          // stuck watchers cannot keep everyone else out of the rounds.
          group.delete(w)
          this.requeue(w)
        }
        continue
      }
      // Unsynced watchers are never ahead of the store (etcd panics unless restoring): clamp anyway.
      const m = w.minRev <= curRev + 1 ? w.minRev : curRev + 1
      if (m < minRev) minRev = m
    }
    return { group, minRev, compacted }
  }
}
