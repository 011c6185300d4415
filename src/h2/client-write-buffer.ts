/**
 * What the lean client connection (client-connection.ts) writes — grpc-go's bufWriter
 * (internal/transport/http_util.go) under controlbuf.go's loopyWriter: every frame is written
 * into one output buffer, reused for the connection's life, and its bytes go to the socket once
 * per microtask. Why a copy into a reused buffer here and a list of frames by reference in the
 * server's transport (src/server/transport/frame-output.ts): docs/architecture.md, deviation 7.
 */
import type * as net from "node:net"
import {
  Flag,
  FRAME_HEADER,
  FrameType,
  goawayFrameSize,
  PING_FRAME_SIZE,
  settingsFrameSize,
  U32_FRAME_SIZE,
  writeFrameHeader,
  writeGoawayFrame,
  writePingFrame,
  writeSettingsFrame,
  writeU32Frame
} from "./frames.js"

/** the output buffer frames are written into; flushed to the socket once per microtask */
const OUT_SIZE = 64 * 1024

export class ClientWriteBuffer {
  private out = Buffer.allocUnsafe(OUT_SIZE)
  private outPos = 0
  private flushScheduled = false
  /** the connection was closed: nothing more goes to the socket */
  private closed = false

  constructor(private readonly socket: net.Socket) {}

  /** Bytes as they are (the connection preface). */
  write(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length)
    this.out.set(bytes, at)
  }

  /** A HEADERS frame carrying the whole header `block` (END_HEADERS). */
  headers(streamId: number, block: Uint8Array): void {
    const at = this.reserve(FRAME_HEADER + block.length)
    writeFrameHeader(this.out, at, block.length, FrameType.HEADERS, Flag.END_HEADERS, streamId)
    this.out.set(block, at + FRAME_HEADER)
  }

  /** A DATA frame of `chunk`'s `n` bytes from `offset`. */
  data(streamId: number, flags: number, chunk: Uint8Array, offset: number, n: number): void {
    const at = this.reserve(FRAME_HEADER + n)
    writeFrameHeader(this.out, at, n, FrameType.DATA, flags, streamId)
    this.out.set(chunk.subarray(offset, offset + n), at + FRAME_HEADER)
  }

  /** An empty DATA frame with END_STREAM. */
  endStream(streamId: number): void {
    const at = this.reserve(FRAME_HEADER)
    writeFrameHeader(this.out, at, 0, FrameType.DATA, Flag.END_STREAM, streamId)
  }

  settings(entries: ReadonlyArray<readonly [number, number]>, ack: boolean): void {
    const at = this.reserve(settingsFrameSize(entries.length))
    writeSettingsFrame(this.out, at, ack ? Flag.ACK : 0, entries)
  }

  windowUpdate(streamId: number, increment: number): void {
    const at = this.reserve(U32_FRAME_SIZE)
    writeU32Frame(this.out, at, FrameType.WINDOW_UPDATE, streamId, increment)
  }

  rstStream(streamId: number, code: number): void {
    const at = this.reserve(U32_FRAME_SIZE)
    writeU32Frame(this.out, at, FrameType.RST_STREAM, streamId, code)
  }

  /** The ACK of the server's PING: its 8 bytes from `start` in `buf`. */
  pingAck(buf: Uint8Array, start: number): void {
    const at = this.reserve(PING_FRAME_SIZE)
    writePingFrame(this.out, at, Flag.ACK, buf, start)
  }

  goaway(code: number, debug: Uint8Array): void {
    const at = this.reserve(goawayFrameSize(debug.length))
    writeGoawayFrame(this.out, at, 0, code, debug)
  }

  /** The connection closed: nothing written after this reaches the socket. */
  close(): void {
    this.closed = true
  }

  /** Hands the bytes written to the socket (the next microtask does it anyway). */
  readonly flush = (): void => {
    this.flushScheduled = false
    if (this.outPos === 0 || this.closed) return
    // The socket keeps what it is given until sent: hand it a copy of just the bytes written (small
    // copies come from Node's buffer pool) and keep reusing `out` — a fresh 64 KiB buffer per flush
    // was most of the garbage collector's work on put/range.
    const bytes = Buffer.allocUnsafe(this.outPos)
    this.out.copy(bytes, 0, 0, this.outPos)
    this.outPos = 0
    if (this.out.length > OUT_SIZE) this.out = Buffer.allocUnsafe(OUT_SIZE) // shrink after an outsized frame
    this.socket.write(bytes)
  }

  /** Room for `n` bytes in the output buffer; returns where to write them (in `out` as it is after the call). */
  private reserve(n: number): number {
    if (this.outPos + n > this.out.length) {
      this.flush()
      if (n > this.out.length) this.out = Buffer.allocUnsafe(n)
    }
    const at = this.outPos
    this.outPos += n
    if (!this.flushScheduled) {
      this.flushScheduled = true
      queueMicrotask(this.flush)
    }
    return at
  }
}
