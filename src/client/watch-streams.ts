/**
 * WatchStreams: the client's registry of gRPC Watch streams, one per distinct metadata (clientv3's
 * `watcher.streams` map of `watchGRPCStream`s), as a service. Each stream holds its substreams
 * (`WatcherStream`, clientv3's `watcherStream`) and its resume queue (the watches waiting for their
 * created response, re-registered on every reconnect); see WatchGrpcStream.
 *
 * Lifetime: each stream's fiber runs in a FiberMap owned by the layer's scope. Closing that scope
 * (closing the EtcdClient) first refuses new watches, then interrupts every stream's fiber, which
 * ends each watch's consumer Stream normally.
 *
 * Cost: the service is resolved once, when EtcdClient's layer is built. Registering and
 * unregistering a watch are synchronous map and array operations; the per-response path is in
 * WatchGrpcStream and never goes through this service.
 */
import { Context, Effect, Exit, FiberMap, Layer, type Schedule, type Scope } from "effect"
import type { WatchBuffer } from "./watch-buffer.js"
import { ClientConnection, type ClientConnectionShape } from "./connection.js"
import { WatchGrpcStream } from "./watch-grpc-stream.js"
import type { WatchError } from "./watch-errors.js"
import { streamKey, type WatchSpec } from "./watch-options.js"
import type { WatchResponse } from "./watch-response.js"
import type { WatcherStream } from "./watcher-stream.js"

type Buffer = WatchBuffer<WatchResponse, WatchError>

/** How the watch streams reconnect (`retrySchedule`) and how far a watch's consumer may lag (`bufferLimit`). */
export interface WatchStreamsOptions {
  readonly retrySchedule: Schedule.Schedule<unknown>
  /** pause reading a gRPC stream while any of its watches buffers this many responses; undefined = unbounded */
  readonly bufferLimit: number | undefined
}

/** One watch's place on its gRPC stream, as handed to the consumer's Stream. */
export interface Substream {
  /** The consumer is done: stop delivering and cancel the watch on the server (synchronous). */
  readonly unregister: () => void
  /** After the consumer took from its buffer: resume reading the gRPC stream if it was paused. */
  readonly maybeResume: () => void
}

/** The registry of the client's gRPC Watch streams, one per distinct metadata, shared by its watches. */
export interface WatchStreamsShape {
  /**
   * Registers a watch on the stream for `metadata`, opening that stream (and starting its fiber)
   * if none is open. Once the registry is closing, `buffer` is ended at once and the result is
   * undefined.
   */
  readonly register: (
    spec: WatchSpec,
    metadata: Readonly<Record<string, string>>,
    buffer: Buffer
  ) => Effect.Effect<Substream | undefined>
  /** clientv3 RequestProgress on the stream for `metadata` (if one is open); synchronous. */
  readonly requestProgress: (metadata: Readonly<Record<string, string>>) => void
  /** open gRPC streams (one per distinct metadata with live watches) */
  readonly size: () => number
  /** the per-watch buffer bound the streams were made with */
  readonly bufferLimit: number | undefined
}

/** The registry on `connection`, owned by the current scope. */
export const makeWatchStreams = (
  connection: ClientConnectionShape,
  options: WatchStreamsOptions
): Effect.Effect<WatchStreamsShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fibers = yield* FiberMap.make<string>()
    const streams = new Map<string, WatchGrpcStream>()
    let closed = false
    // Runs before the FiberMap's own finalizer (reverse order): no new streams during shutdown.
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))

    const substream = (stream: WatchGrpcStream, ws: WatcherStream): Substream => ({
      unregister: () => stream.unregister(ws),
      maybeResume: () => stream.maybeResume()
    })

    const register: WatchStreamsShape["register"] = (spec, metadata, buffer) =>
      Effect.suspend(() => {
        if (closed) {
          buffer.end(Exit.void)
          return Effect.succeed(undefined)
        }
        const key = streamKey(metadata)
        const existing = streams.get(key)
        if (existing !== undefined && !existing.closed) {
          return Effect.succeed(substream(existing, existing.register(spec, buffer)))
        }
        const stream = new WatchGrpcStream({
          connection,
          metadata,
          retrySchedule: options.retrySchedule,
          bufferLimit: options.bufferLimit,
          onClosed: (s) => {
            if (streams.get(key) === s) streams.delete(key)
          }
        })
        streams.set(key, stream)
        // Register before the fiber starts, so its first session finds the watch.
        const ws = stream.register(spec, buffer)
        return FiberMap.run(fibers, key, stream.run).pipe(Effect.as(substream(stream, ws)))
      })

    return {
      register,
      requestProgress: (metadata) => streams.get(streamKey(metadata))?.requestProgress(),
      size: () => streams.size,
      bufferLimit: options.bufferLimit
    } satisfies WatchStreamsShape
  })

/** The watch streams service: the client's Watch streams, opened on demand and reconnected on failure. */
export class WatchStreams extends Context.Tag("etcd-effect/client/WatchStreams")<WatchStreams, WatchStreamsShape>() {
  /** The registry on the client's connection; the layer's scope owns every stream. */
  static readonly layer = (options: WatchStreamsOptions): Layer.Layer<WatchStreams, never, ClientConnection> =>
    Layer.scoped(
      WatchStreams,
      Effect.flatMap(ClientConnection, (connection) => makeWatchStreams(connection, options))
    )
}
