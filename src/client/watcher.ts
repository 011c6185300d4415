/**
 * The Watch API (clientv3's `watcher`): watches grouped into gRPC streams by their metadata, each
 * stream a fiber in a FiberMap owned by the client's scope.
 *
 * `watch(key, options)` is a Stream whose scope is the watch: the consumer stopping (end, take,
 * interrupt) cancels the watch on the server; closing the client ends every watch Stream.
 */
import { Effect, Exit, FiberMap, type Schedule, type Scope, Stream } from "effect"
import { WatchBuffer } from "./watch-buffer.js"
import type { Connection } from "./connection.js"
import { WatchGrpcStream } from "./watch-grpc-stream.js"
import type { WatchError } from "./watch-errors.js"
import { streamKey, watchMetadata, type WatchOptions, type WatchSpec, watchSpec } from "./watch-options.js"
import type { WatchResponse } from "./watch-response.js"

type Buffer = WatchBuffer<WatchResponse, WatchError>

export interface ProgressOptions {
  readonly requireLeader?: boolean | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
}

export interface Watcher {
  /**
   * Watches a key, range or prefix. Each element is one response: whole revisions of events in
   * order, or a progress notification. Across reconnects nothing is lost, repeated or reordered.
   * Fails with a WatchError when the watch cannot continue (compaction, cancel, permission, ...).
   */
  readonly watch: (key: string | Uint8Array, options?: WatchOptions) => Stream.Stream<WatchResponse, WatchError>
  /**
   * Asks the server for a progress notification on every watch of the stream with these options'
   * metadata. etcd answers only once all of them are caught up; otherwise it stays silent.
   */
  readonly requestProgress: (options?: ProgressOptions) => Effect.Effect<void>
}

export interface WatcherOptions {
  readonly retrySchedule: Schedule.Schedule<unknown>
  readonly bufferLimit: number | undefined
}

export const makeWatcher = (
  connection: Connection,
  options: WatcherOptions
): Effect.Effect<Watcher, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()
    const streams = new Map<string, WatchGrpcStream>()
    let closed = false
    // Runs before the FiberMap's own finalizer (reverse order): no new streams during shutdown.
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))

    /** Registers a watch on the stream for its metadata, starting that stream's fiber if new. */
    const register = (spec: WatchSpec, metadata: Readonly<Record<string, string>>, buffer: Buffer) =>
      Effect.suspend(() => {
        const key = streamKey(metadata)
        const existing = streams.get(key)
        if (existing !== undefined && !existing.closed) {
          return Effect.succeed({ stream: existing, ws: existing.register(spec, buffer) })
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
        return FiberMap.run(fibers, key, stream.run).pipe(Effect.as({ stream, ws }))
      })

    const watch = (key: string | Uint8Array, watchOptions: WatchOptions = {}): Stream.Stream<WatchResponse, WatchError> =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const spec = watchSpec(key, watchOptions)
          const metadata = watchMetadata(watchOptions)
          const buffer = new WatchBuffer<WatchResponse, WatchError>()
          const registration = yield* Effect.acquireRelease(
            Effect.gen(function*() {
              if (closed) {
                buffer.end(Exit.void)
                return undefined
              }
              return yield* register(spec, metadata, buffer)
            }),
            (r) => Effect.sync(() => r?.stream.unregister(r.ws))
          )
          const responses = buffer.stream
          if (registration === undefined || options.bufferLimit === undefined) return responses
          const stream = registration.stream
          // Each chunk taken may bring the buffers under the limit again: resume reading.
          return Stream.mapChunks(responses, (chunk) => {
            stream.maybeResume()
            return chunk
          })
        })
      )

    const requestProgress = (progressOptions: ProgressOptions = {}): Effect.Effect<void> =>
      Effect.sync(() => {
        streams.get(streamKey(watchMetadata(progressOptions)))?.requestProgress()
      })

    return { watch, requestProgress } satisfies Watcher
  })
