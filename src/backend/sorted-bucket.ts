/**
 * An ordered map of byte keys (bytewise order) held in two parallel sorted arrays: O(log n) point
 * lookups and range starts, O(1) amortized appends at the end (the "key" bucket grows in revision
 * order), and batched merges so that a batch deleting a long run (compaction) costs one O(n + m log m)
 * pass instead of m array splices. The memory backend's buckets and the LMDB overlay both use it.
 */

/** Bytewise comparison, shorter-prefix first: LMDB's default key order and bbolt's. */
export const compareBytes = (a: Uint8Array, b: Uint8Array): number => {
  const n = a.length < b.length ? a.length : b.length
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!
    if (d !== 0) return d
  }
  return a.length - b.length
}

/** Below this many ops a batch is applied key by key; above it, merged in one pass. */
const MERGE_THRESHOLD = 64

export class SortedBucket<V> {
  private keys: Array<Uint8Array> = []
  private vals: Array<V> = []
  /** sum of sizeOf(key, value) over all entries, when a `sizeOf` is given */
  bytes = 0

  constructor(private readonly sizeOf?: (key: Uint8Array, value: V) => number) {}

  get size(): number {
    return this.keys.length
  }

  /** index of the first key >= `key` */
  lowerBound(key: Uint8Array): number {
    const keys = this.keys
    const n = keys.length
    // Appends dominate: check the tail before bisecting.
    if (n === 0 || compareBytes(keys[n - 1]!, key) < 0) return n
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareBytes(keys[mid]!, key) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  get(key: Uint8Array): V | undefined {
    const i = this.lowerBound(key)
    return i < this.keys.length && compareBytes(this.keys[i]!, key) === 0 ? this.vals[i] : undefined
  }

  has(key: Uint8Array): boolean {
    const i = this.lowerBound(key)
    return i < this.keys.length && compareBytes(this.keys[i]!, key) === 0
  }

  set(key: Uint8Array, value: V): void {
    const i = this.lowerBound(key)
    if (this.sizeOf !== undefined) this.bytes += this.sizeOf(key, value)
    if (i === this.keys.length) {
      this.keys.push(key)
      this.vals.push(value)
    } else if (compareBytes(this.keys[i]!, key) === 0) {
      if (this.sizeOf !== undefined) this.bytes -= this.sizeOf(key, this.vals[i]!)
      this.vals[i] = value
    } else {
      this.keys.splice(i, 0, key)
      this.vals.splice(i, 0, value)
    }
  }

  delete(key: Uint8Array): boolean {
    const i = this.lowerBound(key)
    if (i < this.keys.length && compareBytes(this.keys[i]!, key) === 0) {
      if (this.sizeOf !== undefined) this.bytes -= this.sizeOf(key, this.vals[i]!)
      if (i === 0) {
        this.keys.shift()
        this.vals.shift()
      } else {
        this.keys.splice(i, 1)
        this.vals.splice(i, 1)
      }
      return true
    }
    return false
  }

  /**
   * Applies changes in order (a later change to the same key wins); an `undefined` value means
   * delete when `deleteOnUndefined`, else it is stored as a value (the LMDB overlay's "deleted" mark).
   */
  applyBatch(changes: ReadonlyArray<readonly [Uint8Array, V | undefined]>, deleteOnUndefined: boolean): void {
    if (changes.length < MERGE_THRESHOLD) {
      for (const [k, v] of changes) {
        if (v === undefined && deleteOnUndefined) this.delete(k)
        else this.set(k, v as V)
      }
      return
    }
    // Sort stably by key so the last change to a key is last among equals, then keep only that one.
    const idx = changes.map((_, i) => i)
    idx.sort((a, b) => compareBytes(changes[a]![0], changes[b]![0]) || a - b)
    const ck: Array<Uint8Array> = []
    const cv: Array<V | undefined> = []
    for (let j = 0; j < idx.length; j++) {
      const c = changes[idx[j]!]!
      if (ck.length > 0 && compareBytes(ck[ck.length - 1]!, c[0]) === 0) cv[cv.length - 1] = c[1]
      else {
        ck.push(c[0])
        cv.push(c[1])
      }
    }
    // Pure appends (all new keys past the end) skip the merge.
    const n = this.keys.length
    if (n === 0 || compareBytes(this.keys[n - 1]!, ck[0]!) < 0) {
      for (let j = 0; j < ck.length; j++) {
        const v = cv[j]
        if (v === undefined && deleteOnUndefined) continue
        if (this.sizeOf !== undefined) this.bytes += this.sizeOf(ck[j]!, v as V)
        this.keys.push(ck[j]!)
        this.vals.push(v as V)
      }
      return
    }
    const nk: Array<Uint8Array> = []
    const nv: Array<V> = []
    let i = 0
    let j = 0
    while (i < n || j < ck.length) {
      const c = i < n && j < ck.length ? compareBytes(this.keys[i]!, ck[j]!) : i < n ? -1 : 1
      if (c < 0) {
        nk.push(this.keys[i]!)
        nv.push(this.vals[i]!)
        i++
      } else {
        const v = cv[j]
        if (!(v === undefined && deleteOnUndefined)) {
          if (this.sizeOf !== undefined) this.bytes += this.sizeOf(ck[j]!, v as V)
          nk.push(ck[j]!)
          nv.push(v as V)
        }
        if (c === 0) {
          if (this.sizeOf !== undefined) this.bytes -= this.sizeOf(this.keys[i]!, this.vals[i]!)
          i++
        }
        j++
      }
    }
    this.keys = nk
    this.vals = nv
  }

  /** Keeps only the entries `keep` accepts, in one pass (the LMDB overlay drops what a transaction made durable). */
  retain(keep: (value: V) => boolean): void {
    const nk: Array<Uint8Array> = []
    const nv: Array<V> = []
    for (let i = 0; i < this.keys.length; i++) {
      const v = this.vals[i]!
      if (keep(v)) {
        nk.push(this.keys[i]!)
        nv.push(v)
      } else if (this.sizeOf !== undefined) this.bytes -= this.sizeOf(this.keys[i]!, v)
    }
    this.keys = nk
    this.vals = nv
  }

  /** Calls `f` on entries with start <= key < end (end undefined: to the end) in order until it returns false. */
  forEachInRange(start: Uint8Array, end: Uint8Array | undefined, f: (k: Uint8Array, v: V) => boolean): void {
    const keys = this.keys
    for (let i = this.lowerBound(start); i < keys.length; i++) {
      const k = keys[i]!
      if (end !== undefined && compareBytes(k, end) >= 0) return
      if (!f(k, this.vals[i]!)) return
    }
  }

  /** entry at position i (for merging cursors) */
  keyAt(i: number): Uint8Array | undefined {
    return this.keys[i]
  }
  valueAt(i: number): V | undefined {
    return this.vals[i]
  }

  clear(): void {
    this.keys = []
    this.vals = []
    this.bytes = 0
  }
}
