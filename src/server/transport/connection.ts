/**
 * One HTTP/2 connection of the lean gRPC transport — grpc-go's internal/transport/http2_server.go
 * twin: the socket and the connection's life (start, GOAWAY, connection errors, close). Its parts,
 * one concept each, built here:
 *
 * - connection-settings.ts: the preface and SETTINGS both ways, the handshake in time;
 * - incoming-frames.ts: every frame the client sends (grpc-go's HandleStreams and handle*), read
 *   in one loop over each socket read by src/h2/frame-reader.ts;
 * - header-blocks.ts: HEADERS + CONTINUATION, decoded with HPACK (src/h2/hpack.ts);
 * - stream-opener.ts: new streams (operateHeaders: gRPC calls in server-stream.ts, other HTTP
 *   requests in http-stream.ts, refusals);
 * - stream-table.ts: the open streams and what they write through (headers, data, end, reset);
 * - flow-control.ts: the windows both ways, and stream data out as they allow;
 * - frame-output.ts: the frames of a tick, written to the socket once;
 * - keepalive-pings.ts, keepalive-policy.ts (the client's pings), limits.ts (against hostile peers).
 *
 * Plain synchronous code per frame and per call: no fiber, no Effect. TLS is node:tls' (terminated
 * in cmux.ts, ALPN h2); this reads and writes the socket it is given.
 */
import type { Duplex } from "node:stream"
import * as tls from "node:tls"
import { FrameReader } from "../../h2/frame-reader.js"
import { ErrorCode } from "../../h2/frames.js"
import { PingStrikes } from "../keepalive-policy.js"
import { ConnectionSettings, ourSettings } from "./connection-settings.js"
import { FlowControl } from "./flow-control.js"
import { FrameOutput } from "./frame-output.js"
import { asConnectionError } from "./h2-error.js"
import { HeaderBlocks } from "./header-blocks.js"
import { IncomingFrames } from "./incoming-frames.js"
import { KeepalivePings } from "./keepalive-pings.js"
import * as L from "./limits.js"
import type { Router } from "./route.js"
import { StreamOpener } from "./stream-opener.js"
import { StreamTable, type TableOwner } from "./stream-table.js"

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

export class H2ServerConnection implements TableOwner {
  destroyed = false
  /** GOAWAY either way: the socket ends when the open calls have */
  private closing = false
  private readonly output: FrameOutput
  private readonly flow: FlowControl
  private readonly table: StreamTable
  private readonly settings: ConnectionSettings
  private readonly blocks: HeaderBlocks
  private readonly keepalive: KeepalivePings
  private readonly reader: FrameReader

  constructor(
    private readonly socket: Duplex,
    router: Router,
    private readonly options: ConnectionOptions,
    private readonly onClose: (c: H2ServerConnection) => void
  ) {
    const s = socket as Partial<tls.TLSSocket>
    const peer = `${s.remoteAddress ?? "unknown"}:${s.remotePort ?? 0}`
    const output = (this.output = new FrameOutput(socket))
    const pings = new PingStrikes(options.pingMinTimeMs)
    const flow = (this.flow = new FlowControl(output, pings))
    const table = (this.table = new StreamTable(this, output, flow, pings, peer, options.maxReceiveMessageBytes))
    const address = { remoteAddress: s.remoteAddress, remotePort: s.remotePort }
    const opener = new StreamOpener(table, output, flow, pings, router, options.maxConcurrentStreams, address)
    const blocks = (this.blocks = new HeaderBlocks(options.handshakeTimeoutMs, () =>
      this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "header block not completed in time")
    ))
    const { keepaliveIntervalMs: every, keepaliveTimeoutMs: timeout } = options
    const keepalive = (this.keepalive = new KeepalivePings(output, every, timeout, () => this.destroy()))
    const settings = (this.settings = new ConnectionSettings(flow, table.streams))
    const frames = new IncomingFrames(table, opener, flow, output, blocks, settings, keepalive, pings, () =>
      this.peerGoaway()
    )
    this.reader = new FrameReader(frames, L.MAX_FRAME_SIZE)
  }

  /** Sends our SETTINGS and starts reading. */
  start(): void {
    this.output.settings(0, ourSettings(this.options.maxConcurrentStreams))
    this.flow.open()
    this.settings.start(this.options.handshakeTimeoutMs, () => {
      if (!this.settings.prefaceRead) this.destroy()
      else this.connectionError(ErrorCode.SETTINGS_TIMEOUT, "no SETTINGS or SETTINGS ACK in time")
    })
    this.keepalive.start()
    this.socket.on("data", (chunk: Buffer) => this.onData(chunk))
    this.socket.on("drain", () => this.table.flushBlocked())
    this.socket.on("error", () => this.destroy())
    this.socket.on("end", () => this.destroy())
    this.socket.on("close", () => this.destroy())
    this.socket.resume()
  }

  private onData(chunk: Buffer): void {
    if (this.destroyed) return
    let pos = 0
    if (!this.settings.prefaceRead) {
      pos = this.settings.preface(chunk)
      if (pos < 0) return this.connectionError(ErrorCode.PROTOCOL_ERROR, "bad client preface")
      if (pos === chunk.length) return
    }
    this.output.reading()
    try {
      this.reader.read(pos === 0 ? chunk : chunk.subarray(pos), chunk.length - pos)
    } catch (e) {
      const error = asConnectionError(e)
      this.connectionError(error.code, error.message)
    }
  }

  authContext(): object {
    const socket = this.socket
    if (socket instanceof tls.TLSSocket) {
      return { transportSecurityType: "ssl", sslPeerCertificate: socket.getPeerCertificate() }
    }
    return {}
  }

  /** Graceful: GOAWAY, no new calls; the socket ends when the open calls have. */
  goaway(): void {
    if (this.destroyed || this.table.goawaySent) return
    this.table.goawaySent = true
    this.closing = true
    this.output.goaway(this.table.lastStreamId, ErrorCode.NO_ERROR, "")
    this.streamClosed()
  }

  /** A stream left: after GOAWAY either way, the socket ends with the last one. */
  streamClosed(): void {
    if (!this.closing || this.table.streams.size > 0 || this.destroyed) return
    this.output.flush()
    this.socket.end()
    setTimeout(() => this.destroy(), 1000).unref()
  }

  /** The client's GOAWAY: its open calls finish, then the socket closes. */
  private peerGoaway(): void {
    this.closing = true
    this.streamClosed()
  }

  /** A connection error: GOAWAY with `code` (`message` its debug data), then the socket closes. */
  private connectionError(code: number, message: string): void {
    if (this.destroyed) return
    this.reader.stop()
    if (!this.table.goawaySent) {
      this.table.goawaySent = true
      this.output.goaway(this.table.lastStreamId, code, message)
    }
    this.output.flush()
    this.table.cancelAll()
    this.socket.end()
    // let the GOAWAY out, then the socket goes whatever the peer does
    setTimeout(() => this.destroy(), 100).unref()
  }

  /** The socket is gone (or forced closed): every call is cancelled. */
  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    this.reader.stop()
    this.output.stop()
    this.settings.stop()
    this.blocks.stop()
    this.keepalive.stop()
    this.table.cancelAll()
    this.socket.destroy()
    this.onClose(this)
  }
}
