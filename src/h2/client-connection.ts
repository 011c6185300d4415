/**
 * A minimal HTTP/2 client connection (RFC 9113) over one TCP socket, h2c with prior knowledge —
 * what etcd serves gRPC on. It exists because node:http2's client costs 140–230 µs of user CPU
 * per unary call on this 2-core machine (a Duplex, an AsyncResource with deprecation wrappers,
 * header objects and five listeners per stream), which made the load generator the bottleneck of
 * put/range; this connection costs 12–25 µs (same machine, same load). A request is two frames
 * written into a shared output buffer, and every frame the server sends is parsed in a loop over
 * the socket's reads (frame-reader.ts): one JS callback per read, not per frame or per stream.
 *
 * What it does: streams (odd ids, opened in order, queued beyond the server's
 * MAX_CONCURRENT_STREAMS), HPACK (hpack.ts), flow control both ways, SETTINGS/PING
 * acknowledgements, RST_STREAM and GOAWAY. What it does not: TLS, server push (disabled),
 * priorities, sending trailers.
 *
 * Flow control, receiving: SETTINGS_INITIAL_WINDOW_SIZE 16 MiB per stream and a 64 MiB
 * connection window, replenished as data is consumed (consumption is immediate: callbacks are
 * synchronous). A window the size of Node's default (64 KiB) would let a server send only 64 KiB
 * before waiting for our WINDOW_UPDATE: a fan-out of millions of events/s would measure our
 * acknowledgement round trips, not the server.
 */
import * as net from "node:net"
import { FrameReader, type FrameSink } from "./frame-reader.js"
import {
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  errorName,
  Flag,
  FRAME_HEADER,
  FrameType,
  goawayFrameSize,
  PING_FRAME_SIZE,
  PREFACE,
  readUint32,
  Setting,
  settingsFrameSize,
  U32_FRAME_SIZE,
  writeFrameHeader,
  writeGoawayFrame,
  writePingFrame,
  writeSettingsFrame,
  writeU32Frame
} from "./frames.js"
import { grpcRequestHeaderBlock, HpackDecoder } from "./hpack.js"
import { H2Stream, type H2StreamHandler } from "./client-stream.js"

export { H2Stream, type H2StreamHandler } from "./client-stream.js"

export const STREAM_WINDOW = 16 * 1024 * 1024
export const CONNECTION_WINDOW = 64 * 1024 * 1024
const MAX_STREAM_ID = 2 ** 31 - 1
/** the output buffer frames are written into; flushed to the socket once per microtask */
const OUT_SIZE = 64 * 1024
/** the buffer every socket read lands in */
const READ_BUFFER = 256 * 1024

export class H2Connection implements FrameSink {
  private readonly socket: net.Socket
  private readonly streams = new Map<number, H2Stream>()
  private readonly waiting: Array<H2Stream> = []
  private readonly blocked = new Set<H2Stream>()
  private readonly decoder = new HpackDecoder()
  private readonly headerBlocks = new Map<string, Uint8Array>()
  private nextId = 1
  private active = 0
  // the server's settings
  private maxConcurrent = Infinity
  private peerInitialWindow = DEFAULT_WINDOW
  private peerMaxFrame = DEFAULT_MAX_FRAME
  private connSendWindow = DEFAULT_WINDOW
  private connRecvUnacked = 0
  // output
  private out = Buffer.allocUnsafe(OUT_SIZE)
  private outPos = 0
  private flushScheduled = false
  // input
  private readonly reader = new FrameReader(this)
  /** the stream of the DATA frame being received (undefined: one we no longer track) */
  private dataStream: H2Stream | undefined
  // a header block continued in CONTINUATION frames
  private continuing: { streamId: number; endStream: boolean; parts: Array<Uint8Array> } | undefined
  private ready = false
  private failure: string | undefined
  private closing = false
  private readonly failureListeners = new Set<(reason: string) => void>()

