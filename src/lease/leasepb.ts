/**
 * The lease record persisted in the backend's "lease" bucket: etcd's leasepb.Lease
 * `{ ID = 1 (int64), TTL = 2 (int64), RemainingTTL = 3 (int64) }` in protobuf wire format, so a
 * record reads the same as etcd's. Small hand-written codec: three varint fields, zero values
 * omitted (proto3), unknown fields skipped.
 */

export interface LeaseRecord {
  readonly id: bigint
  /** granted TTL, seconds */
  readonly ttl: number
  /** last checkpointed remaining TTL, seconds; 0 = unset (use the full TTL) */
  readonly remainingTTL: number
}

const pushVarint = (out: Array<number>, v: bigint): void => {
  let u = BigInt.asUintN(64, v)
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80)
    u >>= 7n
  }
  out.push(Number(u))
}

const pushField = (out: Array<number>, field: number, v: bigint): void => {
  if (v === 0n) return
  out.push((field << 3) | 0)
  pushVarint(out, v)
}

export const encodeLeaseRecord = (r: LeaseRecord): Uint8Array => {
  const out: Array<number> = []
  pushField(out, 1, r.id)
  pushField(out, 2, BigInt(r.ttl))
  pushField(out, 3, BigInt(r.remainingTTL))
  return Uint8Array.from(out)
}

class Reader {
  pos = 0
  constructor(readonly buf: Uint8Array) {}
  varint(): bigint {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error("truncated varint")
      const b = this.buf[this.pos++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return BigInt.asIntN(64, result)
      shift += 7n
      if (shift >= 70n) throw new Error("varint too long")
    }
  }
  skip(n: number): void {
    if (n < 0 || this.pos + n > this.buf.length) throw new Error("truncated field")
    this.pos += n
  }
}

/** Decodes a record; throws an Error naming the problem when the bytes are not a leasepb.Lease. */
export const decodeLeaseRecord = (bytes: Uint8Array): LeaseRecord => {
  const r = new Reader(bytes)
  let id = 0n
  let ttl = 0n
  let remainingTTL = 0n
  while (r.pos < bytes.length) {
    const tag = Number(r.varint())
    const field = tag >>> 3
    const wire = tag & 7
    if (wire === 0) {
      const v = r.varint()
      if (field === 1) id = v
      else if (field === 2) ttl = v
      else if (field === 3) remainingTTL = v
    } else if (wire === 1) r.skip(8)
    else if (wire === 5) r.skip(4)
    else if (wire === 2) r.skip(Number(r.varint()))
    else throw new Error(`unsupported wire type ${wire}`)
  }
  return { id, ttl: Number(ttl), remainingTTL: Number(remainingTTL) }
}
