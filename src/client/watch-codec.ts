/**
 * Hand-written protobuf codec for the Watch RPC, the client's hot path.
 *
 * proto-loader decodes through protobufjs into objects with int64 as decimal strings, which the
 * client would then parse again into bigints: two objects and a string per field. This reads the
 * wire bytes straight into the client's shapes (one object per message, keys and values as zero-copy
 * views of the received buffer, which grpc-js allocates per message). Measured in docs/decisions.md
 * ("Client: own Watch codec"). Field numbers: api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto.
 */
import { EMPTY_BYTES, type Event, EventType, type KeyValue, type ResponseHeader, emptyHeader } from "./key-value.js"
import type { WireWatchResponse } from "./watch-response.js"

// ---- decoding ----

const TWO_32 = 4294967296

/** BigInts are heap objects: share the small ones (versions, lease 0, early revisions). */
const SMALL = Array.from({ length: 1024 }, (_, i) => BigInt(i))

/** Also read by the lean CLI path's KV codec (lean-kv-codec.ts). */
export class Reader {
  pos: number
  constructor(
    readonly buf: Uint8Array,
    pos: number,
    readonly end: number
  ) {
    this.pos = pos
  }

  /** a varint known to fit 32 bits (tags, lengths, enums, bools) */
  uint32(): number {
    const buf = this.buf
    let b = buf[this.pos++]!
    let value = b & 0x7f
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 7
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 14
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 21
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value = (value | ((b & 0x0f) << 28)) >>> 0
    // a negative int32 enum is sign-extended to 10 bytes: skip the rest
    while (b >= 0x80) b = buf[this.pos++]!
    return value
  }

  /** an int64/uint64 varint as lo/hi 32-bit halves; returns lo, leaves hi in `this.hi` */
  hi = 0
  private varint64(): number {
    const buf = this.buf
    let lo = 0
    let hi = 0
    let shift = 0
    let b: number
    // first 4 bytes: 28 bits of lo
    for (; shift < 28; shift += 7) {
      b = buf[this.pos++]!
      lo |= (b & 0x7f) << shift
      if (b < 0x80) {
        this.hi = 0
        return lo >>> 0
      }
    }
    // 5th byte: 4 bits to lo, 3 bits to hi
    b = buf[this.pos++]!
    lo |= (b & 0x0f) << 28
    hi = (b & 0x7f) >> 4
    if (b >= 0x80) {
      for (shift = 3; shift < 32; shift += 7) {
        b = buf[this.pos++]!
        hi |= (b & 0x7f) << shift
        if (b < 0x80) break
      }
    }
    this.hi = hi >>> 0
    return lo >>> 0
  }

  /** int64 as bigint (revisions, lease ids, versions) */
  int64(): bigint {
    const lo = this.varint64()
    const hi = this.hi
    if (hi === 0) return lo < 1024 ? SMALL[lo]! : BigInt(lo)
    if (hi < 0x200000) return BigInt(hi * TWO_32 + lo)
    return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo))
  }

  /** uint64 as bigint (cluster and member ids) */
  uint64(): bigint {
    const lo = this.varint64()
    const hi = this.hi
    if (hi === 0) return lo < 1024 ? SMALL[lo]! : BigInt(lo)
    if (hi < 0x200000) return BigInt(hi * TWO_32 + lo)
    return (BigInt(hi) << 32n) | BigInt(lo)
  }

  /** int64 known to be small (watch ids), as a number; -1 stays -1 */
  int64Number(): number {
    const lo = this.varint64()
    const hi = this.hi
    if (hi === 0) return lo
    if (hi === 0xffffffff) return lo - TWO_32 // negative, |value| < 2^32
    return Number(BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)))
  }

  bytes(): Uint8Array {
    const len = this.uint32()
    const start = this.pos
    this.pos += len
    if (this.pos > this.end) throw new RangeError("watch codec: length beyond message end")
    // A view constructor is ~3x cheaper than Buffer#subarray (no species lookup, no FastBuffer).
    return len === 0 ? EMPTY_BYTES : new Uint8Array(this.buf.buffer, this.buf.byteOffset + start, len)
  }

  string(): string {
    const bytes = this.bytes()
    return bytes.length === 0 ? "" : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        while (this.buf[this.pos++]! >= 0x80) {}
        return
      case 1:
        this.pos += 8
        return
      case 2: {
        const len = this.uint32() // read before `this.pos +=` evaluates this.pos
        this.pos += len
        return
      }
      case 5:
        this.pos += 4
        return
      default:
        throw new RangeError(`watch codec: unsupported wire type ${wireType}`)
    }
  }
}

export const readKeyValue = (r: Reader, end: number): KeyValue => {
  let key = EMPTY_BYTES
  let createRevision = 0n
  let modRevision = 0n
  let version = 0n
  let value = EMPTY_BYTES
  let lease = 0n
  while (r.pos < end) {
    const tag = r.uint32()
    switch (tag) {
      case 0x0a:
        key = r.bytes()
        break
      case 0x10:
        createRevision = r.int64()
        break
      case 0x18:
        modRevision = r.int64()
        break
      case 0x20:
        version = r.int64()
        break
      case 0x2a:
        value = r.bytes()
        break
      case 0x30:
        lease = r.int64()
        break
      default:
        r.skip(tag & 7)
    }
  }
  return { key, createRevision, modRevision, version, value, lease }
}

