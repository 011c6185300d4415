/**
 * Writing many pre-framed gRPC messages to a server stream at once.
 *
 * grpc-js writes each message on its own: Writable bookkeeping, a copy into a new prefixed
 * buffer and one HTTP/2 stream write — a DATA frame — per message. A watch fan-out sends
 * thousands of ~100-byte responses per revision, so that per-message cost is most of the work on
 * both ends. grpc-go coalesces a stream's writes into few DATA frames; we do the same by writing a
 * whole FrameWriter batch to the call's HTTP/2 stream in a few large writes (one per 64 KiB chunk).
 *
 * That stream is grpc-js' internal (`call.call.stream`, pinned grpc-js 1.14). When it is not where
 * we expect it (another grpc-js), `frameSink` falls back to `call.write` per message, with the
 * Watch method's serializer passing encoded bytes through (see `passThroughSerializer`).
 * Headers are sent before the first raw write; grpc-js writes the trailers after our data, since
 * both go through the same stream in order.
 *
 * The lean transport's calls (src/server/transport/server-stream.ts) take such a batch directly:
 * `writeFramed` queues the chunks as they are and sends them in DATA frames as flow control allows.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import type * as http2 from "node:http2"
import type { FrameWriter } from "./watch-wire.js"

export interface FrameSink {
  /** Writes (and empties) the batch; true when the stream's buffer is full: await `drain` next. */
  write(frames: FrameWriter): boolean
  readonly drain: Effect.Effect<void>
  /** "raw" when batches go to the HTTP/2 stream in one write, "message" when per message */
  readonly mode: "raw" | "message"
}

interface GrpcJsInternals {
  readonly call?: { readonly stream?: http2.ServerHttp2Stream }
}

const awaitDrain = (emitter: NodeJS.EventEmitter): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const onDrain = () => resume(Effect.void)
    emitter.once("drain", onDrain)
    return Effect.sync(() => emitter.removeListener("drain", onDrain))
  })

const isHttp2Stream = (s: unknown): s is http2.ServerHttp2Stream =>
  typeof s === "object" &&
  s !== null &&
  typeof (s as http2.ServerHttp2Stream).write === "function" &&
  typeof (s as http2.ServerHttp2Stream).respond === "function"

/** A lean transport call: pre-framed messages in, "drain" when its queue fell below the mark. */
interface FramedCall extends NodeJS.EventEmitter {
  writeFramed(chunks: ReadonlyArray<Uint8Array>): boolean
  readonly writableNeedDrain: boolean
  readonly cancelled: boolean
}

const isFramedCall = (call: unknown): call is FramedCall =>
  typeof (call as Partial<FramedCall>).writeFramed === "function"

/** The sink for a call; `forceMessageMode` is for tests of the fallback. */
export const frameSink = <Req, Res>(call: grpc.ServerDuplexStream<Req, Res>, forceMessageMode = false): FrameSink => {
  if (!forceMessageMode && isFramedCall(call)) {
    return {
      mode: "raw",
      write: (frames) => {
        const chunks = frames.take()
        if (call.cancelled || chunks.length === 0) return false
        return !call.writeFramed(chunks)
      },
      drain: Effect.suspend(() => (call.writableNeedDrain ? awaitDrain(call) : Effect.void))
    }
  }
  const stream = (call as unknown as GrpcJsInternals).call?.stream
  if (!forceMessageMode && isHttp2Stream(stream)) {
    let headersSent = false
    return {
      mode: "raw",
      write: (frames) => {
        const chunks = frames.take()
        if (call.cancelled || stream.destroyed || chunks.length === 0) return false
        if (!headersSent) {
          // grpc-js sends headers once (it keeps a flag), before our first DATA frame
          call.sendMetadata(new grpc.Metadata())
          headersSent = true
        }
        let full = false
        for (let i = 0; i < chunks.length; i++) full = !stream.write(chunks[i]!)
        return full
      },
      drain: Effect.suspend(() => (stream.writableNeedDrain ? awaitDrain(stream) : Effect.void))
    }
  }
  return {
    mode: "message",
    write: (frames) => {
      const messages = frames.takeMessages()
      if (call.cancelled) return false
      for (let i = 0; i < messages.length; i++) call.write(messages[i] as unknown as Res)
      return call.writableNeedDrain
    },
    drain: Effect.suspend(() => (call.writableNeedDrain ? awaitDrain(call) : Effect.void))
  }
}

/** A method definition whose response serializer passes already-encoded bytes through. */
export const passThroughSerializer = <D extends grpc.MethodDefinition<unknown, unknown>>(def: D): D => {
  const inner = def.responseSerialize
  return {
    ...def,
    responseSerialize: (value: unknown) =>
      value instanceof Uint8Array
        ? Buffer.isBuffer(value)
          ? value
          : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        : inner(value)
  }
}
