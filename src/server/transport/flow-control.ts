/**
 * HTTP/2 flow control on one connection of the lean transport (RFC 9113 §5.2, §6.9): grpc-go's
 * flowcontrol.go (trInFlow, inFlow) for what the client sends, and the send quotas of
 * controlbuf.go's loopyWriter (the connection's and each stream's, the peer's
 * SETTINGS_INITIAL_WINDOW_SIZE and MAX_FRAME_SIZE) for what we send.
 *
 * Receiving: we announce a 1 MiB stream window and raise the connection's to 16 MiB. The
 * connection's window is given back as data arrives, a stream's as its reader consumes it.
 * Sending: a stream's queued data goes out as DATA frames as far as both windows, the peer's frame
 * size and the socket (frame-output.ts' `full`) allow; the rest waits in `blocked` for a
 * WINDOW_UPDATE, a SETTINGS or the socket's 'drain'.
 */
import { DEFAULT_MAX_FRAME, DEFAULT_WINDOW, ErrorCode } from "../../h2/frames.js"
import type { PingStrikes } from "../keepalive-policy.js"
import type { FrameOutput } from "./frame-output.js"
import { H2ConnectionError } from "./h2-error.js"
import type { H2Stream } from "./h2-stream.js"
import * as L from "./limits.js"

const MAX_WINDOW = 2 ** 31 - 1

export class FlowControl {
  /** what the client still lets us send on the connection */
  private sendWindow = DEFAULT_WINDOW
  /** what the client may still send on the connection before our next WINDOW_UPDATE */
  private recvWindow = DEFAULT_WINDOW
  /** received on the connection, not yet given back */
  private recvUnacked = 0
  /** the client's SETTINGS_INITIAL_WINDOW_SIZE: a new stream's send window */
  peerInitialWindow = DEFAULT_WINDOW
  private peerMaxFrame = DEFAULT_MAX_FRAME
  /** streams whose queued data waits for a window or for the socket */
  readonly blocked = new Set<H2Stream>()

  constructor(
    private readonly output: FrameOutput,
    /** data sent resets the client ping policy's strikes (keepalive-policy.ts) */
    private readonly pings: PingStrikes
  ) {}

  /** Right after our SETTINGS: the connection's receive window, from the default to ours. */
  open(): void {
    this.output.windowUpdate(0, L.CONNECTION_WINDOW - DEFAULT_WINDOW)
    this.recvWindow = L.CONNECTION_WINDOW
  }

  // ------------------------------------------------------------------ receiving

  /** A DATA frame of `length` bytes (padding included) arrived on the connection. */
  received(length: number): void {
    if (length > this.recvWindow)
      throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "connection window exceeded")
    this.recvWindow -= length
    // the connection's window is given back as data arrives (grpc-go's trInFlow); streams' as it is read
    this.recvUnacked += length
    if (this.recvUnacked >= L.CONNECTION_WINDOW / 2) {
      this.output.windowUpdate(0, this.recvUnacked)
      this.recvWindow += this.recvUnacked
      this.recvUnacked = 0
    }
  }

  /** ... on stream `s`: false when that is more than its window (a stream error: FLOW_CONTROL_ERROR). */
  streamReceived(s: H2Stream, length: number): boolean {
    if (length > s.recvWindow) return false
    s.recvWindow -= length
    return true
  }

  /** `s`'s reader consumed `bytes` of its DATA: its window is given back a quarter at a time. */
  consumed(s: H2Stream, bytes: number): void {
    if (s.closed || s.remoteEnded) return
    s.recvUnacked += bytes
    if (s.recvUnacked >= L.STREAM_WINDOW / 4) {
      this.output.windowUpdate(s.id, s.recvUnacked)
      s.recvWindow += s.recvUnacked
      s.recvUnacked = 0
    }
  }

  // ------------------------------------------------------------------ sending

  /** The client's WINDOW_UPDATE on the connection. */
  connectionIncrement(increment: number): void {
    if (increment === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0")
    this.sendWindow += increment
    if (this.sendWindow > MAX_WINDOW) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "window overflow")
  }

  /** ... on stream `s`: the code of a stream error it is, or 0. */
  streamIncrement(s: H2Stream, increment: number): number {
    if (increment === 0) return ErrorCode.PROTOCOL_ERROR
    s.sendWindow += increment
    return s.sendWindow > MAX_WINDOW ? ErrorCode.FLOW_CONTROL_ERROR : 0
  }

  /** The client's SETTINGS_INITIAL_WINDOW_SIZE: every open stream's send window moves by the change. */
  initialWindowSize(value: number, streams: Iterable<H2Stream>): void {
    if (value > MAX_WINDOW) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "INITIAL_WINDOW_SIZE too large")
    const delta = value - this.peerInitialWindow
    this.peerInitialWindow = value
    for (const s of streams) {
      s.sendWindow += delta
      if (s.sendWindow > MAX_WINDOW) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "stream window overflow")
    }
  }

  /** The client's SETTINGS_MAX_FRAME_SIZE: the longest DATA frame we send. */
  maxFrameSize(value: number): void {
    if (value < DEFAULT_MAX_FRAME || value > 16777215) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "MAX_FRAME_SIZE out of range")
    }
    this.peerMaxFrame = value
  }

  /** Sends what the windows allow of `s`'s queued data; true when all of it is out (else `s` waits in `blocked`). */
  send(s: H2Stream): boolean {
    while (s.outBytes > 0) {
      const room = Math.min(s.sendWindow, this.sendWindow, this.peerMaxFrame)
      if (room <= 0 || this.output.full) {
        this.blocked.add(s)
        return false
      }
      const n = Math.min(room, s.outBytes)
      this.output.dataHeader(n, s.id)
      let left = n
      while (left > 0) {
        const c = s.out[0]!
        const avail = c.length - s.outOffset
        if (avail <= left) {
          this.output.push(s.outOffset === 0 ? c : c.subarray(s.outOffset))
          s.out.shift()
          s.outOffset = 0
          left -= avail
        } else {
          this.output.push(c.subarray(s.outOffset, s.outOffset + left))
          s.outOffset += left
          left = 0
        }
      }
      s.outBytes -= n
      s.sendWindow -= n
      this.sendWindow -= n
      this.pings.reset()
    }
    this.blocked.delete(s)
    return true
  }
}
