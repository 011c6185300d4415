/**
 * pkg/adt's IntervalTree, specialised to etcd's "string affine" intervals: half-open
 * [begin, end) over byte strings (latin1-encoded, so JS string order is byte order), where the
 * empty string compares greater than every other string, so `end === ""` means +∞ (a from-key watch).
 *
 * An AVL tree ordered by (begin, end), each node augmented with the largest `end` of its subtree so
 * that stabbing prunes every subtree that ends at or before the point. Each distinct interval is one
 * node carrying one value: the watcher group stores a Set of the watchers sharing that interval.
 * Stab costs O(log n + m·log n) for m matching intervals in the worst case (usually far less: the
 * visited nodes are the ancestors of the matches plus one search path).
 */

/** Byte-string comparison with "" as +∞ (etcd's StringAffineComparable). */
export const compareAffine = (a: string, b: string): number => {
  if (a === b) return 0
  if (a === "") return 1
  if (b === "") return -1
  return a < b ? -1 : 1
}

class Node<V> {
  left: Node<V> | undefined = undefined
  right: Node<V> | undefined = undefined
  height = 1
  maxEnd: string
  constructor(
    readonly begin: string,
    readonly end: string,
    public value: V
  ) {
    this.maxEnd = end
  }
}

const height = <V>(n: Node<V> | undefined): number => (n === undefined ? 0 : n.height)

const maxAffine = (a: string, b: string): string => (compareAffine(a, b) >= 0 ? a : b)

const update = <V>(n: Node<V>): void => {
  const l = n.left
  const r = n.right
  n.height = Math.max(height(l), height(r)) + 1
  let m = n.end
  if (l !== undefined) m = maxAffine(m, l.maxEnd)
  if (r !== undefined) m = maxAffine(m, r.maxEnd)
  n.maxEnd = m
}

const rotateRight = <V>(n: Node<V>): Node<V> => {
  const l = n.left!
  n.left = l.right
  l.right = n
  update(n)
  update(l)
  return l
}

const rotateLeft = <V>(n: Node<V>): Node<V> => {
  const r = n.right!
  n.right = r.left
  r.left = n
  update(n)
  update(r)
  return r
}

const balance = <V>(n: Node<V>): Node<V> => {
  update(n)
  const bf = height(n.left) - height(n.right)
  if (bf > 1) {
    const l = n.left!
    if (height(l.left) < height(l.right)) n.left = rotateLeft(l)
    return rotateRight(n)
  }
  if (bf < -1) {
    const r = n.right!
    if (height(r.right) < height(r.left)) n.right = rotateRight(r)
    return rotateLeft(n)
  }
  return n
}

const compareInterval = (begin: string, end: string, n: Node<unknown>): number => {
  const c = compareAffine(begin, n.begin)
  return c !== 0 ? c : compareAffine(end, n.end)
}

export class IntervalTree<V> {
  private root: Node<V> | undefined = undefined
  private count = 0

  /** number of distinct intervals */
  get size(): number {
    return this.count
  }

  /** The value stored for exactly [begin, end), if any. */
  get(begin: string, end: string): V | undefined {
    let n = this.root
    while (n !== undefined) {
      const c = compareInterval(begin, end, n)
      if (c === 0) return n.value
      n = c < 0 ? n.left : n.right
    }
    return undefined
  }

  /** Stores `value` for [begin, end), replacing the value of an identical interval. */
  insert(begin: string, end: string, value: V): void {
    this.root = this.insertAt(this.root, begin, end, value)
  }

  /** Removes [begin, end); false when absent. */
  delete(begin: string, end: string): boolean {
    const before = this.count
    this.root = this.deleteAt(this.root, begin, end)
    return this.count !== before
  }

  /** Calls `f` with the value of every interval containing `point` (begin <= point < end). */
  stab(point: string, f: (value: V) => void): void {
    if (this.root !== undefined) stabAt(this.root, point, f)
  }

