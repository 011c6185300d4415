/**
 * The streams of the lean client connection (client-connection.ts) — http2_client.go's
 * activeStreams, nextID and maxConcurrentStreams with its waiting streams: streams open in order on
 * odd ids, wait while the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached, and leave when both
 * sides have ended (or on a reset). A stream's data goes out through flow control
 * (client-flow-control.ts); its request header block is built once per path and reused.
 */
import type { ClientFlowControl } from "./client-flow-control.js"
import type { H2Stream } from "./client-stream.js"
import type { ClientWriteBuffer } from "./client-write-buffer.js"
import { ErrorCode } from "./frames.js"
import { grpcRequestHeaderBlock } from "./hpack.js"

const MAX_STREAM_ID = 2 ** 31 - 1

export class ClientStreamTable {
  readonly streams = new Map<number, H2Stream>()
  private readonly waiting: Array<H2Stream> = []
  private readonly headerBlocks = new Map<string, Uint8Array>()
  private nextId = 1
  private active = 0
  /** the server's SETTINGS_MAX_CONCURRENT_STREAMS */
  maxConcurrent = Infinity

  constructor(
    private readonly output: ClientWriteBuffer,
    private readonly flow: ClientFlowControl,
    private readonly authority: string,
    /** no stream id is left: the connection fails */
    private readonly idsExhausted: () => void
  ) {}

  /** Opens `stream` now, or once the server's stream limit allows. */
  open(stream: H2Stream): void {
    if (this.active < this.maxConcurrent) this.start(stream)
    else this.waiting.push(stream)
  }

  /** Sends what flow control allows of the stream's pending data, and END_STREAM after it. */
  pump(stream: H2Stream): void {
    if (this.flow.send(stream)) this.endedLocally(stream)
  }

  /** A window opened: the streams waiting for one send. */
  pumpBlocked(): void {
    for (const stream of [...this.flow.blocked]) this.pump(stream)
  }

  /** Resets the stream (RST_STREAM `code`; a stream still waiting to open just leaves). */
  reset(stream: H2Stream, code: number): void {
    if (stream.id === 0) {
      const i = this.waiting.indexOf(stream)
      if (i >= 0) this.waiting.splice(i, 1)
      stream.finished = true
      return
    }
    this.output.rstStream(stream.id, code)
    this.finish(stream)
  }

  /** The server ended its side (END_STREAM): the handler learns it, the stream leaves. */
  endedRemotely(stream: H2Stream): void {
    stream.remoteEnded = true
    stream.handler.onEnd()
    if (stream.finished) return
    // The server's answer is complete; if we were still sending, tell it we are done too.
    if (!stream.localEnded) this.output.rstStream(stream.id, ErrorCode.NO_ERROR)
    this.finish(stream)
  }

  /** The stream leaves; a waiting one may open in its place. */
  finish(stream: H2Stream): void {
    if (stream.finished) return
    stream.finished = true
    this.flow.blocked.delete(stream)
    if (this.streams.delete(stream.id)) this.active--
    while (this.waiting.length > 0 && this.active < this.maxConcurrent) this.start(this.waiting.shift()!)
  }

  /** Every stream leaves, open or waiting (the connection goes); returns them. */
  takeAll(): Array<H2Stream> {
    const streams = [...this.streams.values(), ...this.waiting]
    this.clear()
    return streams
  }

  /** Every stream leaves, untold (the connection was closed). */
  clear(): void {
    this.streams.clear()
    this.waiting.length = 0
  }

  private start(stream: H2Stream): void {
    if (this.nextId > MAX_STREAM_ID) {
      this.idsExhausted()
      return
    }
    stream.id = this.nextId
    this.nextId += 2
    stream.sendWindow = this.flow.peerInitialWindow
    this.streams.set(stream.id, stream)
    this.active++
    let block = this.headerBlocks.get(stream.path)
    if (block === undefined) {
      block = grpcRequestHeaderBlock(stream.path, this.authority)
      this.headerBlocks.set(stream.path, block)
    }
    this.output.headers(stream.id, block)
    this.pump(stream)
  }

  private endedLocally(stream: H2Stream): void {
    stream.localEnded = true
    this.flow.blocked.delete(stream)
    if (stream.remoteEnded) this.finish(stream)
  }
}
