/**
 * SETTINGS both ways on one connection of the lean transport (RFC 9113 §3.4, §6.5; grpc-go's
 * handleSettings): we send ours; the client sends the preface, then its SETTINGS, and
 * acknowledges ours — all within the handshake deadline (slowloris: hostile-spec 9a, 9c), or the
 * connection ends. Its SETTINGS are checked and applied: the initial window and frame size to
 * flow control (flow-control.ts), ENABLE_PUSH must be 0 or 1, the rest binds no server.
 */
import { ErrorCode, Flag, PREFACE, readUint32, Setting } from "../../h2/frames.js"
import type { FlowControl } from "./flow-control.js"
import { H2ConnectionError } from "./h2-error.js"
import type { H2Stream } from "./h2-stream.js"
import * as L from "./limits.js"

/** The SETTINGS we announce. */
export const ourSettings = (maxConcurrentStreams: number): Array<readonly [number, number]> => {
  const settings: Array<readonly [number, number]> = [
    [Setting.ENABLE_PUSH, 0],
    [Setting.INITIAL_WINDOW_SIZE, L.STREAM_WINDOW],
    [Setting.MAX_HEADER_LIST_SIZE, L.MAX_HEADER_LIST_SIZE]
  ]
  // Infinity: not announced (no limit)
  if (maxConcurrentStreams !== Infinity) settings.push([Setting.MAX_CONCURRENT_STREAMS, maxConcurrentStreams])
  return settings
}

export class ConnectionSettings {
  /** bytes of the client preface read */
  private prefaceHave = 0
  /** the client's first SETTINGS came: every other frame must follow it */
  seen = false
  private acked = false
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly flow: FlowControl,
    /** the open streams: the client's initial window applies to them */
    private readonly streams: Map<number, H2Stream>
  ) {}

  /** Starts the handshake deadline. */
  start(timeoutMs: number, onTimeout: () => void): void {
    this.timer = setTimeout(onTimeout, timeoutMs)
  }

  get prefaceRead(): boolean {
    return this.prefaceHave === PREFACE.length
  }

  /**
   * Reads the client preface from the start of `chunk`: returns where the frames begin in it
   * (its length: none yet), or -1 when the bytes are not the preface.
   */
  preface(chunk: Uint8Array): number {
    let pos = 0
    while (pos < chunk.length && this.prefaceHave < PREFACE.length) {
      if (chunk[pos++] !== PREFACE[this.prefaceHave++]) return -1
    }
    return pos
  }

  /** A SETTINGS frame of the client's: true when it needs our ACK (it is not one itself). */
  frame(flags: number, streamId: number, buf: Uint8Array, start: number, length: number): boolean {
    if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS on a stream")
    if ((flags & Flag.ACK) !== 0) {
      if (length !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS ACK with a payload")
      this.acked = true
      this.handshakeDone()
      return false
    }
    if (length % 6 !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS length not a multiple of 6")
    if (!this.seen) {
      this.seen = true
      this.handshakeDone()
    }
    for (let at = start; at < start + length; at += 6) {
      const id = (buf[at]! << 8) | buf[at + 1]!
      const value = readUint32(buf, at + 2)
      if (id === Setting.INITIAL_WINDOW_SIZE) this.flow.initialWindowSize(value, this.streams.values())
      else if (id === Setting.MAX_FRAME_SIZE) this.flow.maxFrameSize(value)
      else if (id === Setting.ENABLE_PUSH && value > 1) {
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "ENABLE_PUSH not 0 or 1")
      }
      // HEADER_TABLE_SIZE: our encoder uses no dynamic table; the others do not bind a server
    }
    return true
  }

  /** The handshake deadline is off (the handshake is done, or the connection is). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private handshakeDone(): void {
    if (this.seen && this.acked) this.stop()
  }
}
