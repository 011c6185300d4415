/**
 * The backend "key" bucket's encoding, byte-compatible with etcd's bolt layout:
 * - bucket key: the 17-byte revision (8 bytes main, '_', 8 bytes sub, big endian), plus 't' for a
 *   tombstone (revision.go, kvstore.go markTombstone);
 * - bucket value: a protobuf mvccpb.KeyValue (key=1 bytes, create_revision=2, mod_revision=3,
 *   version=4, value=5 bytes, lease=6; int64 varints). A tombstone stores `KeyValue{key}` only.
 * Hand-written because it runs once per write and once per read kv; no protobuf library needed.
 */
import type { KeyValue } from "./key-value.js"
import { MARKED_REV_BYTES_LEN, REV_BYTES_LEN } from "./revision.js"

const TOMBSTONE_MARK = 0x74 // 't'
const TWO32 = 4294967296

/** Writes a revision's 17 bytes (and the 't' mark) without BigInt; main and sub are < 2^53. */
export const revToBytes = (main: number, sub: number, tombstone = false): Uint8Array => {
  const b = new Uint8Array(tombstone ? MARKED_REV_BYTES_LEN : REV_BYTES_LEN)
  writeU64(b, 0, main)
  b[8] = 0x5f // '_'
  writeU64(b, 9, sub)
  if (tombstone) b[17] = TOMBSTONE_MARK
  return b
}

const writeU64 = (b: Uint8Array, off: number, n: number): void => {
  const hi = Math.floor(n / TWO32)
  const lo = n >>> 0
  b[off] = hi >>> 24
  b[off + 1] = (hi >>> 16) & 0xff
  b[off + 2] = (hi >>> 8) & 0xff
  b[off + 3] = hi & 0xff
  b[off + 4] = lo >>> 24
  b[off + 5] = (lo >>> 16) & 0xff
  b[off + 6] = (lo >>> 8) & 0xff
  b[off + 7] = lo & 0xff
}

