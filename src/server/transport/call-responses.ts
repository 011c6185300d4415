/**
 * A gRPC call's responses on the lean transport — grpc-go's transport ServerStream writing
 * (WriteHeader, Write): each message serialized with the method's serializer and framed
 * (src/h2/grpc-message-prefix.ts), or pre-framed batches taken as they are (`writeFramed`,
 * grpc-raw-writer.ts), queued behind flow control with grpc-js' back-pressure (`write()` false and
 * "drain"); the unary callback's one response. The connection's stream table (stream-table.ts)
 * writes the frames; the status that ends them is server-stream.ts'.
 *
 * The second layer of the call (call-requests.ts says why layers): server-stream.ts extends it.
 */
import type * as grpc from "@grpc/grpc-js"
import { grpcMessage } from "../../h2/grpc-message-prefix.js"
import { CallRequests, GRPC_INTERNAL } from "./call-requests.js"
import { RESPONSE_HEADERS } from "./grpc-status.js"

/** grpc-js' default: a writer waits for "drain" once this much is queued */
export const HIGH_WATER = 64 * 1024

export abstract class CallResponses extends CallRequests {
  private needDrain = false

  /** Decides the status: trailers after the queued data (trailers-only when nothing was sent). */
  abstract sendStatus(code: number, message: string): void

  headerBlock(): Uint8Array {
    return RESPONSE_HEADERS
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
}
