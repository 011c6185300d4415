/**
 * etcd's range permission rules (auth/range_perm_cache.go) over "bytes affine" intervals: an empty
 * byte string compares as +infinity, whether it is a begin or an end.
 *
 * - A permission with an empty range_end is the single key: the point [key, key+"\0").
 * - A range_end of "\0" is open ended: [key, +inf). Otherwise [key, range_end).
 * - A user's permissions are the union over its roles, split into read and write (READWRITE goes
 *   to both) — etcd's unifiedRangePermissions.
 * - A single-key request is allowed when one interval holds the key (Intersects); a range request
 *   when the intervals that overlap it, visited by begin, are contiguous and cover it (Contains).
 *   A request whose end is not after its key ([c, c) or [c, a)) is read with adt's Compare as
 *   etcd reads it: it "overlaps" an interval that begins at or before c and ends after c, so with
 *   read on [b, d) etcd 3.4 allows `get c c` and `get c a` and refuses `get a a`.
 */

export interface Interval {
  readonly begin: Uint8Array
  /** empty: +infinity */
  readonly end: Uint8Array
}

/** authpb.Permission.Type: READ (0), WRITE (1) or READWRITE (2). */
export const PermType = { READ: 0, WRITE: 1, READWRITE: 2 } as const
/** One of `PermType`'s values. */
export type PermType = number

/** A role's permission: its type and the key, or range up to `rangeEnd` (etcd's range_end), it covers. */
export interface Permission {
  readonly permType: PermType
  readonly key: Uint8Array
  readonly rangeEnd: Uint8Array
}

const EMPTY = new Uint8Array(0)

/** BytesAffineComparable.Compare: the empty string is +infinity. */
export const affineCompare = (a: Uint8Array, b: Uint8Array): number => {
  if (a.length === 0) return b.length === 0 ? 0 : 1
  if (b.length === 0) return -1
  return Buffer.compare(a, b)
}

const isZero = (b: Uint8Array): boolean => b.length === 1 && b[0] === 0

const pointEnd = (key: Uint8Array): Uint8Array => {
  const out = new Uint8Array(key.length + 1)
  out.set(key)
  return out
}

/** The interval a permission grants. */
export const permInterval = (p: { readonly key: Uint8Array; readonly rangeEnd: Uint8Array }): Interval => {
  if (p.rangeEnd.length === 0) return { begin: p.key, end: pointEnd(p.key) }
  return { begin: p.key, end: isZero(p.rangeEnd) ? EMPTY : p.rangeEnd }
}

/** A set of intervals, kept sorted by begin (the interval tree's visiting order). */
export class IntervalSet {
  private readonly ivs: Array<Interval> = []

  add(iv: Interval): void {
    let i = this.ivs.length
    // stable: equal begins keep insertion order
    while (i > 0 && affineCompare(this.ivs[i - 1]!.begin, iv.begin) > 0) i--
    this.ivs.splice(i, 0, iv)
  }

  get size(): number {
    return this.ivs.length
  }

  /**
   * adt's Interval.Compare(iv, x) == 0: `iv` is neither left of `x` (begins before it and ends at
   * or before its begin) nor right of it (begins at or after its end). For a well-formed `iv`
   * this is the usual overlap; for an inverted one (end before begin) it is etcd's reading.
   */
  private static overlaps(x: Interval, iv: Interval): boolean {
    const left = affineCompare(iv.begin, x.begin) < 0 && affineCompare(iv.end, x.begin) <= 0
    return !left && affineCompare(iv.begin, x.end) < 0
  }

  /** adt's Intersects: some interval overlaps `iv`. */
  intersects(iv: Interval): boolean {
    for (const x of this.ivs) if (IntervalSet.overlaps(x, iv)) return true
    return false
  }

  /** adt's Contains: the overlapping intervals are contiguous and cover `iv`. */
  contains(iv: Interval): boolean {
    let minBegin: Uint8Array | undefined
    let maxEnd: Uint8Array = EMPTY
    for (const x of this.ivs) {
      if (!IntervalSet.overlaps(x, iv)) continue
      if (minBegin === undefined) {
        minBegin = x.begin
        maxEnd = x.end
        continue
      }
      if (affineCompare(maxEnd, x.begin) < 0) return false
      if (affineCompare(x.end, maxEnd) > 0) maxEnd = x.end
    }
    return minBegin !== undefined && affineCompare(maxEnd, iv.end) >= 0 && affineCompare(minBegin, iv.begin) <= 0
  }
}

/** A user's merged permissions (etcd's unifiedRangePermissions). */
export interface UnifiedPermissions {
  readonly read: IntervalSet
  readonly write: IntervalSet
}

export const unify = (perms: Iterable<Permission>): UnifiedPermissions => {
  const read = new IntervalSet()
  const write = new IntervalSet()
  for (const p of perms) {
    const iv = permInterval(p)
    if (p.permType === PermType.READ || p.permType === PermType.READWRITE) read.add(iv)
    if (p.permType === PermType.WRITE || p.permType === PermType.READWRITE) write.add(iv)
  }
  return { read, write }
}

/**
 * isRangeOpPermitted: a request for `key` (empty `rangeEnd`: that key alone; "\0": every key from
 * it) against the read or write intervals.
 */
export const rangeOpPermitted = (set: IntervalSet, key: Uint8Array, rangeEnd: Uint8Array | undefined): boolean => {
  if (rangeEnd === undefined || rangeEnd.length === 0) return set.intersects({ begin: key, end: pointEnd(key) })
  return set.contains({ begin: key, end: isZero(rangeEnd) ? EMPTY : rangeEnd })
}