const readU64 = (b: Uint8Array, off: number): number => {
  const hi = ((b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!) >>> 0
  const lo = ((b[off + 4]! << 24) | (b[off + 5]! << 16) | (b[off + 6]! << 8) | b[off + 7]!) >>> 0
  return hi * TWO32 + lo
}

/** main revision of a bucket key */
export const bytesToMain = (b: Uint8Array): number => readU64(b, 0)
/** sub revision of a bucket key */
export const bytesToSub = (b: Uint8Array): number => readU64(b, 9)
export const isTombstoneKey = (b: Uint8Array): boolean => b.length === MARKED_REV_BYTES_LEN && b[17] === TOMBSTONE_MARK

// ---------------------------------------------------------------------------------------------
// protobuf varints

const varintSizeNum = (n: number): number => {
  if (n < 0) return 10 // negative int64: two's complement, always 10 bytes
  let s = 1
  while (n >= 128) {
    n = Math.floor(n / 128)
    s++
  }
  return s
}

const U64 = 1n << 64n
const bigintToU64 = (n: bigint): bigint => (n < 0n ? n + U64 : n)

const varintSizeBig = (n: bigint): number => {
  let v = bigintToU64(n)
  let s = 1
  while (v >= 128n) {
    v >>= 7n
    s++
  }
  return s
}

const putVarintNum = (b: Uint8Array, pos: number, n: number): number => {
  if (n < 0) return putVarintBig(b, pos, BigInt(n))
  while (n >= 128) {
    b[pos++] = (n % 128) | 0x80
    n = Math.floor(n / 128)
  }
  b[pos++] = n
  return pos
}

const putVarintBig = (b: Uint8Array, pos: number, n: bigint): number => {
  let v = bigintToU64(n)
  while (v >= 128n) {
    b[pos++] = Number(v & 0x7fn) | 0x80
    v >>= 7n
  }
  b[pos++] = Number(v)
  return pos
}

// ---------------------------------------------------------------------------------------------
// mvccpb.KeyValue

/** Encodes a KeyValue as proto3 does (zero fields omitted). */
export const encodeKeyValue = (kv: KeyValue): Uint8Array => {
  const kl = kv.key.length
  const vl = kv.value.length
  let size = 0
  if (kl > 0) size += 1 + varintSizeNum(kl) + kl
  if (kv.createRevision !== 0) size += 1 + varintSizeNum(kv.createRevision)
  if (kv.modRevision !== 0) size += 1 + varintSizeNum(kv.modRevision)
  if (kv.version !== 0) size += 1 + varintSizeNum(kv.version)
  if (vl > 0) size += 1 + varintSizeNum(vl) + vl
  if (kv.lease !== 0n) size += 1 + varintSizeBig(kv.lease)
  const b = new Uint8Array(size)
  let p = 0
  if (kl > 0) {
    b[p++] = 0x0a
    p = putVarintNum(b, p, kl)
    b.set(kv.key, p)
    p += kl
  }
  if (kv.createRevision !== 0) {
    b[p++] = 0x10
    p = putVarintNum(b, p, kv.createRevision)
  }
  if (kv.modRevision !== 0) {
    b[p++] = 0x18
    p = putVarintNum(b, p, kv.modRevision)
  }
  if (kv.version !== 0) {
    b[p++] = 0x20
    p = putVarintNum(b, p, kv.version)
  }
  if (vl > 0) {
    b[p++] = 0x2a
    p = putVarintNum(b, p, vl)
    b.set(kv.value, p)
    p += vl
  }
  if (kv.lease !== 0n) {
    b[p++] = 0x30
    p = putVarintBig(b, p, kv.lease)
  }
  return b
}

/** What etcd stores for a deletion: `KeyValue{Key: key}`. */
export const encodeTombstone = (key: Uint8Array): Uint8Array => {
  const kl = key.length
  const b = new Uint8Array(1 + varintSizeNum(kl) + kl)
  b[0] = 0x0a
  const p = putVarintNum(b, 1, kl)
  b.set(key, p)
  return b
}

export class KvDecodeError extends Error {}

/** A plain Uint8Array copy. (Buffer#slice returns a view, so `.slice()` is no copy for Buffers.) */
export const copyBytes = (input: Uint8Array): Uint8Array => {
  const out = new Uint8Array(input.length)
  out.set(input)
  return out
}

const EMPTY = new Uint8Array(0)

/**
 * Decodes a KeyValue. The input is copied once, and key and value are views into that copy, so the
 * result never aliases backend memory. Unknown fields are skipped, as protobuf requires.
 */
export const decodeKeyValue = (input: Uint8Array): KeyValue => {
  const b = copyBytes(input)
  const n = b.length
  let p = 0
  let key: Uint8Array = EMPTY
  let value: Uint8Array = EMPTY
  let createRevision = 0
  let modRevision = 0
  let version = 0
  let lease = 0n

  // Varint reader: numbers stay exact up to 2^53; beyond (or negative int64) fall back to BigInt.
  const readBig = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (p >= n) throw new KvDecodeError("truncated varint")
      const c = b[p++]!
      result |= BigInt(c & 0x7f) << shift
      if ((c & 0x80) === 0) break
      shift += 7n
      if (shift > 63n) throw new KvDecodeError("varint too long")
    }
    return BigInt.asIntN(64, result)
  }
  const readNum = (): number => {
    const start = p
    let result = 0
    let mul = 1
    for (;;) {
      if (p >= n) throw new KvDecodeError("truncated varint")
      const c = b[p++]!
      result += (c & 0x7f) * mul
      if ((c & 0x80) === 0) break
      mul *= 128
      if (mul > 2 ** 49) {
        p = start
        return Number(readBig())
      }
    }
    return result
  }
  const readBytes = (): Uint8Array => {
    const len = readNum()
    if (len < 0 || p + len > n) throw new KvDecodeError("truncated bytes")
    const v = b.subarray(p, p + len)
    p += len
    return v
  }

  while (p < n) {
    const tag = readNum()
    const field = Math.floor(tag / 8)
    const wire = tag & 7
    switch (field) {
      case 1:
        if (wire !== 2) throw new KvDecodeError("bad wire type for key")
        key = readBytes()
        continue
      case 2:
        if (wire !== 0) throw new KvDecodeError("bad wire type for create_revision")
        createRevision = readNum()
        continue
      case 3:
        if (wire !== 0) throw new KvDecodeError("bad wire type for mod_revision")
        modRevision = readNum()
        continue
      case 4:
        if (wire !== 0) throw new KvDecodeError("bad wire type for version")
        version = readNum()
        continue
      case 5:
        if (wire !== 2) throw new KvDecodeError("bad wire type for value")
        value = readBytes()
        continue
      case 6:
        if (wire !== 0) throw new KvDecodeError("bad wire type for lease")
        lease = readBig()
        continue
    }
    // unknown field: skip it
    switch (wire) {
      case 0:
        readBig()
        break
      case 1:
        p += 8
        break
      case 2:
        readBytes()
        break
      case 5:
        p += 4
        break
      default:
        throw new KvDecodeError(`unsupported wire type ${wire}`)
    }
    if (p > n) throw new KvDecodeError("truncated field")
  }
  return { key, createRevision, modRevision, version, value, lease }
}

export { putVarintBig, putVarintNum, varintSizeBig, varintSizeNum }
