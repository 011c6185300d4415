/**
 * What one connection of the lean transport writes (grpc-go's loopyWriter writing through its
 * bufWriter, controlbuf.go): the frames of a tick are gathered and handed to the socket once, on
 * the next tick — one `socket.write`, or a corked writev above 64 KiB. Header blocks and DATA
 * payloads are queued by reference (a watch batch is never copied here); control frames are
 * written whole into one allocation each by src/h2/frames.ts' writers, which the lean client
 * shares. Why the client's output stays a reused buffer that is copied per flush instead:
 * docs/architecture.md, deviation 7.
 */
import type { Duplex } from "node:stream"
import {
  FRAME_HEADER,
  FrameType,
  goawayFrame,
  pingFrame,
  settingsFrame,
  u32Frame,
  writeFrameHeader
} from "../../h2/frames.js"
import * as L from "./limits.js"

/** at most this many bytes a tick are concatenated into one write; more go corked, by reference */
const SMALL_WRITE = 64 * 1024

export class FrameOutput {
  private out: Array<Uint8Array> = []
  /** bytes queued this tick */
  private bytes = 0
  private flushScheduled = false
  /** control answers written while the socket still held unsent bytes */
  private queuedControl = 0
  private stopped = false

  constructor(private readonly socket: Duplex) {}

  /** A frame: its header, then `payload` by reference. */
  frame(type: number, flags: number, streamId: number, payload: Uint8Array): void {
    if (this.stopped) return
    const head = Buffer.allocUnsafe(FRAME_HEADER)
    writeFrameHeader(head, 0, payload.length, type, flags, streamId)
    this.push(head)
    if (payload.length > 0) this.push(payload)
  }

  /** A DATA frame's header; its `length` bytes follow with `push`. */
  dataHeader(length: number, streamId: number): void {
    const head = Buffer.allocUnsafe(FRAME_HEADER)
    writeFrameHeader(head, 0, length, FrameType.DATA, 0, streamId)
    this.push(head)
  }

  push(chunk: Uint8Array): void {
    this.out.push(chunk)
    this.bytes += chunk.length
    if (!this.flushScheduled) {
      this.flushScheduled = true
      process.nextTick(() => this.flush())
    }
  }

  windowUpdate(streamId: number, increment: number): void {
    if (!this.stopped) this.push(u32Frame(FrameType.WINDOW_UPDATE, streamId, increment))
  }

  rstStream(streamId: number, code: number): void {
    if (!this.stopped) this.push(u32Frame(FrameType.RST_STREAM, streamId, code))
  }

  settings(flags: number, entries: ReadonlyArray<readonly [number, number]>): void {
    if (!this.stopped) this.push(settingsFrame(flags, entries))
  }

  ping(flags: number, data: Uint8Array, start: number): void {
    if (!this.stopped) this.push(pingFrame(flags, data, start))
  }

  goaway(lastStreamId: number, code: number, debug: string): void {
    if (!this.stopped) this.push(goawayFrame(lastStreamId, code, Buffer.from(debug, "latin1")))
  }

  /**
   * May a control answer (a SETTINGS or PING ACK) be queued? False when too many are for a peer
   * that does not read (the connection ends: ENHANCE_YOUR_CALM).
   */
  controlAllowed(): boolean {
    if (this.socketHolds() > 0) return ++this.queuedControl <= L.MAX_QUEUED_CONTROL
    this.queuedControl = 0
    return true
  }

  /** A socket read began: if the socket has sent everything, the count of queued control answers restarts. */
  reading(): void {
    if ((this.socket as { writableLength?: number }).writableLength === 0) this.queuedControl = 0
  }

  /** The socket and this tick's frames hold more than SOCKET_HIGH_WATER: stream data waits for 'drain'. */
  get full(): boolean {
    return this.socketHolds() + this.bytes > L.SOCKET_HIGH_WATER
  }

  /** Hands this tick's frames to the socket (the next tick does it anyway). */
  flush(): void {
    this.flushScheduled = false
    if (this.out.length === 0 || this.stopped) return
    const out = this.out
    const bytes = this.bytes
    this.out = []
    this.bytes = 0
    if (bytes <= SMALL_WRITE) this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out, bytes))
    else {
      this.socket.cork()
      for (const c of out) this.socket.write(c)
      this.socket.uncork()
    }
  }

  /** The socket is gone: nothing more is written. */
  stop(): void {
    this.stopped = true
  }

  private socketHolds(): number {
    return (this.socket as { writableLength?: number }).writableLength ?? 0
  }
}
