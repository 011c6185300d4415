/**
 * The checksum of every value the LMDB backend stores (LMDB has none of its own: its pages carry no
 * checksum, and a byte flipped on disk is served as it reads). A stored value is the value
 * followed by a CRC-32C (crc32c.ts) of the bucket's key and the value, little-endian:
 *
 *   stored := value · u32 crc32c(key · value)
 *
 * The key is covered too, so a record whose key changed on disk fails as well. Sealing runs in the
 * background LMDB apply and at WAL replay (lmdb-env.ts's putOps), never on the acknowledgement
 * path; checking runs on every read that comes from LMDB (read-tx.ts), not on values still in the
 * overlay, which are the WAL record's own bytes (checksummed by the record's CRC). A mismatch is
 * thrown as a CorruptRecord: the reader never gets the value.
 *
 * Whether an environment's values are sealed is a mark in its "wal" database, set in the same
 * transaction that seals the values of an older environment (lmdb-env.ts's `ensureSealed`).
 */
import { type BucketName, CorruptRecord } from "./backend.js"
import { crc32cUpdate } from "./crc32c.js"

export const CHECKSUM_BYTES = 4

const sum = (key: Uint8Array, value: Uint8Array, end: number): number =>
  crc32cUpdate(crc32cUpdate(0, key), value, 0, end)

/** The bytes to store for `value` under `key`: the value and its checksum. */
export const sealValue = (key: Uint8Array, value: Uint8Array): Buffer => {
  const out = Buffer.allocUnsafe(value.length + CHECKSUM_BYTES)
  out.set(value, 0)
  out.writeUInt32LE(sum(key, value, value.length), value.length)
  return out
}

/** The value in `stored` (a view), or a CorruptRecord when its checksum does not match. */
export const openValue = (bucket: BucketName, key: Uint8Array, stored: Uint8Array): Uint8Array | CorruptRecord => {
  const n = stored.length - CHECKSUM_BYTES
  if (n >= 0) {
    const want = (stored[n]! | (stored[n + 1]! << 8) | (stored[n + 2]! << 16) | (stored[n + 3]! << 24)) >>> 0
    if (sum(key, stored, n) === want) return stored.subarray(0, n)
  }
  return new CorruptRecord({
    bucket,
    key: new Uint8Array(key),
    stored: new Uint8Array(stored),
    message: `backend: checksum mismatch in bucket ${bucket} at key ${Buffer.from(key).toString("hex")}`
  })
}
