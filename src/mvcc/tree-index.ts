/**
 * index.go's treeIndex: every key's KeyIndex, ordered by key.
 *
 * Keys are latin1 strings of their bytes, so JavaScript's native string order is bytewise order
 * and a Map gives O(1) point lookups. Order lives in a two-level B+tree: a sorted array of sorted
 * leaves (at most LEAF_MAX keys each). Finding a range start is two binary searches, O(log n);
 * inserting or removing a key costs one leaf splice plus, rarely, a split or merge.
 *
 * Range ends follow etcd: `end === undefined` is the single key, `end === ""` means every key >=
 * `key` (etcd's empty, non-nil end), otherwise the range is [key, end).
 */
import { KeyIndex, type KeyIndexGet } from "./key-index.js"
import type { Revision } from "./revision.js"

const LEAF_MAX = 512

/** first index in `leaf` whose key is >= k */
const lowerBound = (leaf: ReadonlyArray<KeyIndex>, k: string): number => {
  let lo = 0
  let hi = leaf.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (leaf[mid]!.k < k) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class TreeIndex {
  private readonly byKey = new Map<string, KeyIndex>()
  private leaves: Array<Array<KeyIndex>> = []

  /** number of keys in the index (live or with kept history) */
  get size(): number {
    return this.byKey.size
  }

  keyIndex(k: string): KeyIndex | undefined {
    return this.byKey.get(k)
  }

  get(k: string, atRev: number): KeyIndexGet | undefined {
    const ki = this.byKey.get(k)
    return ki === undefined ? undefined : ki.get(atRev)
  }

  /** Records a put of `key` at `rev`; returns the key's KeyIndex (new or existing). */
  put(key: Uint8Array, k: string, main: number, sub: number): KeyIndex {
    let ki = this.byKey.get(k)
    if (ki === undefined) {
      ki = new KeyIndex(key, k)
      ki.put(main, sub)
      this.insert(ki)
      return ki
    }
    ki.put(main, sub)
    return ki
  }

  /** Records a deletion; false when the key is not live (etcd's ErrRevisionNotFound). */
  tombstone(k: string, main: number, sub: number): boolean {
    const ki = this.byKey.get(k)
    return ki === undefined ? false : ki.tombstone(main, sub)
  }

  /** Adds a KeyIndex (restore); replaces one with the same key. */
  insert(ki: KeyIndex): void {
    const prev = this.byKey.get(ki.k)
    this.byKey.set(ki.k, ki)
    const leaves = this.leaves
    if (leaves.length === 0) {
      leaves.push([ki])
      return
    }
    const li = this.leafFor(ki.k)
    const leaf = leaves[li]!
    const pos = lowerBound(leaf, ki.k)
    if (prev !== undefined) {
      leaf[pos] = ki
      return
    }
    if (pos === leaf.length) leaf.push(ki)
    else leaf.splice(pos, 0, ki)
    if (leaf.length > LEAF_MAX) leaves.splice(li + 1, 0, leaf.splice(LEAF_MAX >>> 1))
  }

  /** Removes a key entirely (compaction emptied it, or a failed txn created it). */
  remove(k: string): boolean {
    if (!this.byKey.delete(k)) return false
    const leaves = this.leaves
    const li = this.leafFor(k)
    const leaf = leaves[li]!
    const pos = lowerBound(leaf, k)
    leaf.splice(pos, 1)
    if (leaf.length === 0) leaves.splice(li, 1)
    else if (leaf.length < LEAF_MAX >>> 3 && li + 1 < leaves.length) {
      const next = leaves[li + 1]!
      if (leaf.length + next.length <= LEAF_MAX) {
        for (const x of next) leaf.push(x)
        leaves.splice(li + 1, 1)
      }
    }
    return true
  }

  /** index of the leaf that holds (or would hold) k: the last leaf whose first key <= k */
  private leafFor(k: string): number {
    const leaves = this.leaves
    let lo = 0
    let hi = leaves.length - 1
    let result = 0
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (leaves[mid]![0]!.k <= k) {
        result = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return result
  }

  /**
   * Calls `f` for every KeyIndex with key in [k, end) (end "" = unbounded) in key order, until
   * `f` returns false.
   */
  visit(k: string, end: string, f: (ki: KeyIndex) => boolean): void {
    const leaves = this.leaves
    if (leaves.length === 0) return
    if (end !== "" && k >= end) return
    let li = this.leafFor(k)
    let pos = lowerBound(leaves[li]!, k)
    for (; li < leaves.length; li++, pos = 0) {
      const leaf = leaves[li]!
      for (; pos < leaf.length; pos++) {
        const ki = leaf[pos]!
        if (end !== "" && ki.k >= end) return
        if (!f(ki)) return
      }
    }
  }

  /**
   * The revisions visible at `atRev` for keys in the range, in key order, at most `limit` of
   * them (no limit when <= 0), and the total count (not capped by the limit).
   */
  revisions(
    k: string,
    end: string | undefined,
    atRev: number,
    limit: number
  ): { readonly revs: Array<Revision>; readonly total: number } {
    if (end === undefined) {
      const ki = this.byKey.get(k)
      const r = ki === undefined ? undefined : ki.revisionAt(atRev)
      return r === undefined ? { revs: [], total: 0 } : { revs: [r], total: 1 }
    }
    const revs: Array<Revision> = []
    let total = 0
    this.visit(k, end, (ki) => {
      const r = ki.revisionAt(atRev)
      if (r !== undefined) {
        if (limit <= 0 || revs.length < limit) revs.push(r)
        total++
      }
      return true
    })
    return { revs, total }
  }

  /** How many keys in the range are live at `atRev`. */
  countRevisions(k: string, end: string | undefined, atRev: number): number {
    if (end === undefined) {
      const ki = this.byKey.get(k)
      return ki !== undefined && ki.revisionAt(atRev) !== undefined ? 1 : 0
    }
    let total = 0
    this.visit(k, end, (ki) => {
      if (ki.revisionAt(atRev) !== undefined) total++
      return true
    })
    return total
  }

  /** The live keys in the range at `atRev` with their revisions, in key order. */
  range(
    k: string,
    end: string | undefined,
    atRev: number
  ): { readonly keys: Array<KeyIndex>; readonly revs: Array<Revision> } {
    const keys: Array<KeyIndex> = []
    const revs: Array<Revision> = []
    if (end === undefined) {
      const ki = this.byKey.get(k)
      const r = ki === undefined ? undefined : ki.revisionAt(atRev)
      if (ki !== undefined && r !== undefined) {
        keys.push(ki)
        revs.push(r)
      }
      return { keys, revs }
    }
    this.visit(k, end, (ki) => {
      const r = ki.revisionAt(atRev)
      if (r !== undefined) {
        keys.push(ki)
        revs.push(r)
      }
      return true
    })
    return { keys, revs }
  }

  /**
   * Compacts every key at `rev` and drops keys left empty; returns the revisions the backend must
   * keep (as `revisionKey` strings). One synchronous pass, O(n).
   */
  compact(rev: number): Set<string> {
    const available = new Set<string>()
    let removed = false
    for (const leaf of this.leaves) {
      for (const ki of leaf) {
        ki.compact(rev, available)
        if (ki.isEmpty()) {
          this.byKey.delete(ki.k)
          removed = true
        }
      }
    }
    if (removed) this.rebuildLeaves()
    return available
  }

  /** The revisions a compaction at `rev` would keep, changing nothing. */
  keep(rev: number): Set<string> {
    const available = new Set<string>()
    for (const leaf of this.leaves) for (const ki of leaf) ki.keep(rev, available)
    return available
  }

  /** Every KeyIndex in key order (tests and restore checks). */
  all(): Array<KeyIndex> {
    const out: Array<KeyIndex> = []
    for (const leaf of this.leaves) for (const ki of leaf) out.push(ki)
    return out
  }

  equal(b: TreeIndex): boolean {
    if (this.size !== b.size) return false
    for (const [k, ki] of this.byKey) {
      const bki = b.byKey.get(k)
      if (bki === undefined || !ki.equal(bki)) return false
    }
    return true
  }

  private rebuildLeaves(): void {
    const half = LEAF_MAX >>> 1
    const next: Array<Array<KeyIndex>> = []
    let cur: Array<KeyIndex> = []
    for (const leaf of this.leaves) {
      for (const ki of leaf) {
        if (!this.byKey.has(ki.k) || this.byKey.get(ki.k) !== ki) continue
        cur.push(ki)
        if (cur.length >= half) {
          next.push(cur)
          cur = []
        }
      }
    }
    if (cur.length > 0) next.push(cur)
    this.leaves = next
  }
}
