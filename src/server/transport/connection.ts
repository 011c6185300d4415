/**
 * One HTTP/2 connection of the lean gRPC transport — grpc-go's internal/transport/http2_server.go
 * twin: the frames are read in a loop over the socket's reads (src/h2/frame-reader.ts), header
 * blocks decoded with HPACK (src/h2/hpack.ts), gRPC messages deframed straight into the calls
 * (server-stream.ts) and responses framed once into one socket write per tick. SETTINGS, PING,
 * GOAWAY, RST_STREAM and WINDOW_UPDATE are answered here; flow control both ways; the keepalive
 * pings and the client ping policy (keepalive-policy.ts); the limits against hostile peers
 * (limits.ts). Plain synchronous code per frame and per call: no fiber, no Effect.
 *
 * TLS is node:tls' (terminated in cmux.ts, ALPN h2); this reads and writes the socket it is given.
 */
import type { Duplex } from "node:stream"
import * as tls from "node:tls"
import { FrameReader, FrameSizeError, type FrameSink } from "../../h2/frame-reader.js"
import {
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FRAME_HEADER,
  FrameType,
  PREFACE,
  readUint32,
  Setting,
  writeFrameHeader
} from "../../h2/frames.js"
import { type HeaderList, HpackDecoder, HpackError } from "../../h2/hpack.js"
import { PingStrikes } from "../keepalive-policy.js"
import { parseGrpcTimeout, statusBlock } from "./grpc-status.js"
import { H2ConnectionError } from "./h2-error.js"
import type { H2Stream } from "./h2-stream.js"
import { type HttpHandler, HttpStream } from "./http-stream.js"
import * as L from "./limits.js"
import type { Route } from "./route.js"
import { ServerStream, type StreamOwner } from "./server-stream.js"

export interface ConnectionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS; Infinity: not announced (no limit) */
  readonly maxConcurrentStreams: number
  readonly maxReceiveMessageBytes: number
  /** the server's keepalive pings: every interval (0: none), the connection ends when one is unanswered for timeout (0: never) */
  readonly keepaliveIntervalMs: number
  readonly keepaliveTimeoutMs: number
  /** --grpc-keepalive-min-time */
  readonly pingMinTimeMs: number
  /** the preface, the first SETTINGS and the ACK of ours, and any header block begun, must come within this */
  readonly handshakeTimeoutMs: number
}

export interface Router {
  route(path: string): Route | undefined
  /** grpc-go's Unimplemented text for a path no service has */
  unknown(path: string): string
  /** a call ran: the count of calls of an unknown method, etc. are the runner's; this is for tests */
  readonly draining: boolean
  /** where a request that is not gRPC goes (etcd's mux: its content-type is not application/grpc) */
  readonly http?: HttpHandler | undefined
}

const GRPC_UNIMPLEMENTED = 12
const GRPC_INTERNAL = 13
const MAX_WINDOW = 2 ** 31 - 1
const SMALL_WRITE = 64 * 1024

export class H2ServerConnection implements FrameSink, StreamOwner {
  private readonly reader = new FrameReader(this, L.MAX_FRAME_SIZE)
  private readonly decoder = new HpackDecoder(L.HEADER_TABLE_SIZE, L.MAX_HEADER_LIST_SIZE, L.MAX_HEADER_FIELDS)
  /** streams we reset ourselves lately: the client's HEADERS (trailers) on them are no error */
  private readonly resetByUs: Array<number> = []
  readonly streams = new Map<number, H2Stream>()
  private readonly blocked = new Set<H2Stream>()
  private prefaceHave = 0
  private settingsSeen = false
  private lastStreamId = 0
  /** GOAWAY sent: streams above `lastStreamId` at that moment are refused */
  private goawaySent = false
  private closing = false
  destroyed = false

  // header block assembly (HEADERS + CONTINUATION)
  private blockStream = 0
  private blockFlags = 0
  private block: Array<Buffer> = []
  private blockBytes = 0
  private blockFrames = 0
  private blockTimer: ReturnType<typeof setTimeout> | undefined

