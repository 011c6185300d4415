/**
 * The bench's protobuf, as small as its job: a writer for the few requests it sends (sizes known up
 * front, so each request is one allocation that already holds its gRPC prefix) and a reusable
 * reader for shallow scans (one instance per scanner, no object per message). Numbers are JS
 * numbers: revisions stay far below 2^53; negative int64s (watch id -1) are read exactly.
 */
import { GRPC_PREFIX_BYTES, writeGrpcPrefix } from "../h2/grpc-message-prefix.js"

/** Bytes of `n` (0 ≤ n < 2^53) as a varint. */
export const varintSize = (n: number): number => {
  let size = 1
  while (n >= 0x80) {
    n = Math.floor(n / 128)
    size++
  }
  return size
}

/** Bytes of a length-delimited field (tag, length, payload). */
export const bytesFieldSize = (field: number, length: number): number =>
  varintSize((field << 3) | 2) + varintSize(length) + length

/** Bytes of a varint field. */
export const varintFieldSize = (field: number, value: number): number => varintSize(field << 3) + varintSize(value)

export class PbWriter {
  constructor(
    readonly buf: Buffer,
    public pos: number
  ) {}

  varint(n: number): this {
    const buf = this.buf
    // Division, not `>>>`: values may exceed 32 bits.
    while (n >= 0x80) {
      buf[this.pos++] = (n % 128) | 0x80
      n = Math.floor(n / 128)
    }
    buf[this.pos++] = n
    return this
  }

  /** A varint field (callers omit proto3 zero values themselves). */
  uint(field: number, value: number): this {
    return this.varint(field << 3).varint(value)
  }

  bytes(field: number, payload: Uint8Array): this {
    this.varint((field << 3) | 2).varint(payload.length)
    this.buf.set(payload, this.pos)
    this.pos += payload.length
    return this
  }

  /** The head of an embedded message of `length` bytes; its fields follow. */
  message(field: number, length: number): this {
    return this.varint((field << 3) | 2).varint(length)
  }
}

/**
 * A writer over a fresh gRPC message frame of `bodyLength` bytes: the 5-byte prefix (not
 * compressed, big-endian length) is written and the writer stands at the body.
 */
export const grpcFrameWriter = (bodyLength: number): PbWriter => {
  const buf = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + bodyLength)
  writeGrpcPrefix(buf, 0, bodyLength)
  return new PbWriter(buf, GRPC_PREFIX_BYTES)
}

/** Throws on a malformed message; the stream that carried it is then reported broken. */
export class PbReader {
  buf: Uint8Array = new Uint8Array(0)
  pos = 0
  end = 0

  reset(buf: Uint8Array, start: number, end: number): void {
    this.buf = buf
    this.pos = start
    this.end = end
  }

  /** A varint as a number: exact below 2^53, and for negative int64s (10-byte encodings). */
  varint(): number {
    const buf = this.buf
    let b = buf[this.pos++]!
    if (b < 0x80) return b
    // Fast path: up to 4 bytes (values below 2^28, i.e. tags, lengths, most revisions).
    let value = b & 0x7f
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 7
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 14
    if (b < 0x80) return value
    b = buf[this.pos++]!
    value |= (b & 0x7f) << 21
    if (b < 0x80) return value
    return this.varintTail(value, 28)
  }

  private varintTail(low: number, shift: number): number {
    const start = this.pos - 4
    let value = low
    for (;;) {
      if (this.pos >= this.end) throw new RangeError("protobuf: varint beyond message end")
      const b = this.buf[this.pos++]!
      value += (b & 0x7f) * 2 ** shift
      if (b < 0x80) break
      shift += 7
    }
    if (shift < 63) return value
    // Ten bytes: a negative int64; recompute exactly.
    let big = 0n
    for (let i = this.pos - 1; i >= start; i--) big = (big << 7n) | BigInt(this.buf[i]! & 0x7f)
    return Number(BigInt.asIntN(64, big))
  }

  /** Reads a length prefix and returns where the delimited payload ends (checked against the message end). */
  delimitedEnd(): number {
    const length = this.varint()
    const end = this.pos + length
    if (end > this.end) throw new RangeError("protobuf: length beyond message end")
    return end
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        while (this.buf[this.pos++]! >= 0x80) {
          if (this.pos >= this.end) throw new RangeError("protobuf: varint beyond message end")
        }
        return
      case 1:
        this.pos += 8
        return
      case 2:
        this.pos = this.delimitedEnd()
        return
      case 5:
        this.pos += 4
        return
      default:
        throw new RangeError(`protobuf: unsupported wire type ${wireType}`)
    }
  }

  utf8(start: number, end: number): string {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start).toString("utf8")
  }
}
