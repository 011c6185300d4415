/**
 * revision.go: a revision is {main, sub}; main is the store revision a txn commits at, sub the
 * index of the change inside that txn. The backend's key bucket is keyed by the 17-byte encoding
 * (8 bytes main, '_', 8 bytes sub, big endian, so byte order = revision order), plus a trailing
 * 't' for tombstones, exactly as etcd lays out its bolt "key" bucket.
 */
export interface Revision {
  readonly main: number
  readonly sub: number
}

export const REV_BYTES_LEN = 17
export const MARKED_REV_BYTES_LEN = 18
const TOMBSTONE_MARK = 0x74 // 't'

/** Orders revisions by main, then sub revision: negative, zero or positive. */
export const compareRevision = (a: Revision, b: Revision): number =>
  a.main !== b.main ? a.main - b.main : a.sub - b.sub

/** Encodes a revision; `tombstone` appends the 't' mark. */
export const encodeRevision = (rev: Revision, tombstone = false): Uint8Array => {
  const buf = Buffer.allocUnsafe(tombstone ? MARKED_REV_BYTES_LEN : REV_BYTES_LEN)
  buf.writeBigUInt64BE(BigInt(rev.main), 0)
  buf[8] = 0x5f // '_'
  buf.writeBigUInt64BE(BigInt(rev.sub), 9)
  if (tombstone) buf[17] = TOMBSTONE_MARK
  return buf
}

export const decodeRevision = (bytes: Uint8Array): Revision => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { main: Number(buf.readBigUInt64BE(0)), sub: Number(buf.readBigUInt64BE(9)) }
}

export const isTombstone = (bytes: Uint8Array): boolean =>
  bytes.byteLength === MARKED_REV_BYTES_LEN && bytes[17] === TOMBSTONE_MARK
