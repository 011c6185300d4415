/** One HTTP/2 stream of the client connection: its state, windows and what it tells its owner. */

export interface H2StreamHandler {
  /** a header block: the response headers, then the trailers; `endStream` on the last */
  onHeaders(headers: Array<string>, endStream: boolean): void
  /** DATA payload bytes in the connection's read buffer, overwritten by the next read: copy what must outlive the call */
  onData(buf: Uint8Array, start: number, end: number): void
  /** the server ended its side (after the last onHeaders/onData) */
  onEnd(): void
  /** the stream was reset by the server, or the connection failed */
  onReset(reason: string): void
}

export class H2Stream {
  /** 0 until opened (a stream waits while the server's MAX_CONCURRENT_STREAMS is reached) */
  id = 0
  sendWindow = 0
  /** bytes received since our last WINDOW_UPDATE for it */
  recvUnacked = 0
  localEnded = false
  remoteEnded = false
  finished = false
  /** data waiting for flow-control window (or for the stream to open) */
  readonly pending: Array<Uint8Array> = []
  pendingOffset = 0
  endPending = false

  constructor(
    readonly path: string,
    readonly handler: H2StreamHandler
  ) {}
}
