/**
 * The frames the server sends on the lean client connection (client-connection.ts), each handled
 * as grpc-go's http2Client does in its reader (handleData, operateHeaders, handleRSTStream,
 * handleSettings, handlePing, handleGoAway, handleWindowUpdate): the sink of the frame reader
 * (frame-reader.ts), called in its loop over each socket read. DATA goes straight to its stream's
 * handler; header blocks, CONTINUATION frames included, are decoded with HPACK (hpack.ts). A
 * protocol violation throws (the connection ends with GOAWAY PROTOCOL_ERROR).
 */
import type { ClientFlowControl } from "./client-flow-control.js"
import type { H2Stream } from "./client-stream.js"
import type { ClientStreamTable } from "./client-stream-table.js"
import type { ClientWriteBuffer } from "./client-write-buffer.js"
import type { FrameSink } from "./frame-reader.js"
import { errorName, Flag, FrameType, readUint32, Setting } from "./frames.js"
import { HpackDecoder } from "./hpack.js"

const NO_SETTINGS: ReadonlyArray<readonly [number, number]> = []

export class ClientIncomingFrames implements FrameSink {
  private readonly decoder = new HpackDecoder()
  /** the stream of the DATA frame being received (undefined: one we no longer track) */
  private dataStream: H2Stream | undefined
  // a header block continued in CONTINUATION frames
  private continuing: { streamId: number; endStream: boolean; parts: Array<Uint8Array> } | undefined

  constructor(
    private readonly table: ClientStreamTable,
    private readonly flow: ClientFlowControl,
    private readonly output: ClientWriteBuffer,
    /** the server's SETTINGS were applied and acknowledged */
    private readonly onSettings: () => void,
    /** the server's GOAWAY: its error code and debug data */
    private readonly onGoaway: (code: number, debug: string) => void
  ) {}

  dataStart(streamId: number, _flags: number, length: number): void {
    if (this.continuing !== undefined) throw new RangeError("header block interrupted by DATA")
    const stream = this.table.streams.get(streamId)
    this.dataStream = stream
    this.flow.received(stream, length)
  }

  data(buf: Uint8Array, start: number, end: number): void {
    const stream = this.dataStream
    if (stream !== undefined && !stream.finished) stream.handler.onData(buf, start, end)
  }

  dataEnd(_streamId: number, flags: number): void {
    const stream = this.dataStream
    this.dataStream = undefined
    if (stream !== undefined && !stream.finished && (flags & Flag.END_STREAM) !== 0) this.table.endedRemotely(stream)
  }

  frame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    if (this.continuing !== undefined && type !== FrameType.CONTINUATION) {
      throw new RangeError("header block interrupted by another frame")
    }
    switch (type) {
      case FrameType.HEADERS: {
        if ((flags & Flag.PADDED) !== 0) {
          const pad = buf[start++]!
          end -= pad
          if (end < start) throw new RangeError("HEADERS padding longer than the frame")
        }
        if ((flags & Flag.PRIORITY) !== 0) start += 5
        const endStream = (flags & Flag.END_STREAM) !== 0
        if ((flags & Flag.END_HEADERS) !== 0) this.headerBlock(streamId, endStream, buf, start, end)
        else this.continuing = { streamId, endStream, parts: [buf.slice(start, end)] }
        return
      }
      case FrameType.CONTINUATION: {
        const c = this.continuing
        if (c === undefined || c.streamId !== streamId) throw new RangeError("CONTINUATION without its HEADERS")
        c.parts.push(buf.slice(start, end))
        if ((flags & Flag.END_HEADERS) !== 0) {
          this.continuing = undefined
          const block = Buffer.concat(c.parts)
          this.headerBlock(streamId, c.endStream, block, 0, block.length)
        }
        return
      }
      case FrameType.RST_STREAM: {
        const stream = this.table.streams.get(streamId)
        if (stream === undefined) return
        this.table.finish(stream)
        stream.handler.onReset(`stream reset by the server (RST_STREAM ${errorName(readUint32(buf, start))})`)
        return
      }
      case FrameType.SETTINGS:
        if ((flags & Flag.ACK) !== 0) return
        for (let at = start; at + 6 <= end; at += 6)
          this.setting((buf[at]! << 8) | buf[at + 1]!, readUint32(buf, at + 2))
        this.output.settings(NO_SETTINGS, true)
        this.onSettings()
        return
      case FrameType.PING:
        if ((flags & Flag.ACK) === 0) this.output.pingAck(buf, start)
        return
      case FrameType.GOAWAY:
        this.onGoaway(readUint32(buf, start + 4), Buffer.from(buf.subarray(start + 8, end)).toString("latin1"))
        return
      case FrameType.WINDOW_UPDATE:
        return this.windowUpdate(streamId, readUint32(buf, start) & 0x7fffffff)
      case FrameType.PUSH_PROMISE:
        throw new RangeError("PUSH_PROMISE, though push was disabled")
      default:
        return // PRIORITY and unknown frame types are ignored
    }
  }

  private headerBlock(streamId: number, endStream: boolean, buf: Uint8Array, start: number, end: number): void {
    // Decode even for a stream we no longer track: the dynamic table must stay in step.
    const headers = this.decoder.decode(buf, start, end)
    const stream = this.table.streams.get(streamId)
    if (stream === undefined || stream.finished) return
    stream.handler.onHeaders(headers, endStream)
    if (endStream && !stream.finished) this.table.endedRemotely(stream)
  }

  private windowUpdate(streamId: number, increment: number): void {
    if (streamId === 0) {
      this.flow.connectionIncrement(increment)
      this.table.pumpBlocked()
      return
    }
    const stream = this.table.streams.get(streamId)
    if (stream === undefined) return
    stream.sendWindow += increment
    this.table.pump(stream)
  }

  private setting(id: number, value: number): void {
    switch (id) {
      case Setting.MAX_CONCURRENT_STREAMS:
        this.table.maxConcurrent = value
        break
      case Setting.INITIAL_WINDOW_SIZE:
        this.flow.initialWindowSize(value, this.table.streams.values())
        this.table.pumpBlocked()
        break
      case Setting.MAX_FRAME_SIZE:
        this.flow.maxFrameSize(value)
        break
      default:
        break // our header block uses no dynamic table, so HEADER_TABLE_SIZE does not concern us
    }
  }
}
