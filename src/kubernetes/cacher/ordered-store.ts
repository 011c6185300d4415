/**
 * The watch cache store's elements in key order (the role of store_btree.go's btree): a list or a
 * watch from resourceVersion 0 reads a snapshot of one prefix (a namespace) sorted by key, and
 * with the elements kept in order that is two binary searches and a slice, not a walk of every
 * object plus a sort. 10,000 watches opened at once over 10,000 objects spent most of their time
 * in that walk and sort, long enough for the listen queue to overflow and connections to be
 * reset (issue 29, docs/benchmarks.md "The Kubernetes side").
 *
 * Keys are compared as JS strings (UTF-16 code units), the order the cache's snapshots always had.
 * A new key is placed by binary search (an append when keys come in order, as creates mostly do);
 * an update replaces its element in place.
 */
export interface Keyed {
  readonly key: string
}

/** `elements` sorted by key, in the order the cache's snapshots use. */
export const sortedByKey = <T extends Keyed>(elements: Iterable<T>): Array<T> =>
  Array.from(elements).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))

export class OrderedStore<T extends Keyed> {
  private elements: Array<T> = []

  get size(): number {
    return this.elements.length
  }

  /** The first index whose key is not below `key`. */
  private lowerBound(key: string): number {
    const els = this.elements
    let lo = 0
    let hi = els.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (els[mid]!.key < key) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Adds `el`, or replaces the element of its key. */
  set(el: T): void {
    const els = this.elements
    const n = els.length
    if (n === 0 || els[n - 1]!.key < el.key) {
      els.push(el)
      return
    }
    const i = this.lowerBound(el.key)
    if (els[i]?.key === el.key) els[i] = el
    else els.splice(i, 0, el)
  }

  /** Removes the element of `key`, if any. */
  delete(key: string): void {
    const i = this.lowerBound(key)
    if (this.elements[i]?.key === key) this.elements.splice(i, 1)
  }

  /** Exactly `all` (a relist). */
  reset(all: Iterable<T>): void {
    this.elements = sortedByKey(all)
  }

  /** The elements whose key starts with `prefix` (every one when undefined), in key order. */
  withPrefix(prefix: string | undefined): Array<T> {
    const els = this.elements
    if (prefix === undefined || prefix === "") return els.slice()
    const from = this.lowerBound(prefix)
    // The keys with the prefix are contiguous from its lower bound, and every key after them is
    // greater than all of them: "below the prefix or starting with it" holds up to an index, then never.
    let lo = from
    let hi = els.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (els[mid]!.key.startsWith(prefix)) lo = mid + 1
      else hi = mid
    }
    return els.slice(from, lo)
  }
}
