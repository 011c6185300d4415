/**
 * The byte format of Backend.snapshot, the same for both backends so a snapshot taken from one can
 * be inspected or restored by the other: a magic header, then every bucket's entries in key order,
 * then a SHA-256 of everything before it (etcd likewise appends a sha256 to its snapshots).
 *
 *   "etcd-effect-snapshot/1\n" · { u8 bucket · u32 keyLen · key · u32 valueLen · value }* · u8 0xff · zeros · sha256
 *
 * The zeros pad what comes before the hash to a multiple of 512 bytes: etcdctl's `snapshot save`
 * takes a stream as checksummed only when its size is 32 past a multiple of 512 (a bolt file is
 * whole pages), and refuses it with "sha256 checksum not found" otherwise.
 */
import { createHash } from "node:crypto"
import type { BucketName } from "./backend.js"

const MAGIC = Buffer.from("etcd-effect-snapshot/1\n", "latin1")
export const BUCKETS: ReadonlyArray<BucketName> = ["key", "meta", "lease", "auth", "authUsers", "authRoles"]
const END = 0xff
const PAD_TO = 512

/** Streams entries into a growing buffer; `finish` appends the terminator and the hash. */
export class SnapshotWriter {
  private chunks: Array<Buffer> = [MAGIC]
  add(bucket: BucketName, key: Uint8Array, value: Uint8Array): void {
    const head = Buffer.allocUnsafe(5)
    head[0] = BUCKETS.indexOf(bucket)
    head.writeUInt32BE(key.length, 1)
    const vlen = Buffer.allocUnsafe(4)
    vlen.writeUInt32BE(value.length, 0)
    this.chunks.push(
      head,
      Buffer.from(key.buffer, key.byteOffset, key.byteLength),
      vlen,
      Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    )
  }
  finish(): Uint8Array {
    this.chunks.push(Buffer.from([END]))
    const size = this.chunks.reduce((n, c) => n + c.length, 0)
    this.chunks.push(Buffer.alloc((PAD_TO - (size % PAD_TO)) % PAD_TO))
    const body = Buffer.concat(this.chunks)
    return Buffer.concat([body, createHash("sha256").update(body).digest()])
  }
}

/** Decodes a snapshot; throws on a bad magic, truncation or hash mismatch. */
export const decodeSnapshot = (
  bytes: Uint8Array
): Array<{ readonly bucket: BucketName; readonly key: Uint8Array; readonly value: Uint8Array }> => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < MAGIC.length + 33 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error("not an etcd-effect snapshot")
  }
  const body = buf.subarray(0, buf.length - 32)
  if (
    !createHash("sha256")
      .update(body)
      .digest()
      .equals(buf.subarray(buf.length - 32))
  ) {
    throw new Error("snapshot hash mismatch")
  }
  const out: Array<{ bucket: BucketName; key: Uint8Array; value: Uint8Array }> = []
  let p = MAGIC.length
  for (;;) {
    if (p >= body.length) throw new Error("truncated snapshot")
    const b = body[p]!
    if (b === END) break
    const bucket = BUCKETS[b]
    if (bucket === undefined || p + 5 > body.length) throw new Error("corrupt snapshot")
    const klen = body.readUInt32BE(p + 1)
    p += 5
    const key = body.subarray(p, p + klen)
    p += klen
    if (p + 4 > body.length) throw new Error("truncated snapshot")
    const vlen = body.readUInt32BE(p)
    p += 4
    const value = body.subarray(p, p + vlen)
    p += vlen
    if (p > body.length) throw new Error("truncated snapshot")
    out.push({ bucket, key: Uint8Array.from(key), value: Uint8Array.from(value) })
  }
  return out
}
