/**
 * One HTTP/2 stream of the lean transport and the gRPC call on it — grpc-go's transport.Stream and
 * serverStream in one object, with the surface grpc-js' server calls show the handlers
 * (grpc-bridge.ts, the services, auth-guard.ts): `request`, `metadata`, `cancelled` and its event,
 * `getDeadline()`, `getPeer()`, `getAuthContext()`; reading (`read()`, "readable", "end",
 * `readableEnded`, `destroyed`) and writing (`write`, `writableNeedDrain`, "drain", `end()`,
 * `emit("error", status)`, `sendMetadata`), plus `writeFramed` for pre-framed batches
 * (grpc-raw-writer.ts).
 *
 * Everything here is plain synchronous code run from the connection's socket reads and the
 * handlers' callbacks; its owner, the connection's stream table (stream-table.ts), writes the frames.
 */
import * as grpc from "@grpc/grpc-js"
import { GrpcFrameParser, GrpcMessageError } from "../../h2/grpc-deframer.js"
import type { HeaderList } from "../../h2/hpack.js"
import { RESPONSE_HEADERS, statusBlock } from "./grpc-status.js"
import { H2Stream, type StreamOwner } from "./h2-stream.js"
import type { Route } from "./route.js"
import { grpcMessage } from "../../h2/grpc-message-prefix.js"

export type { StreamOwner }

/** grpc-js' default: a writer waits for "drain" once this much is queued */
export const HIGH_WATER = 64 * 1024

const GRPC_INTERNAL = 13
const GRPC_RESOURCE_EXHAUSTED = 8
const GRPC_DEADLINE_EXCEEDED = 4

