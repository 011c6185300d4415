/**
 * HTTP/2 frames out of a byte stream, one socket read at a time. DATA payloads are handed on as
 * they arrive — a frame split across reads is never assembled — and their padding stripped;
 * every other frame (small: HEADERS, SETTINGS, WINDOW_UPDATE, ...) is handed on whole, in place
 * when it sits inside the read, else assembled first. Shared by the bench's client
 * (src/h2/client-connection.ts) and the server's lean transport (src/server/transport/).
 */
import { DEFAULT_MAX_FRAME, Flag, FRAME_HEADER, FrameType, readUint32 } from "./frames.js"

export interface FrameSink {
  /** A DATA frame begins; `length` includes padding (flow control counts it). */
  dataStart(streamId: number, flags: number, length: number): void
  /** DATA payload bytes (no padding), valid only during the call. */
  data(buf: Uint8Array, start: number, end: number): void
  /** The DATA frame that began last is complete. */
  dataEnd(streamId: number, flags: number): void
  /** Any other frame, whole: its payload is buf[start, end), valid only during the call. */
  frame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void
}

/** A frame longer than the reader's maximum: a FRAME_SIZE_ERROR connection error (RFC 9113 §4.2). */
export class FrameSizeError extends RangeError {}

export class FrameReader {
  private readonly head = new Uint8Array(FRAME_HEADER)
  private headHave = 0
  private inFrame = false
  private type = 0
  private flags = 0
  private streamId = 0
  private length = 0
  private payload = new Uint8Array(1024)
  private payloadHave = 0
  private dataLeft = 0
  private padLeft = 0
  private padPending = false
  private stopped = false

  /** `maxFrameSize`: our SETTINGS_MAX_FRAME_SIZE (the default unless we announced more). */
  constructor(
    private readonly sink: FrameSink,
    private readonly maxFrameSize: number = DEFAULT_MAX_FRAME
  ) {}

  /** Reads nothing more (the connection is gone). */
  stop(): void {
    this.stopped = true
  }

  /** Takes buf[0, length). Throws RangeError on a malformed frame (a connection error). */
  read(buf: Uint8Array, length: number): void {
    let pos = 0
    while (pos < length && !this.stopped) {
      if (this.inFrame) {
        pos = this.type === FrameType.DATA ? this.dataBytes(buf, pos, length) : this.payloadBytes(buf, pos, length)
        continue
      }
      if (this.headHave === 0 && length - pos >= FRAME_HEADER) {
        this.begin(buf, pos)
        pos += FRAME_HEADER
      } else {
        const take = Math.min(FRAME_HEADER - this.headHave, length - pos)
        this.head.set(buf.subarray(pos, pos + take), this.headHave)
        this.headHave += take
        pos += take
        if (this.headHave < FRAME_HEADER) return
        this.headHave = 0
        this.begin(this.head, 0)
      }
      if (this.length === 0) {
        // no payload: complete with its header
        this.inFrame = false
        if (this.type === FrameType.DATA) this.sink.dataEnd(this.streamId, this.flags)
        else this.sink.frame(this.type, this.flags, this.streamId, this.payload, 0, 0)
      }
    }
  }

  private begin(buf: Uint8Array, at: number): void {
    this.length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!
    this.type = buf[at + 3]!
    this.flags = buf[at + 4]!
    this.streamId = readUint32(buf, at + 5) & 0x7fffffff
    this.inFrame = true
    // the peer must keep to the SETTINGS_MAX_FRAME_SIZE we announced (the client: the default)
    if (this.length > this.maxFrameSize) {
      throw new FrameSizeError(`frame of ${this.length} bytes, above the ${this.maxFrameSize} we allow`)
    }
    if (this.type === FrameType.DATA) {
      this.dataLeft = this.length
      this.padLeft = 0
      this.padPending = (this.flags & Flag.PADDED) !== 0
      this.sink.dataStart(this.streamId, this.flags, this.length)
    } else {
      this.payloadHave = 0
    }
  }

  private dataBytes(buf: Uint8Array, pos: number, end: number): number {
    if (this.padPending) {
      this.padLeft = buf[pos++]!
      this.dataLeft--
      this.padPending = false
      if (this.padLeft > this.dataLeft) throw new RangeError("DATA padding longer than the frame")
    }
    const take = Math.min(this.dataLeft - this.padLeft, end - pos)
    if (take > 0) {
      this.sink.data(buf, pos, pos + take)
      pos += take
      this.dataLeft -= take
    }
    if (this.dataLeft === this.padLeft) {
      const skip = Math.min(this.padLeft, end - pos)
      pos += skip
      this.dataLeft -= skip
      this.padLeft -= skip
    }
    if (this.dataLeft === 0) {
      this.inFrame = false
      this.sink.dataEnd(this.streamId, this.flags)
    }
    return pos
  }

  private payloadBytes(buf: Uint8Array, pos: number, end: number): number {
    const length = this.length
    if (this.payloadHave === 0 && end - pos >= length) {
      this.inFrame = false
      this.sink.frame(this.type, this.flags, this.streamId, buf, pos, pos + length)
      return pos + length
    }
    if (this.payload.length < length) {
      const bigger = new Uint8Array(Math.max(length, this.payload.length * 2))
      bigger.set(this.payload.subarray(0, this.payloadHave))
      this.payload = bigger
    }
    const take = Math.min(length - this.payloadHave, end - pos)
    this.payload.set(buf.subarray(pos, pos + take), this.payloadHave)
    this.payloadHave += take
    if (this.payloadHave === length) {
      this.inFrame = false
      this.sink.frame(this.type, this.flags, this.streamId, this.payload, 0, length)
    }
    return pos + take
  }
}
