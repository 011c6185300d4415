/**
 * A map keyed by watch id, for the per-stream tables that hold one entry per watcher (the mvcc
 * stream's watchers, the server's announced ids). Ids a stream allocates count up from 0, so they
 * go to a plain array indexed by id: 8 bytes a watcher, where a Map entry costs 30–40 (issue 29:
 * one million watchers, ≤ 256 B each). Any other id — a client's own choice far from the others,
 * negative, or a bigint beyond 2^53 — goes to a Map, so a hostile id cannot make the array grow:
 * an id joins the array only within 512 slots of its end (V8 keeps an array fast up to a gap of
 * 1024). Iteration order is not insertion order (array first, then the Map), which no caller
 * relies on: etcd's own maps have none.
 */
import type { WatchId } from "./watcher.js"

const MAX_GAP = 512

export class WatchIdMap<V> {
  private readonly dense: Array<V | undefined> = []
  private sparse: Map<WatchId, V> | undefined
  private count = 0

  get size(): number {
    return this.count
  }

  get(id: WatchId): V | undefined {
    if (typeof id === "number" && id >= 0 && id < this.dense.length) {
      const v = this.dense[id]
      if (v !== undefined) return v
    }
    return this.sparse?.get(id)
  }

  has(id: WatchId): boolean {
    return this.get(id) !== undefined
  }

  /** `value` must not be undefined (it marks an empty slot). */
  set(id: WatchId, value: V): this {
    const sparse = this.sparse
    if (sparse !== undefined && sparse.has(id)) {
      sparse.set(id, value)
      return this
    }
    if (typeof id === "number" && id >= 0 && id < this.dense.length + MAX_GAP) {
      if (this.dense[id] === undefined) this.count++
      this.dense[id] = value
      return this
    }
    ;(this.sparse ??= new Map()).set(id, value)
    this.count++
    return this
  }

  delete(id: WatchId): boolean {
    if (typeof id === "number" && id >= 0 && id < this.dense.length && this.dense[id] !== undefined) {
      this.dense[id] = undefined
      this.count--
      return true
    }
    if (this.sparse?.delete(id) === true) {
      this.count--
      return true
    }
    return false
  }

  clear(): void {
    this.dense.length = 0
    this.sparse = undefined
    this.count = 0
  }

  *entries(): IterableIterator<[WatchId, V]> {
    const dense = this.dense
    for (let id = 0; id < dense.length; id++) {
      const v = dense[id]
      if (v !== undefined) yield [id, v]
    }
    if (this.sparse !== undefined) yield* this.sparse
  }

  keys(): Array<WatchId> {
    const out: Array<WatchId> = []
    for (const [id] of this.entries()) out.push(id)
    return out
  }

  values(): Array<V> {
    const out: Array<V> = []
    const dense = this.dense
    for (let id = 0; id < dense.length; id++) {
      const v = dense[id]
      if (v !== undefined) out.push(v)
    }
    if (this.sparse !== undefined) for (const v of this.sparse.values()) out.push(v)
    return out
  }
}

/** A set of watch ids on a WatchIdMap (the server's ids whose created response went out). */
export class WatchIdSet {
  private readonly map = new WatchIdMap<true>()

  get size(): number {
    return this.map.size
  }

  has(id: WatchId): boolean {
    return this.map.has(id)
  }

  add(id: WatchId): this {
    this.map.set(id, true)
    return this
  }

  delete(id: WatchId): boolean {
    return this.map.delete(id)
  }
}
