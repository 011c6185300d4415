/**
 * One HTTP/2 stream of the lean transport and the gRPC call on it — grpc-go's transport.Stream and
 * serverStream in one object, with the surface grpc-js' server calls show the handlers
 * (grpc-bridge.ts, the services, auth-guard.ts): `request`, `metadata`, `cancelled` and its event,
 * `getDeadline()`, `getPeer()`, `getAuthContext()`; reading (`read()`, "readable", "end",
 * `readableEnded`, `destroyed`) and writing (`write`, `writableNeedDrain`, "drain", `end()`,
 * `emit("error", status)`, `sendMetadata`), plus `writeFramed` for pre-framed batches
 * (grpc-raw-writer.ts).
 *
 * Three layers, each a class the next extends: the requests (call-requests.ts), the responses
 * (call-responses.ts), and this class, the call's life: it runs the handler, decides the status (the
 * handler's, a failure of the transport's own, the deadline's) and is cancelled. The metadata is
 * call-metadata.ts'.
 *
 * Everything here is plain synchronous code run from the connection's socket reads and the
 * handlers' callbacks; its owner, the connection's stream table (stream-table.ts), writes the frames.
 */
import type * as grpc from "@grpc/grpc-js"
import type { HeaderList } from "../../h2/hpack.js"
import { callMetadata } from "./call-metadata.js"
import { statusBlock } from "./grpc-status.js"
import type { StreamOwner } from "./h2-stream.js"
import { GRPC_INTERNAL } from "./call-requests.js"
import { CallResponses } from "./call-responses.js"
import type { Route } from "./route.js"

export type { StreamOwner }
export { HIGH_WATER } from "./call-responses.js"

const GRPC_DEADLINE_EXCEEDED = 4

export class ServerStream extends CallResponses {
  // the status the trailers carry, once decided (`statusPending`: behind the queued data)
  statusCode = 0
  statusMessage = ""

  // --- the call (grpc-js surface) ---
  cancelled = false
  destroyed = false
  private md: grpc.Metadata | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    id: number,
    route: Route,
    private readonly headers: HeaderList,
    owner: StreamOwner,
    sendWindow: number,
    recvWindow: number,
    /** epoch ms; Infinity: none */
    private readonly deadline: number
  ) {
    super(id, route, owner, sendWindow, recvWindow)
    if (deadline !== Infinity) {
      const left = deadline - Date.now()
      if (left < 2 ** 31 - 1) this.timer = setTimeout(() => this.deadlinePassed(), Math.max(0, left))
    }
  }

  /** The client half-closed: a unary (or server-streaming) call runs now, with its request. */
  remoteEnd(): void {
    if (!this.requestsEnded()) return
    const kind = this.route.kind
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

  /** the status's trailers (trailers-only when no headers went out) */
  endBlock(): Uint8Array {
    return statusBlock(this.statusCode, this.statusMessage, !this.headersSent)
  }

  // ------------------------------------------------------------------ the grpc-js call surface

  get metadata(): grpc.Metadata {
    return (this.md ??= callMetadata(this.headers))
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

  /** OK, after the queued messages. */
  end(): void {
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

  // ------------------------------------------------------------------ the end

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
  protected fail(code: number, message: string): void {
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