  /**
   * Connects; `onReady` runs once: without an argument after the server's first SETTINGS, with a
   * reason when the connection failed first. The caller bounds the wait.
   */
  constructor(
    host: string,
    port: number,
    readonly authority: string,
    private readonly onReady: (error?: string) => void
  ) {
    this.socket = net.connect({
      host,
      port,
      // Nagle off: small frames (a put, a create) must not wait for an ACK.
      noDelay: true,
      // Every read lands in this one buffer and goes straight to the frame reader: no Buffer per read
      // and no Readable machinery. So nothing may keep a view of it past the call (H2StreamHandler).
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER),
        callback: (length: number, buf: Uint8Array) => {
          try {
            this.reader.read(buf, length)
          } catch (e) {
            this.protocolError(e instanceof Error ? e.message : String(e))
          }
          return true
        }
      }
    })
    this.socket.on("error", (e) => this.fail(`connection to ${authority} failed: ${e.message}`))
    this.socket.on("close", () => this.fail(`connection to ${authority} closed`))
    this.socket.on("connect", () => {
      this.write(PREFACE)
      this.settings([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW]
      ])
      this.windowUpdate(0, CONNECTION_WINDOW - DEFAULT_WINDOW)
    })
  }

  /** Registers a listener for the connection breaking (called at once if it already has). */
  onFailure(listener: (reason: string) => void): () => void {
    if (this.failure !== undefined) {
      listener(this.failure)
      return () => {}
    }
    this.failureListeners.add(listener)
    return () => this.failureListeners.delete(listener)
  }

  get broken(): string | undefined {
    return this.closing ? "connection closed" : this.failure
  }

  /** Opens a gRPC request stream on `path` (now, or once the server's stream limit allows). */
  open(path: string, handler: H2StreamHandler): H2Stream {
    const stream = new H2Stream(path, handler)
    if (this.active < this.maxConcurrent) this.start(stream)
    else this.waiting.push(stream)
    return stream
  }

  /** Sends `data` on the stream (queued behind flow control), ending our side with `end`. */
  send(stream: H2Stream, data: Uint8Array, end: boolean): void {
    if (stream.finished || stream.localEnded || stream.endPending) return
    if (data.length > 0) stream.pending.push(data)
    if (end) stream.endPending = true
    if (stream.id !== 0) this.pump(stream)
  }

  /** Resets the stream (RST_STREAM); no callback follows. */
  reset(stream: H2Stream, code: number = ErrorCode.CANCEL): void {
    if (stream.finished) return
    if (stream.id === 0) {
      const i = this.waiting.indexOf(stream)
      if (i >= 0) this.waiting.splice(i, 1)
      stream.finished = true
      return
    }
    this.rstStream(stream.id, code)
    this.finish(stream)
  }

  /** Closes the connection at once; no callbacks follow. */
  close(): void {
    if (this.closing) return
    this.closing = true
    this.reader.stop()
    this.streams.clear()
    this.waiting.length = 0
    this.socket.destroy()
  }

  // ---- streams ----

  private start(stream: H2Stream): void {
    if (this.nextId > MAX_STREAM_ID) {
      this.fail(`connection to ${this.authority}: stream ids exhausted`)
      return
    }
    stream.id = this.nextId
    this.nextId += 2
    stream.sendWindow = this.peerInitialWindow
    this.streams.set(stream.id, stream)
    this.active++
    let block = this.headerBlocks.get(stream.path)
    if (block === undefined) {
      block = grpcRequestHeaderBlock(stream.path, this.authority)
      this.headerBlocks.set(stream.path, block)
    }
    const at = this.reserve(FRAME_HEADER + block.length)
    writeFrameHeader(this.out, at, block.length, FrameType.HEADERS, Flag.END_HEADERS, stream.id)
    this.out.set(block, at + FRAME_HEADER)
    this.pump(stream)
  }

  /** Sends what the windows allow of the stream's pending data, and END_STREAM after it. */
  private pump(stream: H2Stream): void {
    while (stream.pending.length > 0) {
      const chunk = stream.pending[0]!
      const left = chunk.length - stream.pendingOffset
      const n = Math.min(left, stream.sendWindow, this.connSendWindow, this.peerMaxFrame)
      if (n <= 0) {
        this.blocked.add(stream)
        return
      }
      const last = n === left && stream.pending.length === 1 && stream.endPending
      const at = this.reserve(FRAME_HEADER + n)
      writeFrameHeader(this.out, at, n, FrameType.DATA, last ? Flag.END_STREAM : 0, stream.id)
      this.out.set(chunk.subarray(stream.pendingOffset, stream.pendingOffset + n), at + FRAME_HEADER)
      stream.sendWindow -= n
      this.connSendWindow -= n
      if (n === left) {
        stream.pending.shift()
        stream.pendingOffset = 0
      } else {
        stream.pendingOffset += n
      }
      if (last) return this.endedLocally(stream)
    }
    this.blocked.delete(stream)
    if (stream.endPending && !stream.localEnded) {
      const at = this.reserve(FRAME_HEADER)
      writeFrameHeader(this.out, at, 0, FrameType.DATA, Flag.END_STREAM, stream.id)
      this.endedLocally(stream)
    }
  }

  private endedLocally(stream: H2Stream): void {
    stream.localEnded = true
    this.blocked.delete(stream)
    if (stream.remoteEnded) this.finish(stream)
  }

  private endedRemotely(stream: H2Stream): void {
    stream.remoteEnded = true
    stream.handler.onEnd()
    if (stream.finished) return
    // The server's answer is complete; if we were still sending, tell it we are done too.
    if (!stream.localEnded) this.rstStream(stream.id, ErrorCode.NO_ERROR)
    this.finish(stream)
  }

  private finish(stream: H2Stream): void {
    if (stream.finished) return
    stream.finished = true
    this.blocked.delete(stream)
    if (this.streams.delete(stream.id)) this.active--
    while (this.waiting.length > 0 && this.active < this.maxConcurrent) this.start(this.waiting.shift()!)
  }

  // ---- output ----

  /** Room for `n` bytes in the output buffer; returns where to write them. */
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

  private readonly flush = (): void => {
    this.flushScheduled = false
    if (this.outPos === 0 || this.closing) return
    // The socket keeps what it is given until sent: hand it a copy of just the bytes written (small
    // copies come from Node's buffer pool) and keep reusing `out` — a fresh 64 KiB buffer per flush
    // was most of the garbage collector's work on put/range.
    const bytes = Buffer.allocUnsafe(this.outPos)
    this.out.copy(bytes, 0, 0, this.outPos)
    this.outPos = 0
    if (this.out.length > OUT_SIZE) this.out = Buffer.allocUnsafe(OUT_SIZE) // shrink after an outsized frame
    this.socket.write(bytes)
  }

  private write(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length)
    this.out.set(bytes, at)
  }

  private settings(entries: ReadonlyArray<readonly [number, number]>, ack = false): void {
    writeSettingsFrame(this.out, this.reserve(settingsFrameSize(entries.length)), ack ? Flag.ACK : 0, entries)
  }

  private windowUpdate(streamId: number, increment: number): void {
    writeU32Frame(this.out, this.reserve(U32_FRAME_SIZE), FrameType.WINDOW_UPDATE, streamId, increment)
  }

  private rstStream(streamId: number, code: number): void {
    writeU32Frame(this.out, this.reserve(U32_FRAME_SIZE), FrameType.RST_STREAM, streamId, code)
  }

  // ---- input (FrameSink: called by the reader) ----

  dataStart(streamId: number, _flags: number, length: number): void {
    if (this.continuing !== undefined) throw new RangeError("header block interrupted by DATA")
    const stream = this.streams.get(streamId)
    this.dataStream = stream
    // Everything received counts against the windows, padding and closed streams included.
    this.connRecvUnacked += length
    if (this.connRecvUnacked >= CONNECTION_WINDOW / 2) {
      this.windowUpdate(0, this.connRecvUnacked)
      this.connRecvUnacked = 0
    }
    if (stream !== undefined) {
      stream.recvUnacked += length
      if (stream.recvUnacked >= STREAM_WINDOW / 2 && !stream.remoteEnded) {
        this.windowUpdate(stream.id, stream.recvUnacked)
        stream.recvUnacked = 0
      }
    }
  }

  data(buf: Uint8Array, start: number, end: number): void {
    const stream = this.dataStream
    if (stream !== undefined && !stream.finished) stream.handler.onData(buf, start, end)
  }

  dataEnd(_streamId: number, flags: number): void {
    const stream = this.dataStream
    this.dataStream = undefined
    if (stream !== undefined && !stream.finished && (flags & Flag.END_STREAM) !== 0) this.endedRemotely(stream)
  }

  frame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    if (this.continuing !== undefined && type !== FrameType.CONTINUATION) {
      throw new RangeError("header block interrupted by another frame")
    }
    switch (type) {
      case FrameType.HEADERS: {
        if ((flags & Flag.PADDED) !== 0) {
          const pad = buf[start++]!
          end -= pad
          if (end < start) throw new RangeError("HEADERS padding longer than the frame")
        }
        if ((flags & Flag.PRIORITY) !== 0) start += 5
        const endStream = (flags & Flag.END_STREAM) !== 0
        if ((flags & Flag.END_HEADERS) !== 0) this.headerBlock(streamId, endStream, buf, start, end)
        else this.continuing = { streamId, endStream, parts: [buf.slice(start, end)] }
        return
      }
      case FrameType.CONTINUATION: {
        const c = this.continuing
        if (c === undefined || c.streamId !== streamId) throw new RangeError("CONTINUATION without its HEADERS")
        c.parts.push(buf.slice(start, end))
        if ((flags & Flag.END_HEADERS) !== 0) {
          this.continuing = undefined
          const block = Buffer.concat(c.parts)
          this.headerBlock(streamId, c.endStream, block, 0, block.length)
        }
        return
      }
      case FrameType.RST_STREAM: {
        const stream = this.streams.get(streamId)
        if (stream === undefined) return
        this.finish(stream)
        stream.handler.onReset(`stream reset by the server (RST_STREAM ${errorName(readUint32(buf, start))})`)
        return
      }
      case FrameType.SETTINGS:
        if ((flags & Flag.ACK) !== 0) return
        for (let at = start; at + 6 <= end; at += 6)
          this.setting((buf[at]! << 8) | buf[at + 1]!, readUint32(buf, at + 2))
        this.settings([], true)
        if (!this.ready) {
          this.ready = true
          this.onReady()
        }
        return
      case FrameType.PING:
        if ((flags & Flag.ACK) === 0) writePingFrame(this.out, this.reserve(PING_FRAME_SIZE), Flag.ACK, buf, start)
        return
      case FrameType.GOAWAY: {
        const code = readUint32(buf, start + 4)
        const debug = Buffer.from(buf.subarray(start + 8, end)).toString("latin1")
        this.fail(`server at ${this.authority} sent GOAWAY (${errorName(code)}${debug === "" ? "" : `: ${debug}`})`)
        return
      }
      case FrameType.WINDOW_UPDATE: {
        const increment = readUint32(buf, start) & 0x7fffffff
        if (streamId === 0) {
          this.connSendWindow += increment
          for (const stream of [...this.blocked]) this.pump(stream)
        } else {
          const stream = this.streams.get(streamId)
          if (stream === undefined) return
          stream.sendWindow += increment
          this.pump(stream)
        }
        return
      }
      case FrameType.PUSH_PROMISE:
        throw new RangeError("PUSH_PROMISE, though push was disabled")
      default:
        return // PRIORITY and unknown frame types are ignored
    }
  }

  private headerBlock(streamId: number, endStream: boolean, buf: Uint8Array, start: number, end: number): void {
    // Decode even for a stream we no longer track: the dynamic table must stay in step.
    const headers = this.decoder.decode(buf, start, end)
    const stream = this.streams.get(streamId)
    if (stream === undefined || stream.finished) return
    stream.handler.onHeaders(headers, endStream)
    if (endStream && !stream.finished) this.endedRemotely(stream)
  }

  private setting(id: number, value: number): void {
    switch (id) {
      case Setting.MAX_CONCURRENT_STREAMS:
        this.maxConcurrent = value
        break
      case Setting.INITIAL_WINDOW_SIZE: {
        const delta = value - this.peerInitialWindow
        this.peerInitialWindow = value
        for (const stream of this.streams.values()) stream.sendWindow += delta
        for (const stream of [...this.blocked]) this.pump(stream)
        break
      }
      case Setting.MAX_FRAME_SIZE:
        this.peerMaxFrame = value
        break
      default:
        break // our header block uses no dynamic table, so HEADER_TABLE_SIZE does not concern us
    }
  }

  // ---- failure ----

  private protocolError(reason: string): void {
    if (this.closing || this.failure !== undefined) return
    // Tell the server why, then drop the connection.
    const message = Buffer.from(reason, "latin1")
    writeGoawayFrame(this.out, this.reserve(goawayFrameSize(message.length)), 0, ErrorCode.PROTOCOL_ERROR, message)
    this.flush()
    this.fail(`connection to ${this.authority}: HTTP/2 protocol error: ${reason}`)
    this.socket.destroy()
  }

  private fail(reason: string): void {
    if (this.closing || this.failure !== undefined) return
    this.failure = reason
    this.reader.stop()
    const streams = [...this.streams.values(), ...this.waiting]
    this.streams.clear()
    this.waiting.length = 0
    this.socket.destroy()
    if (!this.ready) this.onReady(reason)
    for (const stream of streams) {
      stream.finished = true
      stream.handler.onReset(reason)
    }
    for (const listener of [...this.failureListeners]) listener(reason)
    this.failureListeners.clear()
  }
}