const EMPTY_KV: KeyValue = {
  key: EMPTY_BYTES,
  createRevision: 0n,
  modRevision: 0n,
  version: 0n,
  value: EMPTY_BYTES,
  lease: 0n
}

const readEvent = (r: Reader, end: number): Event => {
  let type: EventType = EventType.PUT
  let kv = EMPTY_KV
  let prevKv: KeyValue | undefined
  while (r.pos < end) {
    const tag = r.uint32()
    switch (tag) {
      case 0x08:
        type = r.uint32() === 1 ? EventType.DELETE : EventType.PUT
        break
      case 0x12: {
        const len = r.uint32()
        kv = readKeyValue(r, r.pos + len)
        break
      }
      case 0x1a: {
        const len = r.uint32()
        prevKv = readKeyValue(r, r.pos + len)
        break
      }
      default:
        r.skip(tag & 7)
    }
  }
  return prevKv === undefined ? { type, kv } : { type, kv, prevKv }
}

export const readHeader = (r: Reader, end: number): ResponseHeader => {
  let clusterId = 0n
  let memberId = 0n
  let revision = 0n
  let raftTerm = 0n
  while (r.pos < end) {
    const tag = r.uint32()
    switch (tag) {
      case 0x08:
        clusterId = r.uint64()
        break
      case 0x10:
        memberId = r.uint64()
        break
      case 0x18:
        revision = r.int64()
        break
      case 0x20:
        raftTerm = r.uint64()
        break
      default:
        r.skip(tag & 7)
    }
  }
  return { clusterId, memberId, revision, raftTerm }
}

/** etcdserverpb.WatchResponse from its wire bytes. Throws RangeError on a malformed message. */
export const decodeWatchResponse = (buf: Uint8Array): WireWatchResponse => {
  const r = new Reader(buf, 0, buf.length)
  const out: WireWatchResponse = {
    header: emptyHeader,
    watchId: 0,
    created: false,
    canceled: false,
    compactRevision: 0n,
    cancelReason: "",
    fragment: false,
    events: []
  }
  while (r.pos < r.end) {
    const tag = r.uint32()
    switch (tag) {
      case 0x0a: {
        const len = r.uint32()
        out.header = readHeader(r, r.pos + len)
        break
      }
      case 0x10:
        out.watchId = r.int64Number()
        break
      case 0x18:
        out.created = r.uint32() !== 0
        break
      case 0x20:
        out.canceled = r.uint32() !== 0
        break
      case 0x28:
        out.compactRevision = r.int64()
        break
      case 0x32:
        out.cancelReason = r.string()
        break
      case 0x38:
        out.fragment = r.uint32() !== 0
        break
      case 0x5a: {
        const len = r.uint32()
        out.events.push(readEvent(r, r.pos + len))
        break
      }
      default:
        r.skip(tag & 7)
    }
  }
  if (r.pos !== r.end) throw new RangeError("watch codec: message overran its end")
  return out
}

// ---- encoding (requests are rare: creates, cancels, progress) ----

export class Writer {
  private readonly bytes: Array<number> = []

  varint(value: bigint): this {
    let v = BigInt.asUintN(64, value)
    while (v >= 0x80n) {
      this.bytes.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    this.bytes.push(Number(v))
    return this
  }

  tag(field: number, wireType: number): this {
    return this.varint(BigInt((field << 3) | wireType))
  }

  /** a length-delimited field; empty bytes are written (proto3 would omit them; harmless either way) */
  lengthDelimited(field: number, payload: Uint8Array): this {
    this.tag(field, 2).varint(BigInt(payload.length))
    for (let i = 0; i < payload.length; i++) this.bytes.push(payload[i]!)
    return this
  }

  finish(): Buffer {
    return Buffer.from(this.bytes)
  }
}

export interface CreateRequestFields {
  readonly key: Uint8Array
  readonly rangeEnd: Uint8Array
  readonly startRevision: bigint
  readonly progressNotify: boolean
  /** FilterType values: 0 NOPUT, 1 NODELETE */
  readonly filters: ReadonlyArray<number>
  readonly prevKv: boolean
  readonly fragment: boolean
}

/** WatchRequest{create_request}. proto3 defaults (0, false, empty) are omitted, as Go does. */
export const encodeCreateRequest = (c: CreateRequestFields): Buffer => {
  const w = new Writer()
  if (c.key.length > 0) w.lengthDelimited(1, c.key)
  if (c.rangeEnd.length > 0) w.lengthDelimited(2, c.rangeEnd)
  if (c.startRevision !== 0n) w.tag(3, 0).varint(c.startRevision)
  if (c.progressNotify) w.tag(4, 0).varint(1n)
  if (c.filters.length > 0) {
    const packed = new Writer()
    for (const f of c.filters) packed.varint(BigInt(f))
    w.lengthDelimited(5, packed.finish())
  }
  if (c.prevKv) w.tag(6, 0).varint(1n)
  if (c.fragment) w.tag(8, 0).varint(1n)
  return new Writer().lengthDelimited(1, w.finish()).finish()
}

/** WatchRequest{cancel_request{watch_id}} */
export const encodeCancelRequest = (watchId: number): Buffer => {
  const inner = new Writer()
  if (watchId !== 0) inner.tag(1, 0).varint(BigInt(watchId))
  return new Writer().lengthDelimited(2, inner.finish()).finish()
}

/** WatchRequest{progress_request{}}: an empty message, but present, so the oneof is set. */
export const encodeProgressRequest = (): Buffer => new Writer().lengthDelimited(3, EMPTY_BYTES).finish()
