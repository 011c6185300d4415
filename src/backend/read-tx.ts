/**
 * Reads of the LMDB backend (etcd's read_tx.go, whose UnsafeRange merges the txReadBuffer over
 * bolt): the overlay of staged batches (overlay.ts) over LMDB's committed state, the overlay
 * shadowing LMDB key by key. Plain synchronous code. A value read from LMDB is checked against its
 * checksum (value-checksum.ts) and thrown as a CorruptRecord when it does not match; overlay values
 * are the WAL record's bytes and need no check.
 */
import { type BucketName, CorruptRecord } from "./backend.js"
import { asBuffer, type Dbs } from "./lmdb-env.js"
import type { Overlay } from "./overlay.js"
import { compareBytes } from "./sorted-bucket.js"
import { MAX_KEY_BYTES } from "./validate.js"
import { openValue } from "./value-checksum.js"

const checked = (bucket: BucketName, key: Uint8Array, stored: Uint8Array): Uint8Array => {
  const v = openValue(bucket, key, stored)
  if (v instanceof CorruptRecord) throw v
  return v
}

type OverlayBuckets = Overlay["buckets"]

/** The latest value of `key`, staged batches included. */
export const readKey = (
  overlay: OverlayBuckets,
  dbs: Dbs,
  bucket: BucketName,
  key: Uint8Array
): Uint8Array | undefined => {
  const o = overlay[bucket]
  if (o.size > 0) {
    const e = o.get(key)
    if (e !== undefined) return e.value
  }
  if (key.length === 0 || key.length > MAX_KEY_BYTES) return undefined
  const stored = dbs[bucket].get(asBuffer(key))
  return stored === undefined ? undefined : checked(bucket, key, stored)
}

/** Entries with start <= key < end in key order, staged batches included; at most `limit`. */
export const readRange = (
  overlay: OverlayBuckets,
  dbs: Dbs,
  bucket: BucketName,
  start: Uint8Array,
  end: Uint8Array | undefined,
  limit?: number
): ReadonlyArray<readonly [Uint8Array, Uint8Array]> => {
  const out: Array<readonly [Uint8Array, Uint8Array]> = []
  const max = limit === undefined ? Infinity : limit
  if (max <= 0) return out
  if (end !== undefined && compareBytes(start, end) >= 0) return out
  const o = overlay[bucket]
  let i = o.size > 0 ? o.lowerBound(start) : 0
  const oEnd = o.size
  const inRange = (k: Uint8Array) => end === undefined || compareBytes(k, end) < 0
  const opts: { start?: Uint8Array; end?: Uint8Array; inclusiveEnd?: boolean; limit?: number } = {}
  // LMDB cannot seek to a bound longer than its key limit; no stored key is that long, so the
  // prefix of that length is an equivalent bound (skip an equal start, include an equal end).
  const longStart = start.length > MAX_KEY_BYTES
  if (start.length > 0) opts.start = asBuffer(longStart ? start.subarray(0, MAX_KEY_BYTES) : start)
  if (end !== undefined) {
    if (end.length > MAX_KEY_BYTES) {
      opts.end = asBuffer(end.subarray(0, MAX_KEY_BYTES))
      opts.inclusiveEnd = true
    } else opts.end = asBuffer(end)
  }
  // Without pending deletes in the way, LMDB can stop at the limit by itself.
  if (limit !== undefined && o.size === 0 && !longStart) opts.limit = limit
  for (const { key, value } of dbs[bucket].getRange(opts)) {
    if (longStart && compareBytes(key, start) < 0) continue
    // Overlay keys before this LMDB key come first.
    while (i < oEnd) {
      const ok = o.keyAt(i)!
      if (compareBytes(ok, key) >= 0) break
      if (!inRange(ok)) {
        i = oEnd
        break
      }
      const e = o.valueAt(i)!
      i++
      if (e.value !== undefined) {
        out.push([ok, e.value])
        if (out.length >= max) return out
      }
    }
    if (i < oEnd && compareBytes(o.keyAt(i)!, key) === 0) {
      // A staged batch rewrote or deleted this key: the overlay shadows LMDB.
      const e = o.valueAt(i)!
      i++
      if (e.value === undefined) continue
      out.push([key, e.value])
    } else {
      out.push([key, checked(bucket, key, value)])
    }
    if (out.length >= max) return out
  }
  for (; i < oEnd; i++) {
    const ok = o.keyAt(i)!
    if (!inRange(ok)) break
    const e = o.valueAt(i)!
    if (e.value !== undefined) {
      out.push([ok, e.value])
      if (out.length >= max) break
    }
  }
  return out
}
