/**
 * A raw HTTP/2 peer for the hostile-peer tests: writes whatever frames a test builds (valid or
 * not, in any order, as fast as it likes, or never reads), and records what the server sends back
 * — GOAWAY (last stream id, error code, debug data), RST_STREAM codes per stream, SETTINGS, PING
 * ACKs, response header blocks and DATA bytes — until the connection closes.
 */
import * as net from "node:net"
import * as tls from "node:tls"
import {
  Flag,
  FRAME_HEADER,
  FrameReader,
  FrameType,
  grpcRequestHeaderBlock,
  HpackDecoder,
  PREFACE,
  writeFrameHeader
} from "./h2-codec.js"

export { errorName, Flag, FrameType, PREFACE, Setting } from "./h2-codec.js"

/** RFC 9113 §7 error codes. */
export const H2Error = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  SETTINGS_TIMEOUT: 4,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11
} as const

export interface GoAway {
  readonly lastStreamId: number
  readonly code: number
  readonly debug: string
}

/** One frame: header and payload. */
export const frame = (
  type: number,
  flags: number,
  streamId: number,
  payload: Uint8Array = new Uint8Array(0)
): Buffer => {
  const out = Buffer.alloc(FRAME_HEADER + payload.length)
  writeFrameHeader(out, 0, payload.length, type, flags, streamId)
  out.set(payload, FRAME_HEADER)
  return out
}

export const settingsFrame = (pairs: ReadonlyArray<readonly [number, number]>): Buffer => {
  const p = Buffer.alloc(pairs.length * 6)
  pairs.forEach(([id, value], i) => {
    p.writeUInt16BE(id, i * 6)
    p.writeUInt32BE(value >>> 0, i * 6 + 2)
  })
  return frame(FrameType.SETTINGS, 0, 0, p)
}

export const windowUpdateFrame = (streamId: number, increment: number): Buffer => {
  const p = Buffer.alloc(4)
  p.writeUInt32BE(increment >>> 0, 0)
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, p)
}

export const rstStreamFrame = (streamId: number, code: number): Buffer => {
  const p = Buffer.alloc(4)
  p.writeUInt32BE(code, 0)
  return frame(FrameType.RST_STREAM, 0, streamId, p)
}

export const pingFrame = (n: number, ack = false): Buffer => {
  const p = Buffer.alloc(8)
  p.writeUInt32BE(n >>> 0, 4)
  return frame(FrameType.PING, ack ? Flag.ACK : 0, 0, p)
}

/** A gRPC request's HEADERS (END_HEADERS) for `path`. */
export const grpcHeaders = (streamId: number, path: string, endStream = false): Buffer =>
  frame(
    FrameType.HEADERS,
    Flag.END_HEADERS | (endStream ? Flag.END_STREAM : 0),
    streamId,
    grpcRequestHeaderBlock(path, "127.0.0.1")
  )

/** A gRPC message (5-byte prefix and body) in one DATA frame. */
export const grpcData = (streamId: number, message: Uint8Array, endStream = true): Buffer => {
  const p = Buffer.alloc(5 + message.length)
  p.writeUInt32BE(message.length, 1)
  p.set(message, 5)
  return frame(FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId, p)
}

export interface AttackerOptions {
  readonly port: number
  /** TLS with ALPN h2 (certificate checks off: the tests' own CA is not the point here) */
  readonly tls?: boolean
  /** send the client preface and an empty SETTINGS first (default true) */
  readonly preface?: boolean
  /** ACK the server's SETTINGS (default true) */
  readonly ackSettings?: boolean
}

export class Attacker {
  readonly socket: net.Socket
  readonly ready: Promise<void>
  readonly closed: Promise<void>
  /** every GOAWAY the server sent, in order (a graceful one may follow the one with the error) */
  readonly goaways: Array<GoAway> = []
  /** the first GOAWAY (the one that says why) */
  get goaway(): GoAway | undefined {
    return this.goaways[0]
  }
  readonly resets = new Map<number, number>()
  /** per stream: the response header blocks, decoded (names and values alternating) */
  readonly headers = new Map<number, Array<Array<string>>>()
  readonly dataBytes = new Map<number, number>()
  readonly serverSettings: Array<[number, number]> = []
  pingAcks = 0
  serverSettingsSeen = false
  settingsAcks = 0
  bytesRead = 0
  isClosed = false
  /** the server sent something we could not parse or decode */
  readError: Error | undefined
  private readonly reader: FrameReader
  private readonly decoder = new HpackDecoder()
  private waiters: Array<() => void> = []

