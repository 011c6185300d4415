/**
 * What the lean transport's connection (connection.ts) keeps of any HTTP/2 stream, gRPC call
 * (server-stream.ts) or plain HTTP request (http-stream.ts) alike: the flow-control windows, the
 * response data not sent yet, and where the stream is in its life. The connection writes the
 * frames (its stream table, stream-table.ts, is every stream's StreamOwner); the stream says what
 * its header block is and how it ends.
 */
import { EventEmitter } from "node:events"

/** What a stream needs from its connection (stream-table.ts). */
export interface StreamOwner {
  /** the response headers go out now (once) */
  writeHeaders(s: H2Stream): void
  /** data or the end was queued: send what the flow-control windows allow */
  flush(s: H2Stream): void
  /** the stream's reader consumed `bytes` of received DATA: the stream's window may be replenished */
  consumed(s: H2Stream, bytes: number): void
  /** the stream is torn down by us with RST_STREAM `code` */
  reset(s: H2Stream, code: number): void
  readonly peer: string
  authContext(): object
  readonly maxReceiveMessageBytes: number
}

export abstract class H2Stream extends EventEmitter {
  sendWindow: number
  /** bytes the client may still send on this stream before our next WINDOW_UPDATE */
  recvWindow: number
  /** received bytes consumed, not yet given back with WINDOW_UPDATE */
  recvUnacked = 0
  /** response DATA not sent yet, from `outOffset` in out[0] */
  readonly out: Array<Uint8Array> = []
  outOffset = 0
  outBytes = 0
  headersSent = false
  /** the end waits behind the queued data (`endBlock` says what it is) */
  statusPending = false
  /** the end is decided (queued or sent, or reset): nothing more is written */
  finished = false
  /** the client half-closed (END_STREAM) */
  remoteEnded = false
  /** the stream left the connection */
  closed = false

  constructor(
    readonly id: number,
    sendWindow: number,
    recvWindow: number
  ) {
    super()
    this.sendWindow = sendWindow
    this.recvWindow = recvWindow
  }

  /** DATA payload bytes, valid only during the call. */
  abstract data(buf: Uint8Array, start: number, end: number): void
  /** The client half-closed. */
  abstract remoteEnd(): void
  /** The client reset the stream or the connection went. */
  abstract cancel(): void
  /** The connection sent queued data (a writer waiting for "drain" may go on). */
  abstract sent(): void
  /** The response's header block (HPACK). */
  abstract headerBlock(): Uint8Array
  /** What ends the stream after its data: a header block (trailers, or the headers of a response without a body), or undefined for an empty DATA frame. */
  abstract endBlock(): Uint8Array | undefined
  /** The end went out: the stream left the connection. */
  ended(): void {}
}
