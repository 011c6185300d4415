/**
 * gRPC message framing on the receive side: a stream of DATA chunks in, whole messages out
 * (each one a 1-byte compressed flag, a 4-byte big-endian length, the protobuf bytes).
 *
 * A message that sits whole inside one chunk is handed over as (chunk, start, end) — no copy, no
 * view object. Only a message split across chunks is assembled, in one buffer reused for the
 * stream's life. So the receiver must read what it needs before returning: the bytes may be
 * overwritten by the next message.
 */
export type MessageHandler = (buf: Uint8Array, start: number, end: number) => void

export class GrpcFrameParser {
  /**
   * The partial message (from its prefix on) carried over from earlier chunks. It starts small
   * (a run may hold thousands of idle streams) and grows to the largest split message.
   */
  private pending = new Uint8Array(16)
  private have = 0
  /** total bytes (prefix + body) of the pending message; 0 while its prefix is incomplete */
  private need = 0

  constructor(private readonly onMessage: MessageHandler) {}

  /**
   * Takes the bytes chunk[start, end). Throws on a compressed message: the bench never offers
   * compression, so a server must not use it.
   */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    let pos = start
    if (this.have > 0) {
      pos = this.fillPending(chunk, start, end)
      if (pos < 0) return // still incomplete; the bytes are used up
    }
    while (end - pos >= 5) {
      if (chunk[pos] !== 0) throw new RangeError("gRPC: compressed message (compression was not offered)")
      const size = ((chunk[pos + 1]! << 24) | (chunk[pos + 2]! << 16) | (chunk[pos + 3]! << 8) | chunk[pos + 4]!) >>> 0
      const stop = pos + 5 + size
      if (stop > end) break
      this.onMessage(chunk, pos + 5, stop)
      pos = stop
    }
    if (pos < end) this.stash(chunk, pos, end)
  }

  /** bytes of a partial message waiting for more chunks (0 between messages) */
  get buffered(): number {
    return this.have
  }

  /** Appends to the pending message; returns where the next message starts, or -1 if none does. */
  private fillPending(chunk: Uint8Array, start: number, end: number): number {
    let pos = start
    if (this.need === 0) {
      // Complete the 5-byte prefix first.
      const take = Math.min(5 - this.have, end - pos)
      this.pending.set(chunk.subarray(pos, pos + take), this.have)
      this.have += take
      pos += take
      if (this.have < 5) return -1
      this.readPrefix()
    }
    const take = Math.min(this.need - this.have, end - pos)
    this.pending.set(chunk.subarray(pos, pos + take), this.have)
    this.have += take
    pos += take
    if (this.have < this.need) return -1
    const stop = this.need
    this.have = 0
    this.need = 0
    this.onMessage(this.pending, 5, stop)
    return pos
  }

  private readPrefix(): void {
    const p = this.pending
    if (p[0] !== 0) throw new RangeError("gRPC: compressed message (compression was not offered)")
    const size = ((p[1]! << 24) | (p[2]! << 16) | (p[3]! << 8) | p[4]!) >>> 0
    this.need = 5 + size
    if (this.need > p.length) {
      const bigger = new Uint8Array(Math.max(this.need, Math.min(p.length * 2, 1 << 20)))
      bigger.set(p.subarray(0, this.have))
      this.pending = bigger
    }
  }

  private stash(chunk: Uint8Array, pos: number, end: number): void {
    const rest = end - pos
    this.have = Math.min(rest, 5)
    this.pending.set(chunk.subarray(pos, pos + this.have), 0)
    if (this.have < 5) return
    this.readPrefix()
    this.pending.set(chunk.subarray(pos + 5, end), 5)
    this.have = rest
  }
}