/** header names that are transport, not call metadata (grpc-js leaves these out too) */
const RESERVED = new Set(["te", "content-type", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding"])

export class ServerStream extends H2Stream {
  // the status the trailers carry, once decided (`statusPending`: behind the queued data)
  statusCode = 0
  statusMessage = ""
  private needDrain = false

  /** gRPC messages out of the DATA bytes, each in a Buffer of its own (the decoded request keeps views of it) */
  private readonly deframer: GrpcFrameParser
  /** received bytes not given back to the flow-control window: held while messages wait to be read */
  private held = 0

  // --- the call (grpc-js surface) ---
  request: unknown = undefined
  cancelled = false
  readableEnded = false
  destroyed = false
  private readonly queue: Array<unknown> = []
  private md: grpc.Metadata | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    id: number,
    readonly route: Route,
    private readonly headers: HeaderList,
    private readonly owner: StreamOwner,
    sendWindow: number,
    recvWindow: number,
    /** epoch ms; Infinity: none */
    private readonly deadline: number
  ) {
    super(id, sendWindow, recvWindow)
    this.deframer = new GrpcFrameParser(this, owner.maxReceiveMessageBytes, true)
    if (deadline !== Infinity) {
      const left = deadline - Date.now()
      if (left < 2 ** 31 - 1) this.timer = setTimeout(() => this.deadlinePassed(), Math.max(0, left))
    }
  }

  // ------------------------------------------------------------------ received data

  /** DATA payload bytes, valid only during the call. */
  data(buf: Uint8Array, start: number, end: number): void {
    this.held += end - start
    try {
      this.deframer.push(buf, start, end)
    } catch (e) {
      if (!(e instanceof GrpcMessageError)) throw e
      // no grpc-encoding was accepted (stream-opener.ts refuses them), so nothing may be compressed
      if (e.reason === "compressed")
        this.fail(GRPC_INTERNAL, "grpc: compressed flag set with identity or empty encoding")
      else {
        const max = this.owner.maxReceiveMessageBytes
        this.fail(GRPC_RESOURCE_EXHAUSTED, `grpc: received message larger than max (${e.size} vs. ${max})`)
      }
    }
    // the window is given back as fast as the handler reads (grpc-go: on Recv); unread messages hold it
    if (this.queue.length === 0 && this.held > 0 && !this.finished) {
      this.owner.consumed(this, this.held)
      this.held = 0
    }
  }

  /** A whole message (the deframer's sink): `buf` is its own Buffer, [0, its length). */
  message(buf: Uint8Array, _start: number, _end: number): void {
    let decoded: unknown
    try {
      decoded = this.route.definition.requestDeserialize(buf as Buffer)
    } catch (e) {
      return this.fail(GRPC_INTERNAL, `Error deserializing request: ${e instanceof Error ? e.message : String(e)}`)
    }
    const kind = this.route.kind
    if (kind === "unary" || kind === "serverStream") {
      if (this.request !== undefined) {
        return this.fail(GRPC_INTERNAL, "grpc: received more than one request message for a unary call")
      }
      this.request = decoded
      return
    }
    this.queue.push(decoded)
    if (this.queue.length === 1) this.emit("readable")
  }

  /** The client half-closed: a unary (or server-streaming) call runs now, with its request. */
  remoteEnd(): void {
    this.remoteEnded = true
    if (this.deframer.buffered > 0 && !this.finished) {
      this.fail(GRPC_INTERNAL, "grpc: received an incomplete message")
      return
    }
    const kind = this.route.kind
    if ((kind === "bidi" || kind === "clientStream") && this.queue.length === 0) this.endReadable()
    if (this.closed || this.finished || kind === "bidi" || kind === "clientStream") return
    if (this.request === undefined) this.sendStatus(GRPC_INTERNAL, "grpc: error while receiving the request: EOF")
    else this.run()
  }

  /** Calls the method's handler (a streaming request's at once, a unary one's with its request). */
  run(): void {
    try {
      const kind = this.route.kind
      if (kind === "unary" || kind === "clientStream") this.route.handler(this, this.callback)
      else this.route.handler(this)
    } catch (e) {
      this.sendStatus(2, e instanceof Error ? e.message : String(e))
    }
  }

  headerBlock(): Uint8Array {
    return RESPONSE_HEADERS
  }

  /** the status's trailers (trailers-only when no headers went out) */
  endBlock(): Uint8Array {
    return statusBlock(this.statusCode, this.statusMessage, !this.headersSent)
  }

  private endReadable(): void {
    if (this.readableEnded) return
    this.readableEnded = true
    process.nextTick(() => this.emit("end"))
  }

  // ------------------------------------------------------------------ the grpc-js call surface

  get metadata(): grpc.Metadata {
    if (this.md !== undefined) return this.md
    const md = new grpc.Metadata()
    const h = this.headers
    for (let i = 0; i < h.length; i += 2) {
      const name = h[i]!
      if (name.charCodeAt(0) === 58 /* ':' */ || RESERVED.has(name)) continue
      try {
        if (name.endsWith("-bin")) md.add(name, Buffer.from(h[i + 1]!, "base64"))
        else md.add(name, h[i + 1]!)
      } catch {
        // a key grpc-js refuses: left out, as grpc-js leaves it out
      }
    }
    return (this.md = md)
  }

  getDeadline(): number {
    return this.deadline
  }

  getPeer(): string {
    return this.owner.peer
  }

  getAuthContext(): object {
    return this.owner.authContext()
  }

  getPath(): string {
    return this.route.path
  }

  read(): unknown {
    if (this.queue.length === 0) return null
    const m = this.queue.shift()
    if (this.queue.length === 0) {
      if (this.held > 0) this.owner.consumed(this, this.held)
      this.held = 0
      if (this.remoteEnded) this.endReadable()
    }
    return m
  }

  get writableNeedDrain(): boolean {
    return this.outBytes >= HIGH_WATER
  }

  /** A response message; false when the caller should wait for "drain". */
  write(message: unknown): boolean {
    if (this.finished) return false
    const body = this.route.definition.responseSerialize(message)
    return this.queueOut(grpcMessage(body))
  }

  /** Pre-framed gRPC messages (grpc-raw-writer.ts); false when the caller should wait for "drain". */
  writeFramed(chunks: ReadonlyArray<Uint8Array>): boolean {
    if (this.finished) return false
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i]!
      if (c.length === 0) continue
      this.out.push(c)
      this.outBytes += c.length
    }
    return this.afterQueue()
  }

  private queueOut(framed: Uint8Array): boolean {
    this.out.push(framed)
    this.outBytes += framed.length
    return this.afterQueue()
  }

  private afterQueue(): boolean {
    if (!this.headersSent) this.owner.writeHeaders(this)
    this.owner.flush(this)
    if (this.outBytes >= HIGH_WATER) {
      this.needDrain = true
      return false
    }
    return true
  }

  /** The connection sent queued data: "drain" when the queue fell below the mark. */
  sent(): void {
    if (this.needDrain && this.outBytes < HIGH_WATER) {
      this.needDrain = false
      this.emit("drain")
    }
  }

  sendMetadata(_md?: grpc.Metadata): void {
    if (!this.headersSent && !this.finished) this.owner.writeHeaders(this)
  }

  /** OK, after the queued messages. */
  end(): void {
    this.sendStatus(0, "")
  }

  /** The unary callback: the response and OK, or the error's status. */
  readonly callback = (error: { code?: number; details?: string } | null, value?: unknown): void => {
    if (error !== null && error !== undefined) {
      this.sendStatus(error.code ?? 2, error.details ?? "")
      return
    }
    if (this.finished) return
    let body: Buffer
    try {
      body = this.route.definition.responseSerialize(value)
    } catch (e) {
      this.sendStatus(GRPC_INTERNAL, `Failed to serialize response: ${e instanceof Error ? e.message : String(e)}`)
      return
    }
    const framed = grpcMessage(body)
    this.out.push(framed)
    this.outBytes += framed.length
    this.sendStatus(0, "")
  }

  /** grpc-js' way for a stream handler to end with a status: `emit("error", {code, details})`. */
  override emit(event: string | symbol, ...args: Array<any>): boolean {
    if (event === "error") {
      const s = args[0] as { code?: number; details?: string } | undefined
      this.sendStatus(s?.code ?? 2, s?.details ?? "")
      return true
    }
    return super.emit(event, ...args)
  }

  /** Decides the status: trailers after the queued data (trailers-only when nothing was sent). */
  sendStatus(code: number, message: string): void {
    if (this.finished) return
    this.finished = true
    this.deframer.stop()
    this.clearTimer()
    this.statusCode = code
    this.statusMessage = message
    this.statusPending = true
    this.owner.flush(this)
  }

  /** A failure of the transport's own (message too large, undecodable): the status, then RST_STREAM. */
  private fail(code: number, message: string): void {
    this.out.length = 0
    this.outBytes = 0
    this.outOffset = 0
    this.sendStatus(code, message)
    // the handler (a stream's) learns it as a cancellation
    this.cancel()
  }

  private deadlinePassed(): void {
    this.timer = undefined
    if (this.finished) return
    // grpc-js answers DEADLINE_EXCEEDED on its own at the deadline; the runner's timer interrupts the handler
    this.out.length = 0
    this.outBytes = 0
    this.outOffset = 0
    this.sendStatus(GRPC_DEADLINE_EXCEEDED, "Deadline exceeded")
  }

  /** The client reset the stream or the connection went: the handler's context is done. */
  cancel(): void {
    this.clearTimer()
    if (!this.readableEnded) {
      this.readableEnded = true
    }
    if (this.cancelled) return
    this.cancelled = true
    this.destroyed = true
    this.finished = true
    this.deframer.stop()
    super.emit("cancelled")
    process.nextTick(() => super.emit("close"))
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
  }
}
