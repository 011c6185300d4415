/**
 * One WAL record holds one backend batch, whole: a batch is replayed entirely or not at all.
 *
 *   record  := u32 length · u32 crc · payload                      (little-endian)
 *   crc     := crc32c(the 4 length bytes · payload)
 *   payload := u32 seqLow · u32 seqHigh · u32 opCount · op*
 *   op      := u8 bucket (0 key, 1 meta, 2 lease, 3 auth, 4 authUsers, 5 authRoles; +0x80 = delete) · u16 keyLength · key
 *              · (put only) u32 valueLength · value
 *
 * `seq` numbers the WAL's batches 1, 2, 3, … without gaps, so replay can tell a record it has
 * already applied (seq <= the applied mark kept in LMDB) and a hole in the log.
 *
 * Segments are zero-filled ahead of the writer, so a length of 0 is where the log ends. A crash
 * in the middle of a group write can leave any mix of written and unwritten pages; the first
 * record whose length runs past the buffer, whose checksum fails, or whose payload does not parse
 * exactly, ends the log there (a torn tail: its group was never acknowledged).
 */
import type { BucketName, WriteOp } from "./backend.js"
import { crc32cUpdate } from "./crc32c.js"
import { BUCKETS } from "./snapshot-format.js"
import { MAX_KEY_BYTES } from "./validate.js"

export const RECORD_HEADER_BYTES = 8
const PAYLOAD_HEADER_BYTES = 12
const DELETE_FLAG = 0x80

const bucketIndex: Record<BucketName, number> = { key: 0, meta: 1, lease: 2, auth: 3, authUsers: 4, authRoles: 5 }

export interface EncodedBatch {
  /** the whole record, header included */
  readonly record: Buffer
  /** the batch's ops with key and value as views into `record`: the one copy the backend keeps */
  readonly ops: ReadonlyArray<WriteOp>
}

const checksum = (buf: Uint8Array, start: number, end: number): number =>
  crc32cUpdate(crc32cUpdate(0, buf, start, start + 4), buf, start + RECORD_HEADER_BYTES, end)

/** Encodes a batch as one record; copies every key and value once (the caller's bytes may change later). */
export const encodeRecord = (seq: number, ops: ReadonlyArray<WriteOp>): EncodedBatch => {
  let size = RECORD_HEADER_BYTES + PAYLOAD_HEADER_BYTES
  for (const op of ops) size += 3 + op.key.length + (op.value === undefined ? 0 : 4 + op.value.length)
  const buf = Buffer.allocUnsafe(size)
  buf.writeUInt32LE(size - RECORD_HEADER_BYTES, 0)
  buf.writeUInt32LE(seq % 0x1_0000_0000, 8)
  buf.writeUInt32LE(Math.floor(seq / 0x1_0000_0000), 12)
  buf.writeUInt32LE(ops.length, 16)
  const views: Array<WriteOp> = new Array(ops.length)
  let p = RECORD_HEADER_BYTES + PAYLOAD_HEADER_BYTES
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!
    buf[p] = bucketIndex[op.bucket] | (op.value === undefined ? DELETE_FLAG : 0)
    buf.writeUInt16LE(op.key.length, p + 1)
    p += 3
    buf.set(op.key, p)
    const key = buf.subarray(p, p + op.key.length)
    p += op.key.length
    let value: Buffer | undefined
    if (op.value !== undefined) {
      buf.writeUInt32LE(op.value.length, p)
      p += 4
      buf.set(op.value, p)
      value = buf.subarray(p, p + op.value.length)
      p += op.value.length
    }
    views[i] = { bucket: op.bucket, key, value }
  }
  buf.writeUInt32LE(checksum(buf, 0, size), 4)
  return { record: buf, ops: views }
}

export interface DecodedRecord {
  readonly seq: number
  /** keys and values are views into the decoded buffer */
  readonly ops: ReadonlyArray<WriteOp>
  /** offset just past this record */
  readonly end: number
}

/** The record at `offset`, or undefined where the log ends (zero length, torn or corrupt record). */
export const decodeRecord = (buf: Buffer, offset: number): DecodedRecord | undefined => {
  if (offset + RECORD_HEADER_BYTES > buf.length) return undefined
  const length = buf.readUInt32LE(offset)
  const end = offset + RECORD_HEADER_BYTES + length
  if (length < PAYLOAD_HEADER_BYTES || end > buf.length) return undefined
  if (buf.readUInt32LE(offset + 4) !== checksum(buf, offset, end)) return undefined
  let p = offset + RECORD_HEADER_BYTES
  const seq = buf.readUInt32LE(p) + buf.readUInt32LE(p + 4) * 0x1_0000_0000
  const count = buf.readUInt32LE(p + 8)
  p += PAYLOAD_HEADER_BYTES
  // Each op takes at least 4 bytes: a count beyond that cannot be right.
  if (seq < 1 || count > (end - p) / 4) return undefined
  const ops: Array<WriteOp> = new Array(count)
  for (let i = 0; i < count; i++) {
    if (p + 3 > end) return undefined
    const tag = buf[p]!
    const bucket = BUCKETS[tag & ~DELETE_FLAG]
    const keyLength = buf.readUInt16LE(p + 1)
    p += 3
    if (bucket === undefined || keyLength === 0 || keyLength > MAX_KEY_BYTES || p + keyLength > end) return undefined
    const key = buf.subarray(p, p + keyLength)
    p += keyLength
    let value: Buffer | undefined
    if ((tag & DELETE_FLAG) === 0) {
      if (p + 4 > end) return undefined
      const valueLength = buf.readUInt32LE(p)
      p += 4
      if (p + valueLength > end) return undefined
      value = buf.subarray(p, p + valueLength)
      p += valueLength
    }
    ops[i] = { bucket, key, value }
  }
  return p === end ? { seq, ops, end } : undefined
}

/** Every record from `offset` on, up to the first that does not decode. */
export const decodeRecords = (buf: Buffer, offset = 0): Array<DecodedRecord> => {
  const out: Array<DecodedRecord> = []
  for (let r = decodeRecord(buf, offset); r !== undefined; r = decodeRecord(buf, r.end)) out.push(r)
  return out
}
