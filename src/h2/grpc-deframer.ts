/**
 * gRPC message framing on the receive side (grpc-go's rpc_util.go `parser.recvMsg`): a stream of
 * DATA chunks in, whole messages out (each one a 1-byte compressed flag, a 4-byte big-endian
 * length, the protobuf bytes). Shared by our lean client (grpc-client.ts) and the server's
 * transport (src/server/transport/call-requests.ts); what differs between them is a parameter:
 *
 * - views (the client's): a message that sits whole inside one chunk is handed over as
 *   (chunk, start, end) — no copy, no view object. Only a message split across chunks is
 *   assembled, in one buffer reused for the parser's life. So the receiver must read what it
 *   needs before returning: the bytes may be overwritten by the next read or message.
 * - own buffers (the server's): each message is handed over in a Buffer of its own, start 0, end
 *   its length — a decoded request keeps views of it (its keys and values). One allocation and one
 *   copy per message; a split message is assembled straight into it.
 *
 * A message longer than `maxMessageBytes` is refused as soon as its prefix is read, before anything
 * is allocated for it; so is a compressed one (no side offers compression). Either ends the
 * parser: it throws `GrpcMessageError` and reads nothing more.
 */
export type MessageHandler = (buf: Uint8Array, start: number, end: number) => void

/** Where whole messages go: `message(buf, start, end)`, the bytes valid as the mode above says. */
export interface MessageSink {
  message(buf: Uint8Array, start: number, end: number): void
}

/** A message the parser refuses (a stream error: the call ends with a status). */
export class GrpcMessageError extends RangeError {
  constructor(
    readonly reason: "compressed" | "tooLarge",
    /** the message's length from its prefix */
    readonly size: number,
    message: string
  ) {
    super(message)
  }
}

const EMPTY = new Uint8Array(0)

export class GrpcFrameParser {
  private readonly sink: MessageSink
  /** bytes of the pending message's 5-byte prefix read so far (5: its body is being read) */
  private headHave = 0
  /** the pending message's compressed flag and length, from its prefix */
  private flag = 0
  private size = 0
  /** where the pending message's body is assembled, and how much of it is there */
  private body: Uint8Array = EMPTY
  private bodyHave = 0
  /** views: the assembly buffer, reused; it starts small (a run may hold thousands of idle streams) and grows to the largest split message */
  private spare: Uint8Array = EMPTY
  private stopped = false

  constructor(
    sink: MessageHandler | MessageSink,
    private readonly maxMessageBytes: number = Infinity,
    /** each message in a Buffer of its own (else views, see above) */
    private readonly ownBuffers: boolean = false
  ) {
    this.sink = typeof sink === "function" ? { message: sink } : sink
  }

  /** Takes the bytes chunk[start, end). Throws GrpcMessageError on a message it refuses. */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    let pos = start
    if (this.headHave > 0) {
      pos = this.resume(chunk, start, end)
      if (pos < 0) return // still incomplete; the bytes are used up
    }
    while (!this.stopped) {
      if (end - pos < 5) {
        while (pos < end) this.prefixByte(chunk[pos++]!)
        return
      }
      const size = ((chunk[pos + 1]! << 24) | (chunk[pos + 2]! << 16) | (chunk[pos + 3]! << 8) | chunk[pos + 4]!) >>> 0
      this.check(chunk[pos]!, size)
      const from = pos + 5
      const stop = from + size
      if (stop > end) {
        this.beginBody(size)
        this.body.set(chunk.subarray(from, end), 0)
        this.bodyHave = end - from
        return
      }
      if (this.ownBuffers) {
        const own = Buffer.allocUnsafe(size)
        own.set(chunk.subarray(from, stop), 0)
        this.sink.message(own, 0, size)
      } else this.sink.message(chunk, from, stop)
      pos = stop
    }
  }

  /** bytes of a partial message waiting for more chunks (0 between messages) */
  get buffered(): number {
    return this.headHave + this.bodyHave
  }

  /** Reads nothing more (the call ended); a partial message is dropped. */
  stop(): void {
    this.stopped = true
    this.headHave = 0
    this.bodyHave = 0
    this.body = EMPTY
  }

  /** Goes on with the pending message; returns where the next message starts, or -1 if none does. */
  private resume(chunk: Uint8Array, start: number, end: number): number {
    let pos = start
    while (this.headHave < 5) {
      if (pos === end) return -1
      this.prefixByte(chunk[pos++]!)
    }
    const size = this.size
    const take = Math.min(size - this.bodyHave, end - pos)
    if (take > 0) {
      this.body.set(chunk.subarray(pos, pos + take), this.bodyHave)
      this.bodyHave += take
      pos += take
    }
    if (this.bodyHave < size) return -1
    const body = this.body
    this.headHave = 0
    this.bodyHave = 0
    if (this.ownBuffers) this.body = EMPTY // the receiver owns it now
    this.sink.message(body, 0, size)
    return pos
  }

  /** One byte of a prefix split across chunks; the body begins when it is whole. */
  private prefixByte(b: number): void {
    if (this.headHave === 0) {
      this.flag = b
      this.size = 0
    } else this.size = this.size * 256 + b
    if (++this.headHave === 5) {
      this.check(this.flag, this.size)
      this.beginBody(this.size)
    }
  }

  private check(flag: number, size: number): void {
    if (flag !== 0) {
      this.stop()
      throw new GrpcMessageError("compressed", size, "gRPC: compressed message (compression was not offered)")
    }
    if (size > this.maxMessageBytes) {
      this.stop()
      throw new GrpcMessageError(
        "tooLarge",
        size,
        `gRPC: message of ${size} bytes, above the limit of ${this.maxMessageBytes}`
      )
    }
  }

  private beginBody(size: number): void {
    this.headHave = 5
    this.size = size
    this.bodyHave = 0
    if (this.ownBuffers) this.body = Buffer.allocUnsafe(size)
    else {
      if (this.spare.length < size)
        this.spare = new Uint8Array(Math.max(size, Math.min(this.spare.length * 2, 1 << 20)))
      this.body = this.spare
    }
  }
}