  /** True if some interval contains `point`. */
  contains(point: string): boolean {
    return containsAt(this.root, point)
  }

  /** Every (begin, end, value), in interval order (tests and debugging). */
  entries(): Array<readonly [string, string, V]> {
    const out: Array<readonly [string, string, V]> = []
    const walk = (n: Node<V> | undefined): void => {
      if (n === undefined) return
      walk(n.left)
      out.push([n.begin, n.end, n.value])
      walk(n.right)
    }
    walk(this.root)
    return out
  }

  /** Checks the AVL and max-end invariants; throws on violation (tests). */
  verify(): void {
    const check = (n: Node<V> | undefined): { h: number; max: string | undefined; size: number } => {
      if (n === undefined) return { h: 0, max: undefined, size: 0 }
      const l = check(n.left)
      const r = check(n.right)
      if (n.left !== undefined && compareInterval(n.left.begin, n.left.end, n) >= 0) throw new Error("order")
      if (n.right !== undefined && compareInterval(n.right.begin, n.right.end, n) <= 0) throw new Error("order")
      if (Math.abs(l.h - r.h) > 1) throw new Error("balance")
      const h = Math.max(l.h, r.h) + 1
      if (h !== n.height) throw new Error("height")
      let m = n.end
      if (l.max !== undefined) m = maxAffine(m, l.max)
      if (r.max !== undefined) m = maxAffine(m, r.max)
      if (m !== n.maxEnd) throw new Error("maxEnd")
      return { h, max: m, size: l.size + r.size + 1 }
    }
    if (check(this.root).size !== this.count) throw new Error("size")
  }

  private insertAt(n: Node<V> | undefined, begin: string, end: string, value: V): Node<V> {
    if (n === undefined) {
      this.count++
      return new Node(begin, end, value)
    }
    const c = compareInterval(begin, end, n)
    if (c === 0) {
      n.value = value
      return n
    }
    if (c < 0) n.left = this.insertAt(n.left, begin, end, value)
    else n.right = this.insertAt(n.right, begin, end, value)
    return balance(n)
  }

  private deleteAt(n: Node<V> | undefined, begin: string, end: string): Node<V> | undefined {
    if (n === undefined) return undefined
    const c = compareInterval(begin, end, n)
    if (c < 0) n.left = this.deleteAt(n.left, begin, end)
    else if (c > 0) n.right = this.deleteAt(n.right, begin, end)
    else {
      this.count--
      if (n.left === undefined) return n.right
      if (n.right === undefined) return n.left
      // Replace by the in-order successor: detach the minimum of the right subtree.
      let succ = n.right
      while (succ.left !== undefined) succ = succ.left
      succ.right = removeMin(n.right)
      succ.left = n.left
      return balance(succ)
    }
    return balance(n)
  }
}

const removeMin = <V>(n: Node<V>): Node<V> | undefined => {
  if (n.left === undefined) return n.right
  n.left = removeMin(n.left)
  return balance(n)
}

const stabAt = <V>(n: Node<V>, point: string, f: (value: V) => void): void => {
  // Nothing in this subtree ends after the point.
  if (compareAffine(point, n.maxEnd) >= 0) return
  if (n.left !== undefined) stabAt(n.left, point, f)
  // Every begin in the right subtree is >= n.begin: when n.begin > point, none can contain it.
  if (compareAffine(n.begin, point) > 0) return
  if (compareAffine(point, n.end) < 0) f(n.value)
  if (n.right !== undefined) stabAt(n.right, point, f)
}

const containsAt = <V>(n: Node<V> | undefined, point: string): boolean => {
  if (n === undefined || compareAffine(point, n.maxEnd) >= 0) return false
  if (containsAt(n.left, point)) return true
  if (compareAffine(n.begin, point) > 0) return false
  return compareAffine(point, n.end) < 0 || containsAt(n.right, point)
}
