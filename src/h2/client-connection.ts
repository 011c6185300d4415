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
 * Its parts, one concept each, built here as grpc-go divides http2_client.go, controlbuf.go and
 * flowcontrol.go: client-stream-table.ts (the streams: ids, the server's stream limit, their end),
 * client-flow-control.ts (the windows both ways), client-incoming-frames.ts (every frame the
 * server sends), client-write-buffer.ts (the frames out, one reused buffer flushed per microtask).
 * This class holds the socket, the public surface and the connection's failure.
 */
import * as net from "node:net"
import { ClientFlowControl, STREAM_WINDOW } from "./client-flow-control.js"
import { ClientIncomingFrames } from "./client-incoming-frames.js"
import { H2Stream, type H2StreamHandler } from "./client-stream.js"
import { ClientStreamTable } from "./client-stream-table.js"
import { ClientWriteBuffer } from "./client-write-buffer.js"
import { FrameReader } from "./frame-reader.js"
import { ErrorCode, errorName, PREFACE, Setting } from "./frames.js"

export { CONNECTION_WINDOW, STREAM_WINDOW } from "./client-flow-control.js"
export { H2Stream, type H2StreamHandler } from "./client-stream.js"

/** the buffer every socket read lands in */
const READ_BUFFER = 256 * 1024

export class H2Connection {
  private readonly socket: net.Socket
  private readonly output: ClientWriteBuffer
  private readonly table: ClientStreamTable
  private readonly reader: FrameReader
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
    const output = (this.output = new ClientWriteBuffer(this.socket))
    const flow = new ClientFlowControl(output)
    const table = (this.table = new ClientStreamTable(output, flow, authority, () =>
      this.fail(`connection to ${authority}: stream ids exhausted`)
    ))
    const frames = new ClientIncomingFrames(
      table,
      flow,
      output,
      () => this.serverSettings(),
      (code, debug) =>
        this.fail(`server at ${authority} sent GOAWAY (${errorName(code)}${debug === "" ? "" : `: ${debug}`})`)
    )
    this.reader = new FrameReader(frames)
    this.socket.on("error", (e) => this.fail(`connection to ${authority} failed: ${e.message}`))
    this.socket.on("close", () => this.fail(`connection to ${authority} closed`))
    this.socket.on("connect", () => {
      output.write(PREFACE)
      output.settings(
        [
          [Setting.ENABLE_PUSH, 0],
          [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW]
        ],
        false
      )
      flow.open()
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
    this.table.open(stream)
    return stream
  }

  /** Sends `data` on the stream (queued behind flow control), ending our side with `end`. */
  send(stream: H2Stream, data: Uint8Array, end: boolean): void {
    if (stream.finished || stream.localEnded || stream.endPending) return
    if (data.length > 0) stream.pending.push(data)
    if (end) stream.endPending = true
    if (stream.id !== 0) this.table.pump(stream)
  }

  /** Resets the stream (RST_STREAM); no callback follows. */
  reset(stream: H2Stream, code: number = ErrorCode.CANCEL): void {
    if (stream.finished) return
    this.table.reset(stream, code)
  }

  /** Closes the connection at once; no callbacks follow. */
  close(): void {
    if (this.closing) return
    this.closing = true
    this.output.close()
    this.reader.stop()
    this.table.clear()
    this.socket.destroy()
  }

  /** The server's SETTINGS came: the first ones make the connection ready. */
  private serverSettings(): void {
    if (!this.ready) {
      this.ready = true
      this.onReady()
    }
  }

  // ---- failure ----

  private protocolError(reason: string): void {
    if (this.closing || this.failure !== undefined) return
    // Tell the server why, then drop the connection.
    this.output.goaway(ErrorCode.PROTOCOL_ERROR, Buffer.from(reason, "latin1"))
    this.output.flush()
    this.fail(`connection to ${this.authority}: HTTP/2 protocol error: ${reason}`)
    this.socket.destroy()
  }

  private fail(reason: string): void {
    if (this.closing || this.failure !== undefined) return
    this.failure = reason
    this.reader.stop()
    const streams = this.table.takeAll()
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
