/**
 * The header blocks a client sends on one connection of the lean transport: a HEADERS frame, its
 * padding and priority stripped, and the CONTINUATION frames that finish it, decoded with the
 * connection's HPACK decoder (src/h2/hpack.ts) — golang.org/x/net/http2's MetaHeadersFrame, which
 * grpc-go's operateHeaders is given. The limits against hostile peers (limits.ts): the block's
 * size and CONTINUATION count, and its deadline, since an open block holds the connection's HPACK
 * state (hostile-spec 9b).
 */
import { ErrorCode, Flag, FrameType, readUint32 } from "../../h2/frames.js"
import { type HeaderList, HpackDecoder } from "../../h2/hpack.js"
import { H2ConnectionError } from "./h2-error.js"
import * as L from "./limits.js"

export class HeaderBlocks {
  private readonly decoder = new HpackDecoder(L.HEADER_TABLE_SIZE, L.MAX_HEADER_LIST_SIZE, L.MAX_HEADER_FIELDS)
  /** the stream whose block CONTINUATION frames are finishing (0: none is open) */
  stream = 0
  /** the flags of the HEADERS frame that began the block decoded last (END_STREAM) */
  flags = 0
  private parts: Array<Buffer> = []
  private bytes = 0
  private frames = 0
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly timeoutMs: number,
    /** the block was not finished in time: the connection ends (ENHANCE_YOUR_CALM) */
    private readonly onTimeout: () => void
  ) {}

  /** A HEADERS frame: its header list when the block ends in it, undefined when CONTINUATION frames follow. */
  headers(flags: number, streamId: number, buf: Uint8Array, start: number, end: number): HeaderList | undefined {
    if (streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "HEADERS on stream 0")
    let from = start
    let to = end
    if ((flags & Flag.PADDED) !== 0) {
      if (to - from < 1) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "HEADERS padding length missing")
      const pad = buf[from++]!
      if (pad > to - from)
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "HEADERS padding longer than the frame")
      to -= pad
    }
    if ((flags & Flag.PRIORITY) !== 0) {
      if (to - from < 5) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "HEADERS priority missing")
      if ((readUint32(buf, from) & 0x7fffffff) === streamId) {
        throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "stream depends on itself")
      }
      from += 5
    }
    this.flags = flags
    if ((flags & Flag.END_HEADERS) !== 0) return this.decoder.decode(buf, from, to)
    this.stream = streamId
    this.parts = []
    this.bytes = 0
    this.frames = 0
    this.append(buf, from, to)
    this.timer = setTimeout(this.onTimeout, this.timeoutMs)
    return undefined
  }

  /** Any frame while a block is open: it must be the block's CONTINUATION; the header list when it ends the block. */
  continuation(
    type: number,
    flags: number,
    streamId: number,
    buf: Uint8Array,
    start: number,
    end: number
  ): HeaderList | undefined {
    if (type !== FrameType.CONTINUATION || streamId !== this.stream) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, "expected CONTINUATION")
    }
    if (++this.frames > L.MAX_CONTINUATIONS) {
      throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "too many CONTINUATION frames")
    }
    this.append(buf, start, end)
    if ((flags & Flag.END_HEADERS) === 0) return undefined
    const block = Buffer.concat(this.parts)
    this.stop()
    return this.decoder.decode(block, 0, block.length)
  }

  /** The list decoded last was over SETTINGS_MAX_HEADER_LIST_SIZE or 128 fields (its stream is refused). */
  get listTooLarge(): boolean {
    return this.decoder.listTooLarge
  }

  /** No block is open any more (it ended, or the connection did). */
  stop(): void {
    this.stream = 0
    this.parts = []
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }

  private append(buf: Uint8Array, start: number, end: number): void {
    this.bytes += end - start
    if (this.bytes > L.MAX_HEADER_BLOCK_BYTES) {
      throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, "header block too large")
    }
    this.parts.push(Buffer.from(buf.subarray(start, end)))
  }
}