  constructor(readonly options: AttackerOptions) {
    const socket = options.tls
      ? tls.connect({ host: "127.0.0.1", port: options.port, ALPNProtocols: ["h2"], rejectUnauthorized: false })
      : net.connect(options.port, "127.0.0.1")
    this.socket = socket
    socket.setNoDelay(true)
    this.ready = new Promise((resolve, reject) => {
      socket.once(options.tls ? "secureConnect" : "connect", () => resolve())
      socket.once("error", reject)
    })
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()))
    socket.on("error", () => {})
    socket.once("close", () => {
      this.isClosed = true
      this.notify()
    })
    this.reader = new FrameReader({
      dataStart: () => {},
      data: (_buf, start, end) => void (this.lastDataBytes += end - start),
      dataEnd: (streamId) => {
        this.dataBytes.set(streamId, (this.dataBytes.get(streamId) ?? 0) + this.lastDataBytes)
        this.lastDataBytes = 0
      },
      frame: (type, flags, streamId, buf, start, end) => this.onFrame(type, flags, streamId, buf, start, end)
    })
    socket.on("data", (chunk: Buffer) => {
      this.bytesRead += chunk.length
      try {
        this.reader.read(chunk, chunk.length)
      } catch (e) {
        this.readError = e as Error
        this.reader.stop()
      }
      this.notify()
    })
    if (options.preface !== false) {
      socket.write(PREFACE)
      socket.write(settingsFrame([]))
    }
  }

  private lastDataBytes = 0
  private continuing: { streamId: number; parts: Array<Buffer> } | undefined

  private onFrame(type: number, flags: number, streamId: number, buf: Uint8Array, start: number, end: number): void {
    const p = Buffer.from(buf.subarray(start, end))
    switch (type) {
      case FrameType.GOAWAY:
        this.goaways.push({
          lastStreamId: p.readUInt32BE(0) & 0x7fffffff,
          code: p.readUInt32BE(4),
          debug: p.subarray(8).toString("latin1")
        })
        break
      case FrameType.RST_STREAM:
        this.resets.set(streamId, p.readUInt32BE(0))
        break
      case FrameType.SETTINGS:
        if (flags & Flag.ACK) this.settingsAcks++
        else {
          this.serverSettingsSeen = true
          for (let i = 0; i + 6 <= p.length; i += 6)
            this.serverSettings.push([p.readUInt16BE(i), p.readUInt32BE(i + 2)])
          if (this.options.ackSettings !== false && !this.socket.destroyed)
            this.socket.write(frame(FrameType.SETTINGS, Flag.ACK, 0))
        }
        break
      case FrameType.PING:
        if (flags & Flag.ACK) this.pingAcks++
        else if (!this.socket.destroyed) this.socket.write(frame(FrameType.PING, Flag.ACK, 0, p))
        break
      case FrameType.HEADERS:
      case FrameType.CONTINUATION: {
        let block = p
        if (type === FrameType.HEADERS) {
          let from = 0
          let to = p.length
          if (flags & Flag.PADDED) to -= p[from++]!
          if (flags & Flag.PRIORITY) from += 5
          block = p.subarray(from, to)
          this.continuing = { streamId, parts: [block] }
        } else this.continuing?.parts.push(block)
        if (flags & Flag.END_HEADERS && this.continuing !== undefined) {
          const whole = Buffer.concat(this.continuing.parts)
          const list = this.decoder.decode(whole, 0, whole.length)
          const blocks = this.headers.get(streamId) ?? []
          blocks.push(list)
          this.headers.set(streamId, blocks)
          this.continuing = undefined
        }
        break
      }
    }
  }

  private notify(): void {
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }

  /**
   * Waits for the SETTINGS exchange to finish both ways (the server's SETTINGS seen and ACKed by
   * us, ours ACKed by it), so no ACK of ours lands inside a header block a test writes later.
   */
  handshake(ms = 10_000): Promise<void> {
    return this.until(() => this.serverSettingsSeen && this.settingsAcks > 0, ms, "the SETTINGS exchange")
  }

  /** Resolves when `f` holds (checked on every read and at close), or rejects after `ms`. */
  until(f: () => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
      const check = () => {
        if (f()) {
          clearTimeout(timer)
          resolve()
        } else if (this.isClosed) {
          clearTimeout(timer)
          f() ? resolve() : reject(new Error(`connection closed before ${what}`))
        } else this.waiters.push(check)
      }
      check()
    })
  }

  /** Resolves when the server has closed the connection (or rejects after `ms`: "hanging"). */
  closedWithin(ms: number): Promise<void> {
    return this.until(() => this.isClosed, ms, "the server to close the connection")
  }

  /** Writes; false when the socket is gone (the server closed it: an attacker keeps going blind). */
  write(bytes: Uint8Array): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return false
    this.socket.write(bytes)
    return true
  }

  /** Waits until the socket's write buffer is below `bytes` (or the socket is gone). */
  async drained(bytes = 1 << 20): Promise<void> {
    while (!this.socket.destroyed && this.socket.writableLength > bytes) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.socket.off("drain", done)
          this.socket.off("close", done)
          resolve()
        }
        this.socket.once("drain", done)
        this.socket.once("close", done)
      })
    }
  }

  /** grpc-status of a stream's trailers (or of trailers-only headers), when it ended. */
  grpcStatus(streamId: number): string | undefined {
    const blocks = this.headers.get(streamId) ?? []
    for (const list of blocks.slice().reverse()) {
      for (let i = 0; i < list.length; i += 2) if (list[i] === "grpc-status") return list[i + 1]
    }
    return undefined
  }

  destroy(): void {
    this.socket.destroy()
  }
}

export const connectAttacker = async (options: AttackerOptions): Promise<Attacker> => {
  const a = new Attacker(options)
  await a.ready
  return a
}
