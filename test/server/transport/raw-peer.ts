/**
 * A raw HTTP/2 peer for the lean transport's tests: writes frames byte by byte as a client would
 * (or would not), and keeps every frame the server sends, header blocks decoded.
 */
import * as net from "node:net"
import { FrameReader } from "../../../src/h2/frame-reader.js"
import { FrameType, PREFACE, writeFrameHeader } from "../../../src/h2/frames.js"
import { type HeaderList, HpackDecoder, pushLiteral } from "../../../src/h2/hpack.js"

export interface ReceivedFrame {
  readonly type: number
  readonly flags: number
  readonly streamId: number
  readonly payload: Buffer
  /** HEADERS: the decoded block */
  readonly headers?: HeaderList
}

export class RawPeer {
  readonly frames: Array<ReceivedFrame> = []
  closed = false
  private readonly decoder = new HpackDecoder()
  private dataParts: Array<Buffer> = []
  private readonly reader = new FrameReader({
    dataStart: () => {
      this.dataParts = []
    },
    data: (buf, start, end) => {
      this.dataParts.push(Buffer.from(buf.subarray(start, end)))
    },
    dataEnd: (streamId, flags) => {
      this.frames.push({ type: FrameType.DATA, flags, streamId, payload: Buffer.concat(this.dataParts) })
      this.wake()
    },
    frame: (type, flags, streamId, buf, start, end) => {
      const payload = Buffer.from(buf.subarray(start, end))
      const headers = type === FrameType.HEADERS ? this.decoder.decode(payload, 0, payload.length) : undefined
      this.frames.push({ type, flags, streamId, payload, ...(headers === undefined ? {} : { headers }) })
      // a well-behaved client acknowledges the server's SETTINGS
      if (type === FrameType.SETTINGS && (flags & 1) === 0 && this.ackSettings) {
        this.send(FrameType.SETTINGS, 1, 0, Buffer.alloc(0))
      }
      this.wake()
    }
  })
  private waiters: Array<() => void> = []
  ackSettings = true

  private constructor(readonly socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => this.reader.read(chunk, chunk.length))
    socket.on("close", () => {
      this.closed = true
      this.wake()
    })
    socket.on("error", () => {})
  }

  static connect(port: number, preface = true): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        const peer = new RawPeer(socket)
        if (preface) {
          socket.write(PREFACE)
          peer.send(FrameType.SETTINGS, 0, 0, Buffer.alloc(0))
        }
        resolve(peer)
      })
      socket.once("error", reject)
    })
  }

  send(type: number, flags: number, streamId: number, payload: Uint8Array): void {
    const head = Buffer.alloc(9)
    writeFrameHeader(head, 0, payload.length, type, flags, streamId)
    this.socket.write(Buffer.concat([head, payload]))
  }

  private wake(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  /** Waits until `f` finds what it looks for among the frames received (or the socket closes: undefined). */
  async until<A>(f: (frames: ReadonlyArray<ReceivedFrame>) => A | undefined): Promise<A | undefined> {
    for (;;) {
      const a = f(this.frames)
      if (a !== undefined) return a
      if (this.closed) return undefined
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  /** the trailers (END_STREAM HEADERS) of a stream, as a record */
  trailers(streamId: number): Promise<Record<string, string> | undefined> {
    return this.until((fs) => {
      const t = fs.find((x) => x.type === FrameType.HEADERS && x.streamId === streamId && (x.flags & 1) !== 0)
      return t === undefined ? undefined : record(t.headers!)
    })
  }

  goaway(): Promise<{ lastStreamId: number; code: number; debug: string } | undefined> {
    return this.until((fs) => {
      const g = fs.find((x) => x.type === FrameType.GOAWAY)
      return g === undefined
        ? undefined
        : {
            lastStreamId: g.payload.readUInt32BE(0),
            code: g.payload.readUInt32BE(4),
            debug: g.payload.subarray(8).toString()
          }
    })
  }

  close(): void {
    this.socket.destroy()
  }
}

export const record = (h: HeaderList): Record<string, string> => {
  const out: Record<string, string> = {}
  for (let i = 0; i < h.length; i += 2) out[h[i]!] = h[i + 1]!
  return out
}

/** A request header block (literal fields, no Huffman). */
export const requestHeaders = (path: string, extra: Record<string, string> = {}): Buffer => {
  const out: Array<number> = []
  const fields: Record<string, string> = {
    ":method": "POST",
    ":scheme": "http",
    ":path": path,
    ":authority": "localhost",
    "content-type": "application/grpc",
    te: "trailers",
    ...extra
  }
  for (const [k, v] of Object.entries(fields)) pushLiteral(out, 0, k, v)
  return Buffer.from(out)
}

/** One gRPC message: the 5-byte prefix and the body. */
export const grpcMessage = (body: Uint8Array): Buffer => {
  const b = Buffer.alloc(5 + body.length)
  b.writeUInt32BE(body.length, 1)
  b.set(body, 5)
  return b
}
