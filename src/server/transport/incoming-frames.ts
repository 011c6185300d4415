/**
 * The frames a client sends on one connection of the lean transport, each handled as grpc-go's
 * http2Server does in HandleStreams (handleData, handlePing, handleWindowUpdate, handleRSTStream;
 * handleSettings is connection-settings.ts, operateHeaders stream-opener.ts): the sink of the
 * frame reader (src/h2/frame-reader.ts), called in its loop over each socket read. DATA goes
 * straight into its stream; header blocks through header-blocks.ts to stream-opener.ts. A
 * protocol violation throws H2ConnectionError (the connection ends with GOAWAY: connection.ts); a
 * stream's is a stream error (RST_STREAM, the connection lives on).
 */
import type { FrameSink } from "../../h2/frame-reader.js"
import { ErrorCode, Flag, FrameType, readUint32 } from "../../h2/frames.js"
import type { HeaderList } from "../../h2/hpack.js"
import type { PingStrikes } from "../keepalive-policy.js"
import type { ConnectionSettings } from "./connection-settings.js"
import type { FlowControl } from "./flow-control.js"
import type { FrameOutput } from "./frame-output.js"
import type { HeaderBlocks } from "./header-blocks.js"
import { H2ConnectionError } from "./h2-error.js"
import type { H2Stream } from "./h2-stream.js"
import type { KeepalivePings } from "./keepalive-pings.js"
import { ResetRate } from "./limits.js"
import type { StreamOpener } from "./stream-opener.js"
import type { StreamTable } from "./stream-table.js"

const PREFACE_THEN_SETTINGS = "the client preface must be followed by SETTINGS"

export class IncomingFrames implements FrameSink {
  // the DATA frame being read
  private dataStream: H2Stream | undefined
  private dataLength = 0
  private dataSeen = 0
  private readonly resets = new ResetRate()

  constructor(
    private readonly table: StreamTable,
    private readonly opener: StreamOpener,
    private readonly flow: FlowControl,
    private readonly output: FrameOutput,
    private readonly blocks: HeaderBlocks,
    private readonly settings: ConnectionSettings,
    private readonly keepalive: KeepalivePings,
    private readonly pings: PingStrikes,
    /** the client's GOAWAY: its open calls finish, then the socket closes */
    private readonly peerGoaway: () => void
  ) {}

  dataStart(streamId: number, _flags: number, length: number): void {
    if (this.blocks.stream !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "expected CONTINUATION")
    if (!this.settings.seen) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, PREFACE_THEN_SETTINGS)
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on stream 0")
    this.flow.received(length)
    this.dataLength = length
    this.dataSeen = 0
    const s = this.table.streams.get(streamId)
    this.dataStream = undefined
    if (s === undefined) {
      if (streamId > this.table.lastStreamId)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "DATA on an idle stream")
      return // a stream closed lately: dropped (RFC 9113 §5.1)
    }
    if (s.remoteEnded) return this.table.reset(s, ErrorCode.STREAM_CLOSED)
    if (!this.flow.streamReceived(s, length)) return this.table.reset(s, ErrorCode.FLOW_CONTROL_ERROR)
    this.dataStream = s
  }

  data(buf: Uint8Array, start: number, end: number): void {
    const s = this.dataStream
    if (s === undefined) return
    this.dataSeen += end - start
    s.data(buf, start, end)
  }

  dataEnd(_streamId: number, flags: number): void {
    const s = this.dataStream
    this.dataStream = undefined
    if (s === undefined || s.closed) return
    // padding counts against the window but is nobody's to read
    if (this.dataLength > this.dataSeen) this.table.consumed(s, this.dataLength - this.dataSeen)
    if ((flags & Flag.END_STREAM) !== 0 && !s.remoteEnded) s.remoteEnd()
  }

  frame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    if (this.blocks.stream !== 0) {
      const headers = this.blocks.continuation(type, flags, streamId, buf, start, end)
      if (headers !== undefined) this.headerList(streamId, this.blocks.flags, headers)
      return
    }
    if (!this.settings.seen && type !== FrameType.SETTINGS) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, PREFACE_THEN_SETTINGS)
    }
    const length = end - start
    switch (type) {
      case FrameType.HEADERS: {
        const headers = this.blocks.headers(flags, streamId, buf, start, end)
        if (headers !== undefined) this.headerList(streamId, flags, headers)
        return
      }
      case FrameType.SETTINGS:
        if (!this.settings.frame(flags, streamId, buf, start, length)) return
        this.controlAnswer()
        this.output.settings(Flag.ACK, NO_SETTINGS)
        return this.table.flushBlocked()
      case FrameType.PING:
        return this.ping(flags, streamId, buf, start, length)
      case FrameType.WINDOW_UPDATE:
        return this.windowUpdate(streamId, buf, start, length)
      case FrameType.RST_STREAM:
        return this.rstStream(streamId, length)
      case FrameType.GOAWAY:
        if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "GOAWAY on a stream")
        return this.peerGoaway()
      case FrameType.PRIORITY:
        if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PRIORITY on stream 0")
        if (length !== 5) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "PRIORITY length not 5")
        return
      case FrameType.PUSH_PROMISE:
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PUSH_PROMISE from a client")
      case FrameType.CONTINUATION:
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "CONTINUATION without HEADERS")
      default:
      // unknown frame types are ignored (RFC 9113 §4.1)
    }
  }

  private headerList(streamId: number, flags: number, headers: HeaderList): void {
    this.opener.headerList(streamId, flags, headers, this.blocks.listTooLarge)
  }

  private ping(flags: number, streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "PING on a stream")
    if (length !== 8) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "PING payload not 8 bytes")
    if ((flags & Flag.ACK) !== 0) return this.keepalive.acked()
    if (this.pings.onPing(this.table.streams.size)) {
      throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "too_many_pings")
    }
    this.controlAnswer()
    this.output.ping(Flag.ACK, buf, start)
  }

  private windowUpdate(streamId: number, buf: Uint8Array, start: number, length: number): void {
    if (length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "WINDOW_UPDATE length not 4")
    const increment = readUint32(buf, start) & 0x7fffffff
    if (streamId === 0) {
      this.flow.connectionIncrement(increment)
      return this.table.flushBlocked()
    }
    const s = this.table.streams.get(streamId)
    if (s === undefined) {
      if (streamId > this.table.lastStreamId)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream")
      return
    }
    const error = this.flow.streamIncrement(s, increment)
    if (error !== 0) return this.table.reset(s, error)
    this.table.flush(s)
  }

  private rstStream(streamId: number, length: number): void {
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on stream 0")
    if (length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "RST_STREAM length not 4")
    const s = this.table.streams.get(streamId)
    if (s === undefined) {
      if (streamId > this.table.lastStreamId)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "RST_STREAM on an idle stream")
      return
    }
    // rapid reset (CVE-2023-44487): streams opened and reset faster than a token bucket allows
    const allowed = this.resets.take()
    this.table.close(s)
    s.cancel()
    if (!allowed) throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many stream resets")
  }

  /** A SETTINGS or PING ACK: too many queued for a peer that does not read end the connection. */
  private controlAnswer(): void {
    if (!this.output.controlAllowed()) {
      throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many control frames queued")
    }
  }
}

const NO_SETTINGS: ReadonlyArray<readonly [number, number]> = []
