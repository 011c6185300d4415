/**
 * A gRPC call's requests on the lean transport — grpc-go's transport.Stream receiving (its
 * recvBuffer, read as the handler asks) with rpc_util.go's parser.recvMsg: the stream's DATA
 * deframed into messages (src/h2/grpc-deframer.ts) and decoded with the method's deserializer,
 * a unary call's one request, a streaming call's read queue (`read()`, "readable", "end"), and the
 * flow-control window held while messages wait to be read.
 *
 * The first of three layers of the call, each a class the next extends (a part the call owned
 * would be one more object per call): call-requests.ts, call-responses.ts (what the handler
 * writes), server-stream.ts (the call: its handler, status, deadline and cancellation).
 */
import { GrpcFrameParser, GrpcMessageError } from "../../h2/grpc-deframer.js"
import { H2Stream, type StreamOwner } from "./h2-stream.js"
import type { Route } from "./route.js"

export const GRPC_INTERNAL = 13
const GRPC_RESOURCE_EXHAUSTED = 8

export abstract class CallRequests extends H2Stream {
  /** gRPC messages out of the DATA bytes, each in a Buffer of its own (the decoded request keeps views of it) */
  protected readonly deframer: GrpcFrameParser
  /** received bytes not given back to the flow-control window: held while messages wait to be read */
  private held = 0

  /** a unary (or server-streaming) call's request */
  request: unknown = undefined
  readableEnded = false
  /** a streaming call's requests not read yet */
  private readonly queue: Array<unknown> = []

  constructor(
    id: number,
    readonly route: Route,
    protected readonly owner: StreamOwner,
    sendWindow: number,
    recvWindow: number
  ) {
    super(id, sendWindow, recvWindow)
    this.deframer = new GrpcFrameParser(this, owner.maxReceiveMessageBytes, true)
  }

  /** A failure of the transport's own (message too large, undecodable): the status, then RST_STREAM. */
  protected abstract fail(code: number, message: string): void

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

  /**
   * The client half-closed: false when that left a message incomplete (the call failed); a
   * streaming call's reader sees "end" once its queue is read.
   */
  protected requestsEnded(): boolean {
    this.remoteEnded = true
    if (this.deframer.buffered > 0 && !this.finished) {
      this.fail(GRPC_INTERNAL, "grpc: received an incomplete message")
      return false
    }
    const kind = this.route.kind
    if ((kind === "bidi" || kind === "clientStream") && this.queue.length === 0) this.endReadable()
    return true
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

  private endReadable(): void {
    if (this.readableEnded) return
    this.readableEnded = true
    process.nextTick(() => this.emit("end"))
  }
}