  // flow control
  private sendWindow = DEFAULT_WINDOW
  private recvWindow = DEFAULT_WINDOW
  private recvUnacked = 0
  private peerInitialWindow = DEFAULT_WINDOW
  private peerMaxFrame = DEFAULT_MAX_FRAME

  // the DATA frame being read
  private dataStream: H2Stream | undefined
  private dataLength = 0
  private dataSeen = 0

  // output: frames gathered during a tick, written once
  private out: Array<Uint8Array> = []
  private outBytes = 0
  private flushScheduled = false
  private queuedControl = 0

  // hostile peers
  private resetTokens = L.RESET_BURST
  private resetAt = performance.now()
  private prefaceTimer: ReturnType<typeof setTimeout> | undefined
  private readonly pings: PingStrikes
  private keepaliveTimer: ReturnType<typeof setInterval> | undefined
  private pingAckTimer: ReturnType<typeof setTimeout> | undefined

  readonly peer: string
  private readonly peerAddress: {
    readonly remoteAddress?: string | undefined
    readonly remotePort?: number | undefined
  }
  readonly maxReceiveMessageBytes: number

  constructor(
    private readonly socket: Duplex,
    private readonly router: Router,
    private readonly options: ConnectionOptions,
    private readonly onClose: (c: H2ServerConnection) => void
  ) {
    const s = socket as Partial<tls.TLSSocket>
    this.peer = `${s.remoteAddress ?? "unknown"}:${s.remotePort ?? 0}`
    this.peerAddress = { remoteAddress: s.remoteAddress, remotePort: s.remotePort }
    this.maxReceiveMessageBytes = options.maxReceiveMessageBytes
    this.pings = new PingStrikes(options.pingMinTimeMs)
  }

