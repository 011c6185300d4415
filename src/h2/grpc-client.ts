/**
 * gRPC over the bench's own HTTP/2 connection (client-connection.ts): the transport of the load
 * generator. A unary call hands back the answer's bytes; a bidi stream hands each message to a
 * callback as (buffer, start, end) straight from the connection's read buffer (see grpc-deframer.ts).
 * Everything per message is plain synchronous JS in those callbacks; Effect owns the lifetimes
 * (connections.ts).
 *
 * Status: grpc-status in the trailers (or in the headers of a trailers-only answer); anything other
 * than 0 is an error with grpc-message percent-decoded, as etcd wrote it ("etcdserver: ...").
 */
import { GrpcFrameParser, type MessageHandler } from "./grpc-deframer.js"
import { H2Connection, type H2Stream } from "./client-connection.js"
import { ErrorCode } from "./frames.js"
import type { HeaderList } from "./hpack.js"

export const UNAVAILABLE = 14
const UNKNOWN = 2

/** `code` 0 is OK; otherwise `message` says why (grpc-message, or what broke the transport). */
export type UnaryCallback = (code: number, message: string, body: Uint8Array | undefined) => void

export interface BidiStream {
  /** Queues a frame (one or more whole gRPC messages) behind HTTP/2 flow control. */
  write(frame: Uint8Array): void
  /** Half-closes: no more requests. */
  end(): void
  /** Resets the stream (RST_STREAM CANCEL); no onClose follows. */
  close(): void
}

export interface BidiHandlers {
  readonly onMessage: MessageHandler
  /** Once, when the server ended the call or it broke: its grpc status, or what ended it. */
  readonly onClose: (code: number, message: string) => void
}

/** Raised by `unary` (the promise form) for a non-zero status. */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

const decodeMessage = (raw: string): string => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/** What a call learned from its header blocks. */
class CallStatus {
  code = -1
  message = ""

  read(headers: HeaderList): void {
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!
      const value = headers[i + 1]!
      if (name === "grpc-status") this.code = Number(value)
      else if (name === "grpc-message") this.message = decodeMessage(value)
      else if (name === ":status" && value !== "200" && this.code === -1) {
        this.code = UNKNOWN
        this.message = `HTTP status ${value}`
      }
    }
  }

  /** the status when the server ended the call */
  final(path: string): [number, string] {
    return this.code === -1 ? [UNKNOWN, `${path}: call ended without a grpc-status`] : [this.code, this.message]
  }
}

export class GrpcConnection {
  private constructor(
    readonly endpoint: string,
    private readonly h2: H2Connection
  ) {}

  /**
   * Connects to "host:port" (h2c, prior knowledge). `onReady` runs once: without an argument when
   * the server's first SETTINGS arrived (so it speaks HTTP/2), with a reason when it failed first.
   * The caller bounds the wait.
   */
  static open(endpoint: string, onReady: (error?: string) => void): GrpcConnection {
    const url = new URL(`http://${endpoint}`)
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    const port = Number(url.port === "" ? 80 : url.port)
    return new GrpcConnection(endpoint, new H2Connection(host, port, endpoint, onReady))
  }

  /** Registers a listener for the connection breaking (called at once if it already has). */
  onFailure(listener: (reason: string) => void): () => void {
    return this.h2.onFailure(listener)
  }

  /** A unary call with `frame` (a whole gRPC message, prefix included) as its request. */
  call(path: string, frame: Uint8Array, callback: UnaryCallback): void {
    const broken = this.h2.broken
    if (broken !== undefined) {
      callback(UNAVAILABLE, broken, undefined)
      return
    }
    const status = new CallStatus()
    let first: Uint8Array | undefined
    let more: Array<Uint8Array> | undefined
    let done = false
    const stream = this.h2.open(path, {
      onHeaders: (headers) => status.read(headers),
      onData: (buf, start, end) => {
        // A copy: the connection's read buffer is reused by the next read.
        const piece = Buffer.from(buf.subarray(start, end))
        if (first === undefined) first = piece
        else (more ??= []).push(piece)
      },
      onEnd: () => {
        done = true
        const [code, message] = status.final(path)
        if (code !== 0) return callback(code, message, undefined)
        const body = more === undefined ? first : Buffer.concat([first!, ...more])
        if (body === undefined || body.length < 5)
          return callback(UNKNOWN, `${path}: answer without a message`, undefined)
        if (body[0] !== 0)
          return callback(UNKNOWN, `${path}: compressed answer (compression was not offered)`, undefined)
        const length = ((body[1]! << 24) | (body[2]! << 16) | (body[3]! << 8) | body[4]!) >>> 0
        if (body.length < 5 + length) return callback(UNKNOWN, `${path}: answer shorter than its length`, undefined)
        callback(0, "", body.subarray(5, 5 + length))
      },
      onReset: (reason) => {
        if (!done) callback(UNAVAILABLE, `${path}: ${reason}`, undefined)
      }
    })
    this.h2.send(stream, frame, true)
  }

  /** `call` as a promise of the answer's protobuf bytes; a non-zero status rejects with GrpcStatusError. */
  unary(path: string, frame: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) =>
      this.call(path, frame, (code, message, body) =>
        code === 0 && body !== undefined ? resolve(body) : reject(new GrpcStatusError(code, message))
      )
    )
  }

  /** A bidirectional stream; requests are written as whole frames with `write`. */
  bidi(path: string, handlers: BidiHandlers): BidiStream {
    let closed = false
    const close = (code: number, message: string) => {
      if (closed) return
      closed = true
      handlers.onClose(code, message)
    }
    const broken = this.h2.broken
    if (broken !== undefined) {
      queueMicrotask(() => close(UNAVAILABLE, broken))
      return { write: () => {}, end: () => {}, close: () => {} }
    }
    const status = new CallStatus()
    const parser = new GrpcFrameParser(handlers.onMessage)
    let stream: H2Stream | undefined = undefined
    stream = this.h2.open(path, {
      onHeaders: (headers) => status.read(headers),
      onData: (buf, start, end) => {
        if (closed) return
        try {
          parser.push(buf, start, end)
        } catch (e) {
          close(UNKNOWN, `${path}: ${e instanceof Error ? e.message : String(e)}`)
          if (stream !== undefined) this.h2.reset(stream, ErrorCode.CANCEL)
        }
      },
      onEnd: () => close(...status.final(path)),
      onReset: (reason) => close(UNAVAILABLE, `${path}: ${reason}`)
    })
    const h2 = this.h2
    const s = stream
    return {
      write: (frame) => h2.send(s, frame, false),
      end: () => h2.send(s, new Uint8Array(0), true),
      close: () => {
        closed = true
        h2.reset(s, ErrorCode.CANCEL)
      }
    }
  }

  /** Closes the connection at once (open streams are dropped); a close we asked for is no failure. */
  close(): void {
    this.h2.close()
  }
}
