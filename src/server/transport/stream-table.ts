/**
 * The open streams of one connection of the lean transport, by id (grpc-go's
 * http2Server.activeStreams and maxStreamID), and what they write through — the StreamOwner the
 * calls (server-stream.ts) and HTTP requests (http-stream.ts) are given: their headers, their data
 * as the windows allow (flow-control.ts), their end (trailers, grpc-go's WriteStatus and
 * finishStream), RST_STREAM, and their leaving the table (closeStream). How streams open is
 * stream-opener.ts.
 */
import { ErrorCode, Flag, FrameType } from "../../h2/frames.js"
import type { PingStrikes } from "../keepalive-policy.js"
import type { FlowControl } from "./flow-control.js"
import type { FrameOutput } from "./frame-output.js"
import type { H2Stream, StreamOwner } from "./h2-stream.js"
import * as L from "./limits.js"

/** What the table needs of its connection (connection.ts). */
export interface TableOwner {
  readonly destroyed: boolean
  authContext(): object
  /** a stream left the table: after a GOAWAY the connection may end now */
  streamClosed(): void
}

const NO_BYTES = Buffer.alloc(0)

export class StreamTable implements StreamOwner {
  readonly streams = new Map<number, H2Stream>()
  /** the highest stream id the client opened: a frame above it is on an idle stream */
  lastStreamId = 0
  /** GOAWAY sent: streams above `lastStreamId` at that moment are refused */
  goawaySent = false
  /** streams we reset ourselves lately: the client's HEADERS (trailers) on them are no error */
  private readonly resetByUs: Array<number> = []

  constructor(
    private readonly owner: TableOwner,
    private readonly output: FrameOutput,
    private readonly flow: FlowControl,
    private readonly pings: PingStrikes,
    readonly peer: string,
    readonly maxReceiveMessageBytes: number
  ) {}

  /** RST_STREAM `code` on `streamId`, remembered: the client's late frames on it are no error. */
  rst(streamId: number, code: number): void {
    this.resetByUs.push(streamId)
    if (this.resetByUs.length > L.RECENT_RESETS) this.resetByUs.shift()
    this.output.rstStream(streamId, code)
  }

  /** Did we reset `streamId` lately? */
  resetLately(streamId: number): boolean {
    return this.resetByUs.includes(streamId)
  }

  // ------------------------------------------------------------------ StreamOwner

  writeHeaders(s: H2Stream): void {
    if (s.headersSent || s.closed) return
    this.pings.reset()
    this.output.frame(FrameType.HEADERS, Flag.END_HEADERS, s.id, s.headerBlock())
    s.headersSent = true
  }

  /** Sends what the windows allow of `s`'s queued data, then its end when all data is out. */
  flush(s: H2Stream): void {
    if (s.closed) return
    if (s.outBytes > 0 && !s.headersSent) this.writeHeaders(s)
    if (!this.flow.send(s)) return
    if (s.statusPending) return this.end(s)
    s.sent()
  }

  consumed(s: H2Stream, bytes: number): void {
    this.flow.consumed(s, bytes)
  }

  /** A stream error: RST_STREAM, the call cancelled; the connection lives on. */
  reset(s: H2Stream, code: number): void {
    this.rst(s.id, code)
    this.close(s)
    s.cancel()
  }

  authContext(): object {
    return this.owner.authContext()
  }

  // ------------------------------------------------------------------ leaving

  /** `s` leaves the table (its end went out, it was reset, or the connection goes). */
  close(s: H2Stream): void {
    if (s.closed) return
    s.closed = true
    this.streams.delete(s.id)
    this.flow.blocked.delete(s)
    this.pings.reset()
    this.owner.streamClosed()
  }

  /** Every stream leaves, its call cancelled (the connection goes). */
  cancelAll(): void {
    for (const s of [...this.streams.values()]) {
      this.close(s)
      s.cancel()
    }
  }

  /** The windows opened or the socket drained: streams waiting with data send it. */
  flushBlocked(): void {
    const blocked = this.flow.blocked
    if (blocked.size === 0 || this.owner.destroyed) return
    for (const s of [...blocked]) {
      blocked.delete(s)
      this.flush(s)
    }
  }

  /** The end after the data: trailers (or an empty END_STREAM DATA frame); the stream leaves. */
  private end(s: H2Stream): void {
    s.statusPending = false
    const end = s.endBlock()
    if (end === undefined) this.output.frame(FrameType.DATA, Flag.END_STREAM, s.id, NO_BYTES)
    else this.output.frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, s.id, end)
    s.headersSent = true
    // the client may still be sending: grpc-go resets the stream with NO_ERROR (RFC 9113 §8.1)
    if (!s.remoteEnded) this.rst(s.id, ErrorCode.NO_ERROR)
    this.close(s)
    s.ended()
  }
}