  /** Sends our SETTINGS and starts reading. */
  start(): void {
    const settings: Array<[number, number]> = [
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, L.STREAM_WINDOW],
      [Setting.MAX_HEADER_LIST_SIZE, L.MAX_HEADER_LIST_SIZE]
    ]
    if (this.options.maxConcurrentStreams !== Infinity) {
      settings.push([Setting.MAX_CONCURRENT_STREAMS, this.options.maxConcurrentStreams])
    }
    const payload = Buffer.allocUnsafe(settings.length * 6)
    settings.forEach(([id, value], i) => {
      payload.writeUInt16BE(id, i * 6)
      payload.writeUInt32BE(value, i * 6 + 2)
    })
    this.writeFrame(FrameType.SETTINGS, 0, 0, payload)
    this.windowUpdate(0, L.CONNECTION_WINDOW - DEFAULT_WINDOW)
    this.recvWindow = L.CONNECTION_WINDOW
    // slowloris: the preface, the client's SETTINGS and its ACK of ours, in time (hostile-spec 9a, 9c)
    this.prefaceTimer = setTimeout(() => {
      if (this.prefaceHave < PREFACE.length) this.destroy()
      else this.connectionError(ErrorCode.SETTINGS_TIMEOUT, "no SETTINGS or SETTINGS ACK in time")
    }, this.options.handshakeTimeoutMs)
    if (this.options.keepaliveIntervalMs > 0) {
      this.keepaliveTimer = setInterval(() => this.keepalivePing(), this.options.keepaliveIntervalMs)
    }
    this.socket.on("data", (chunk: Buffer) => this.onData(chunk))
    this.socket.on("drain", () => this.flushBlocked())
    this.socket.on("error", () => this.destroy())
    this.socket.on("end", () => this.destroy())
    this.socket.on("close", () => this.destroy())
    this.socket.resume()
  }

  // ------------------------------------------------------------------ reading

  private onData(chunk: Buffer): void {
    if (this.destroyed) return
    let pos = 0
    if (this.prefaceHave < PREFACE.length) {
      while (pos < chunk.length && this.prefaceHave < PREFACE.length) {
        if (chunk[pos++] !== PREFACE[this.prefaceHave++]) {
          return this.connectionError(ErrorCode.PROTOCOL_ERROR, "bad client preface")
        }
      }
      if (pos === chunk.length) return
    }
    if ((this.socket as { writableLength?: number }).writableLength === 0) this.queuedControl = 0
    try {
      this.reader.read(pos === 0 ? chunk : chunk.subarray(pos), chunk.length - pos)
    } catch (e) {
      if (e instanceof H2ConnectionError) this.connectionError(e.code, e.message)
      else if (e instanceof FrameSizeError) this.connectionError(ErrorCode.FRAME_SIZE_ERROR, e.message)
      else if (e instanceof HpackError || (e instanceof RangeError && e.message.startsWith("HPACK")))
        this.connectionError(ErrorCode.COMPRESSION_ERROR, e.message)
      else if (e instanceof RangeError) this.connectionError(ErrorCode.PROTOCOL_ERROR, e.message)
      // a bug of ours (or a listener's) costs this connection, never the process
      else this.connectionError(ErrorCode.INTERNAL_ERROR, e instanceof Error ? e.message : String(e))
    }
  }

  dataStart(streamId: number, _flags: number, length: number): void {
    this.expectNoBlock()
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on stream 0")
    if (length > this.recvWindow)
      throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "connection window exceeded")
    this.recvWindow -= length
    // the connection's window is given back as data arrives (grpc-go's trInFlow); streams' as it is read
    this.recvUnacked += length
    if (this.recvUnacked >= L.CONNECTION_WINDOW / 2) {
      this.windowUpdate(0, this.recvUnacked)
      this.recvWindow += this.recvUnacked
      this.recvUnacked = 0
    }
    this.dataLength = length
    this.dataSeen = 0
    const s = this.streams.get(streamId)
    this.dataStream = undefined
    if (s === undefined) {
      if (streamId > this.lastStreamId) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on an idle stream")
      return // a stream closed lately: dropped (RFC 9113 §5.1)
    }
    if (s.remoteEnded) return this.streamError(s, ErrorCode.STREAM_CLOSED)
    if (length > s.recvWindow) return this.streamError(s, ErrorCode.FLOW_CONTROL_ERROR)
    s.recvWindow -= length
    this.dataStream = s
  }

  data(buf: Uint8Array, start: number, end: number): void {
    const s = this.dataStream
    if (s === undefined) return
    this.dataSeen += end - start
    s.data(buf, start, end)
  }

  dataEnd(_streamId: number, flags: number): void {
    const s = this.dataStream
    this.dataStream = undefined
    if (s === undefined || s.closed) return
    // padding counts against the window but is nobody's to read
    if (this.dataLength > this.dataSeen) this.consumed(s, this.dataLength - this.dataSeen)
    if ((flags & Flag.END_STREAM) !== 0) this.remoteEnd(s)
  }

  frame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    if (this.blockStream !== 0) {
      if (type !== FrameType.CONTINUATION || streamId !== this.blockStream) {
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "expected CONTINUATION")
      }
      this.blockFrames++
      if (this.blockFrames > L.MAX_CONTINUATIONS) {
        throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many CONTINUATION frames")
      }
      this.appendBlock(buf, start, end)
      if ((flags & Flag.END_HEADERS) !== 0) {
        const block = Buffer.concat(this.block)
        const id = this.blockStream
        this.endBlock()
        this.headerBlock(id, this.blockFlags, block, 0, block.length)
      }
      return
    }
    if (!this.settingsSeen && type !== FrameType.SETTINGS) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "the client preface must be followed by SETTINGS")
    }
    const length = end - start
    switch (type) {
      case FrameType.HEADERS:
        return this.headers(flags, streamId, buf, start, end)
      case FrameType.SETTINGS:
        return this.settings(flags, streamId, buf, start, length)
      case FrameType.PING:
        return this.ping(flags, streamId, buf, start, length)
      case FrameType.WINDOW_UPDATE:
        return this.windowUpdateIn(streamId, buf, start, length)
      case FrameType.RST_STREAM:
        return this.rstStream(streamId, buf, start, length)
      case FrameType.GOAWAY:
        if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "GOAWAY on a stream")
        // the client leaves: its open calls finish; the socket closes when they have
        this.closing = true
        return this.maybeEnd()
      case FrameType.PRIORITY:
        if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PRIORITY on stream 0")
        if (length !== 5) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "PRIORITY length not 5")
        return
      case FrameType.PUSH_PROMISE:
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PUSH_PROMISE from a client")
      case FrameType.CONTINUATION:
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "CONTINUATION without HEADERS")
      default:
      // unknown frame types are ignored (RFC 9113 §4.1)
    }
  }

  private expectNoBlock(): void {
    if (this.blockStream !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "expected CONTINUATION")
    if (!this.settingsSeen) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "the client preface must be followed by SETTINGS")
    }
  }

  private settings(flags: number, streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS on a stream")
    if ((flags & Flag.ACK) !== 0) {
      if (length !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS ACK with a payload")
      this.settingsAcked = true
      this.handshakeDone()
      return
    }
    if (length % 6 !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS length not a multiple of 6")
    if (!this.settingsSeen) {
      this.settingsSeen = true
      this.handshakeDone()
    }
    for (let at = start; at < start + length; at += 6) {
      const id = (buf[at]! << 8) | buf[at + 1]!
      const value = readUint32(buf, at + 2)
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW)
          throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE too large")
        const delta = value - this.peerInitialWindow
        this.peerInitialWindow = value
        for (const s of this.streams.values()) {
          s.sendWindow += delta
          if (s.sendWindow > MAX_WINDOW)
            throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "stream window overflow")
        }
      } else if (id === Setting.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 16777215) {
          throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "MAX_FRAME_SIZE out of range")
        }
        this.peerMaxFrame = value
      } else if (id === Setting.ENABLE_PUSH) {
        if (value > 1) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "ENABLE_PUSH not 0 or 1")
      }
      // HEADER_TABLE_SIZE: our encoder uses no dynamic table; the others do not bind a server
    }
    this.control(FrameType.SETTINGS, Flag.ACK, Buffer.alloc(0))
    this.flushBlocked()
  }

  private settingsAcked = false

  private handshakeDone(): void {
    if (this.settingsSeen && this.settingsAcked && this.prefaceTimer !== undefined) {
      clearTimeout(this.prefaceTimer)
      this.prefaceTimer = undefined
    }
  }

  private ping(flags: number, streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PING on a stream")
    if (length !== 8) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "PING payload not 8 bytes")
    if ((flags & Flag.ACK) !== 0) {
      if (this.pingAckTimer !== undefined) clearTimeout(this.pingAckTimer)
      this.pingAckTimer = undefined
      return
    }
    if (this.pings.onPing(this.streams.size)) {
      return this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "too_many_pings", "too_many_pings")
    }
    this.control(FrameType.PING, Flag.ACK, Buffer.from(buf.subarray(start, start + 8)))
  }

  private windowUpdateIn(streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "WINDOW_UPDATE length not 4")
    const increment = readUint32(buf, start) & 0x7fffffff
    if (streamId === 0) {
      if (increment === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0")
      this.sendWindow += increment
      if (this.sendWindow > MAX_WINDOW) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "window overflow")
      this.flushBlocked()
      return
    }
    const s = this.streams.get(streamId)
    if (s === undefined) {
      if (streamId > this.lastStreamId)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream")
      return
    }
    if (increment === 0) return this.streamError(s, ErrorCode.PROTOCOL_ERROR)
    s.sendWindow += increment
    if (s.sendWindow > MAX_WINDOW) return this.streamError(s, ErrorCode.FLOW_CONTROL_ERROR)
    this.flush(s)
  }

  private rstStream(streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on stream 0")
    if (length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "RST_STREAM length not 4")
    void readUint32(buf, start)
    const s = this.streams.get(streamId)
    if (s === undefined) {
      if (streamId > this.lastStreamId)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on an idle stream")
      return
    }
    // rapid reset (CVE-2023-44487): streams opened and reset faster than a token bucket allows
    const now = performance.now()
    this.resetTokens = Math.min(L.RESET_BURST, this.resetTokens + ((now - this.resetAt) / 1000) * L.RESET_RATE)
    this.resetAt = now
    this.resetTokens--
    this.closeStream(s)
    s.cancel()
    if (this.resetTokens < 0) this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many stream resets")
  }

  // ------------------------------------------------------------------ header blocks and new calls

  private headers(flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "HEADERS on stream 0")
    let from = start
    let to = end
    if ((flags & Flag.PADDED) !== 0) {
      if (to - from < 1) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "HEADERS padding length missing")
      const pad = buf[from++]!
      if (pad > to - from)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "HEADERS padding longer than the frame")
      to -= pad
    }
    if ((flags & Flag.PRIORITY) !== 0) {
      if (to - from < 5) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "HEADERS priority missing")
      if ((readUint32(buf, from) & 0x7fffffff) === streamId) {
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "stream depends on itself")
      }
      from += 5
    }
    if ((flags & Flag.END_HEADERS) !== 0) return this.headerBlock(streamId, flags, buf, from, to)
    this.blockStream = streamId
    this.blockFlags = flags
    this.block = []
    this.blockBytes = 0
    this.blockFrames = 0
    this.appendBlock(buf, from, to)
    // slowloris on a header block: it holds the connection's HPACK state (hostile-spec 9b)
    this.blockTimer = setTimeout(
      () => this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "header block not completed in time"),
      this.options.handshakeTimeoutMs
    )
  }

  private appendBlock(buf: Uint8Array, start: number, end: number): void {
    this.blockBytes += end - start
    if (this.blockBytes > L.MAX_HEADER_BLOCK_BYTES) {
      throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
    }
    this.block.push(Buffer.from(buf.subarray(start, end)))
  }

  private endBlock(): void {
    this.blockStream = 0
    this.block = []
    if (this.blockTimer !== undefined) clearTimeout(this.blockTimer)
    this.blockTimer = undefined
  }

  private headerBlock(streamId: number, flags: number, buf: Uint8Array, start: number, end: number): void {
    const headers = this.decoder.decode(buf, start, end)
    const endStream = (flags & Flag.END_STREAM) !== 0
    const existing = this.streams.get(streamId)
    if (existing !== undefined) {
      // trailers from the client: they must end the stream
      if (!endStream || existing.remoteEnded) return this.streamError(existing, ErrorCode.PROTOCOL_ERROR)
      this.remoteEnd(existing)
      return
    }
    if (streamId % 2 === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "received an illegal stream id")
    if (streamId <= this.lastStreamId) {
      // trailers on a stream we reset ourselves are no error (RFC 9113 §5.1); any other old id is
      if (this.resetByUs.includes(streamId)) return
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "received an illegal stream id")
    }
    if (this.goawaySent) return this.rstIdle(streamId, ErrorCode.REFUSED_STREAM)
    this.lastStreamId = streamId
    if (this.decoder.listTooLarge) {
      // over SETTINGS_MAX_HEADER_LIST_SIZE or 128 fields: that stream is refused (node's code), the connection lives
      return this.rstIdle(streamId, ErrorCode.ENHANCE_YOUR_CALM)
    }
    if (this.streams.size >= this.options.maxConcurrentStreams) {
      return this.rstIdle(streamId, ErrorCode.REFUSED_STREAM)
    }
    let method: string | undefined
    let path: string | undefined
    let contentType: string | undefined
    let timeout: string | undefined
    let encoding: string | undefined
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!
      switch (name) {
        case ":method":
          method = headers[i + 1]
          break
        case ":path":
          path = headers[i + 1]
          break
        case "content-type":
          contentType = headers[i + 1]
          break
        case "grpc-timeout":
          timeout = headers[i + 1]
          break
        case "grpc-encoding":
          encoding = headers[i + 1]
          break
        default:
      }
    }
    if (this.router.http !== undefined && !(contentType ?? "").includes("application/grpc")) {
      return this.httpRequest(streamId, headers, endStream, method, path, this.router.http)
    }
    if (method !== "POST" || path === undefined) return this.rstIdle(streamId, ErrorCode.PROTOCOL_ERROR)
    if (
      contentType === undefined ||
      !(
        contentType === "application/grpc" ||
        contentType.startsWith("application/grpc+") ||
        contentType.startsWith("application/grpc;")
      )
    ) {
      return this.earlyStatus(
        streamId,
        endStream,
        415,
        GRPC_INTERNAL,
        `invalid gRPC request content-type "${contentType ?? ""}"`
      )
    }
    const route = this.router.route(path)
    if (route === undefined) {
      return this.earlyStatus(streamId, endStream, 200, GRPC_UNIMPLEMENTED, this.router.unknown(path))
    }
    if (encoding !== undefined && encoding !== "identity") {
      return this.earlyStatus(
        streamId,
        endStream,
        200,
        GRPC_UNIMPLEMENTED,
        `grpc: Decompressor is not installed for grpc-encoding "${encoding}"`
      )
    }
    let deadline = Infinity
    if (timeout !== undefined) {
      const ms = parseGrpcTimeout(timeout)
      if (ms === undefined)
        return this.earlyStatus(streamId, endStream, 200, GRPC_INTERNAL, `malformed grpc-timeout: ${timeout}`)
      deadline = Date.now() + ms
    }
    const s = new ServerStream(streamId, route, headers, this, this.peerInitialWindow, L.STREAM_WINDOW, deadline)
    this.streams.set(streamId, s)
    this.pings.reset()
    if (route.kind === "bidi" || route.kind === "clientStream") s.run()
    if (endStream) this.remoteEnd(s)
  }

  /** A request that is not gRPC: the HTTP handlers answer it (http-stream.ts). */
  private httpRequest(
    streamId: number,
    headers: HeaderList,
    endStream: boolean,
    method: string | undefined,
    path: string | undefined,
    handler: HttpHandler
  ): void {
    if (method === undefined || path === undefined) return this.rstIdle(streamId, ErrorCode.PROTOCOL_ERROR)
    const s = new HttpStream(streamId, headers, this, this.peerInitialWindow, L.STREAM_WINDOW, this.peerAddress)
    this.streams.set(streamId, s)
    this.pings.reset()
    s.run(handler)
    if (endStream) this.remoteEnd(s)
  }

  /** The client half-closed `s` (a unary call runs now: server-stream.ts). */
  private remoteEnd(s: H2Stream): void {
    if (s.remoteEnded) return
    s.remoteEnd()
  }

  /** A refusal before any call: trailers-only (grpc-go's earlyAbortStream), and RST_STREAM if the client is still sending. */
  private earlyStatus(streamId: number, endStream: boolean, httpStatus: number, code: number, message: string): void {
    let block = statusBlock(code, message, true)
    if (httpStatus !== 200) {
      const status = Buffer.from(`${httpStatus}`, "latin1")
      // :status (name index 8) as a literal in place of the indexed 200 (one byte, 0x88)
      block = Buffer.concat([Buffer.from([0x08, status.length]), status, block.subarray(1)])
    }
    this.writeFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, block)
    if (!endStream) this.rememberReset(streamId)
    if (!endStream) this.writeFrame(FrameType.RST_STREAM, 0, streamId, u32(ErrorCode.NO_ERROR))
  }

  // ------------------------------------------------------------------ writing (StreamOwner)

  writeHeaders(s: H2Stream): void {
    if (s.headersSent || s.closed) return
    this.pings.reset()
    this.writeFrame(FrameType.HEADERS, Flag.END_HEADERS, s.id, s.headerBlock())
    s.headersSent = true
  }

  /** Sends what the windows allow of `s`'s queued data, then its trailers when all data is out. */
  flush(s: H2Stream): void {
    if (s.closed) return
    if (s.outBytes > 0 && !s.headersSent) this.writeHeaders(s)
    while (s.outBytes > 0) {
      const room = Math.min(s.sendWindow, this.sendWindow, this.peerMaxFrame)
      if (room <= 0 || this.socketFull()) {
        this.blocked.add(s)
        return
      }
      const n = Math.min(room, s.outBytes)
      const head = Buffer.allocUnsafe(FRAME_HEADER)
      writeFrameHeader(head, 0, n, FrameType.DATA, 0, s.id)
      this.push(head)
      let left = n
      while (left > 0) {
        const c = s.out[0]!
        const avail = c.length - s.outOffset
        if (avail <= left) {
          this.push(s.outOffset === 0 ? c : c.subarray(s.outOffset))
          s.out.shift()
          s.outOffset = 0
          left -= avail
        } else {
          this.push(c.subarray(s.outOffset, s.outOffset + left))
          s.outOffset += left
          left = 0
        }
      }
      s.outBytes -= n
      s.sendWindow -= n
      this.sendWindow -= n
      this.pings.reset()
    }
    this.blocked.delete(s)
    if (s.statusPending) {
      s.statusPending = false
      const end = s.endBlock()
      if (end === undefined) this.writeFrame(FrameType.DATA, Flag.END_STREAM, s.id, NO_BYTES)
      else this.writeFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, s.id, end)
      s.headersSent = true
      // the client may still be sending: grpc-go resets the stream with NO_ERROR (RFC 9113 §8.1)
      if (!s.remoteEnded) this.rememberReset(s.id)
      if (!s.remoteEnded) this.writeFrame(FrameType.RST_STREAM, 0, s.id, u32(ErrorCode.NO_ERROR))
      this.closeStream(s)
      s.ended()
      return
    }
    s.sent()
  }

  consumed(s: H2Stream, bytes: number): void {
    if (s.closed || s.remoteEnded) return
    s.recvUnacked += bytes
    if (s.recvUnacked >= L.STREAM_WINDOW / 4) {
      this.windowUpdate(s.id, s.recvUnacked)
      s.recvWindow += s.recvUnacked
      s.recvUnacked = 0
    }
  }

  reset(s: H2Stream, code: number): void {
    this.streamError(s, code)
  }

  authContext(): object {
    const socket = this.socket
    if (socket instanceof tls.TLSSocket) {
      return { transportSecurityType: "ssl", sslPeerCertificate: socket.getPeerCertificate() }
    }
    return {}
  }

  private flushBlocked(): void {
    if (this.blocked.size === 0 || this.destroyed) return
    for (const s of [...this.blocked]) {
      this.blocked.delete(s)
      this.flush(s)
    }
  }

  private socketFull(): boolean {
    return ((this.socket as { writableLength?: number }).writableLength ?? 0) + this.outBytes > L.SOCKET_HIGH_WATER
  }

  /** A stream error: RST_STREAM, the call cancelled; the connection lives on. */
  private streamError(s: H2Stream, code: number): void {
    this.rememberReset(s.id)
    this.writeFrame(FrameType.RST_STREAM, 0, s.id, u32(code))
    this.closeStream(s)
    s.cancel()
  }

  private rememberReset(streamId: number): void {
    this.resetByUs.push(streamId)
    if (this.resetByUs.length > L.RECENT_RESETS) this.resetByUs.shift()
  }

  private rstIdle(streamId: number, code: number): void {
    this.rememberReset(streamId)
    this.writeFrame(FrameType.RST_STREAM, 0, streamId, u32(code))
  }

  private closeStream(s: H2Stream): void {
    if (s.closed) return
    s.closed = true
    this.streams.delete(s.id)
    this.blocked.delete(s)
    this.pings.reset()
    this.maybeEnd()
  }

  // ------------------------------------------------------------------ connection lifetime

  /** Graceful: GOAWAY, no new calls; the socket ends when the open calls have. */
  goaway(): void {
    if (this.destroyed || this.goawaySent) return
    this.goawaySent = true
    this.closing = true
    this.writeFrame(FrameType.GOAWAY, 0, 0, goawayPayload(this.lastStreamId, ErrorCode.NO_ERROR, ""))
    this.maybeEnd()
  }

  private maybeEnd(): void {
    if (!this.closing || this.streams.size > 0 || this.destroyed) return
    this.flushOut()
    this.socket.end()
    setTimeout(() => this.destroy(), 1000).unref()
  }

  /** A connection error: GOAWAY with `code` (and debug data), then the socket closes. */
  private connectionError(code: number, message: string, debug = ""): void {
    if (this.destroyed) return
    this.reader.stop()
    if (!this.goawaySent) {
      this.goawaySent = true
      this.writeFrame(FrameType.GOAWAY, 0, 0, goawayPayload(this.lastStreamId, code, debug || message))
    }
    this.flushOut()
    for (const s of [...this.streams.values()]) {
      this.closeStream(s)
      s.cancel()
    }
    this.socket.end()
    // let the GOAWAY out, then the socket goes whatever the peer does
    setTimeout(() => this.destroy(), 100).unref()
  }

  /** The socket is gone (or forced closed): every call is cancelled. */
  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.reader.stop()
    for (const t of [this.prefaceTimer, this.blockTimer, this.pingAckTimer]) if (t !== undefined) clearTimeout(t)
    if (this.keepaliveTimer !== undefined) clearInterval(this.keepaliveTimer)
    for (const s of [...this.streams.values()]) {
      this.closeStream(s)
      s.cancel()
    }
    this.socket.destroy()
    this.onClose(this)
  }

  private keepalivePing(): void {
    if (this.pingAckTimer !== undefined || this.destroyed) return
    this.writeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))
    if (this.options.keepaliveTimeoutMs > 0) {
      this.pingAckTimer = setTimeout(() => this.destroy(), this.options.keepaliveTimeoutMs)
    }
  }

  // ------------------------------------------------------------------ output

  private windowUpdate(streamId: number, increment: number): void {
    this.writeFrame(FrameType.WINDOW_UPDATE, 0, streamId, u32(increment))
  }

  /** A control answer (SETTINGS/PING ACK): too many queued for a peer that does not read ends the connection. */
  private control(type: number, flags: number, payload: Uint8Array): void {
    if (((this.socket as { writableLength?: number }).writableLength ?? 0) > 0) {
      if (++this.queuedControl > L.MAX_QUEUED_CONTROL) {
        return this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many control frames queued")
      }
    } else this.queuedControl = 0
    this.writeFrame(type, flags, 0, payload)
  }

  private writeFrame(type: number, flags: number, streamId: number, payload: Uint8Array): void {
    if (this.destroyed) return
    const head = Buffer.allocUnsafe(FRAME_HEADER)
    writeFrameHeader(head, 0, payload.length, type, flags, streamId)
    this.push(head)
    if (payload.length > 0) this.push(payload)
  }

  private push(chunk: Uint8Array): void {
    this.out.push(chunk)
    this.outBytes += chunk.length
    if (!this.flushScheduled) {
      this.flushScheduled = true
      process.nextTick(() => this.flushOut())
    }
  }

  private flushOut(): void {
    this.flushScheduled = false
    if (this.out.length === 0 || this.destroyed) return
    const out = this.out
    const bytes = this.outBytes
    this.out = []
    this.outBytes = 0
    if (bytes <= SMALL_WRITE) this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out, bytes))
    else {
      this.socket.cork()
      for (const c of out) this.socket.write(c)
      this.socket.uncork()
    }
  }
}

const NO_BYTES = Buffer.alloc(0)

const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4)
  b.writeUInt32BE(n >>> 0, 0)
  return b
}

const goawayPayload = (lastStreamId: number, code: number, debug: string): Buffer => {
  const d = Buffer.from(debug, "latin1")
  const b = Buffer.allocUnsafe(8 + d.length)
  b.writeUInt32BE(lastStreamId, 0)
  b.writeUInt32BE(code, 4)
  d.copy(b, 8)
  return b
}

export type { HeaderList }
