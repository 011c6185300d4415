/**
 * HTTP/2 flow control on the lean client connection (RFC 9113 §5.2, §6.9): grpc-go's
 * flowcontrol.go (trInFlow, inFlow) for what the server sends, and the send quotas of
 * controlbuf.go's loopyWriter (the connection's and each stream's window, the server's
 * SETTINGS_INITIAL_WINDOW_SIZE and MAX_FRAME_SIZE) for what we send.
 *
 * Receiving: SETTINGS_INITIAL_WINDOW_SIZE 16 MiB per stream and a 64 MiB connection window,
 * replenished as data is consumed (consumption is immediate: callbacks are synchronous). A window
 * the size of Node's default (64 KiB) would let a server send only 64 KiB before waiting for our
 * WINDOW_UPDATE: a fan-out of millions of events/s would measure our acknowledgement round trips,
 * not the server. Sending: a stream's pending data goes out as DATA frames as far as both windows
 * and the server's frame size allow; the rest waits in `blocked` for a WINDOW_UPDATE or a SETTINGS.
 */
import type { H2Stream } from "./client-stream.js"
import type { ClientWriteBuffer } from "./client-write-buffer.js"
import { DEFAULT_MAX_FRAME, DEFAULT_WINDOW, Flag } from "./frames.js"

export const STREAM_WINDOW = 16 * 1024 * 1024
export const CONNECTION_WINDOW = 64 * 1024 * 1024

export class ClientFlowControl {
  /** what the server still lets us send on the connection */
  private sendWindow = DEFAULT_WINDOW
  /** received on the connection since our last WINDOW_UPDATE for it */
  private recvUnacked = 0
  /** the server's SETTINGS_INITIAL_WINDOW_SIZE: a new stream's send window */
  peerInitialWindow = DEFAULT_WINDOW
  private peerMaxFrame = DEFAULT_MAX_FRAME
  /** streams whose pending data waits for a window */
  readonly blocked = new Set<H2Stream>()

  constructor(private readonly output: ClientWriteBuffer) {}

  /** Right after our SETTINGS: the connection's receive window, from the default to ours. */
  open(): void {
    this.output.windowUpdate(0, CONNECTION_WINDOW - DEFAULT_WINDOW)
  }

  // ------------------------------------------------------------------ receiving

  /** A DATA frame of `length` bytes arrived on `stream` (undefined: one we no longer track). */
  received(stream: H2Stream | undefined, length: number): void {
    // Everything received counts against the windows, padding and closed streams included.
    this.recvUnacked += length
    if (this.recvUnacked >= CONNECTION_WINDOW / 2) {
      this.output.windowUpdate(0, this.recvUnacked)
      this.recvUnacked = 0
    }
    if (stream !== undefined) {
      stream.recvUnacked += length
      if (stream.recvUnacked >= STREAM_WINDOW / 2 && !stream.remoteEnded) {
        this.output.windowUpdate(stream.id, stream.recvUnacked)
        stream.recvUnacked = 0
      }
    }
  }

  // ------------------------------------------------------------------ sending

  /** The server's WINDOW_UPDATE on the connection. */
  connectionIncrement(increment: number): void {
    this.sendWindow += increment
  }

  /** The server's SETTINGS_INITIAL_WINDOW_SIZE: every open stream's send window moves by the change. */
  initialWindowSize(value: number, streams: Iterable<H2Stream>): void {
    const delta = value - this.peerInitialWindow
    this.peerInitialWindow = value
    for (const stream of streams) stream.sendWindow += delta
  }

  /** The server's SETTINGS_MAX_FRAME_SIZE: the longest DATA frame we send. */
  maxFrameSize(value: number): void {
    this.peerMaxFrame = value
  }

  /**
   * Sends what the windows allow of the stream's pending data, and END_STREAM after it: true when
   * END_STREAM went out (the stream ended locally), false when it waits in `blocked` or has nothing
   * more to send.
   */
  send(stream: H2Stream): boolean {
    while (stream.pending.length > 0) {
      const chunk = stream.pending[0]!
      const left = chunk.length - stream.pendingOffset
      const n = Math.min(left, stream.sendWindow, this.sendWindow, this.peerMaxFrame)
      if (n <= 0) {
        this.blocked.add(stream)
        return false
      }
      const last = n === left && stream.pending.length === 1 && stream.endPending
      this.output.data(stream.id, last ? Flag.END_STREAM : 0, chunk, stream.pendingOffset, n)
      stream.sendWindow -= n
      this.sendWindow -= n
      if (n === left) {
        stream.pending.shift()
        stream.pendingOffset = 0
      } else {
        stream.pendingOffset += n
      }
      if (last) return true
    }
    this.blocked.delete(stream)
    if (stream.endPending && !stream.localEnded) {
      this.output.endStream(stream.id)
      return true
    }
    return false
  }
}
