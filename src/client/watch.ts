/**
 * The Watch API (clientv3's `watcher`): each watch a substream of the gRPC stream for its
 * metadata, in the WatchStreams registry (a service owned by the client's layer).
 *
 * `watch(key, options)` is a Stream whose scope is the watch: the consumer stopping (end, take,
 * interrupt) cancels the watch on the server; closing the client ends every watch Stream.
 */
import { Effect, Stream } from "effect"
import { WatchBuffer } from "./watch-buffer.js"
import type { WatchError } from "./watch-errors.js"
import { watchMetadata, type WatchOptions, watchSpec } from "./watch-options.js"
import type { WatchResponse } from "./watch-response.js"
import { WatchStreams, type WatchStreamsShape } from "./watch-streams.js"

/** Options of `requestProgress`: require a leader, and the metadata that picks the Watch stream. */
export interface ProgressOptions {
  readonly requireLeader?: boolean | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
}

/** The watch half of the client: `watch` as a Stream and `requestProgress`. */
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

/** The Watch API over a WatchStreams registry (resolved once, by the caller). */
export const watcherOf = (streams: WatchStreamsShape): Watcher => {
  const watch = (key: string | Uint8Array, watchOptions: WatchOptions = {}): Stream.Stream<WatchResponse, WatchError> =>
    Stream.unwrapScoped(
      Effect.gen(function* () {
        const spec = watchSpec(key, watchOptions)
        const metadata = watchMetadata(watchOptions)
        const buffer = new WatchBuffer<WatchResponse, WatchError>()
        const substream = yield* Effect.acquireRelease(streams.register(spec, metadata, buffer), (s) =>
          Effect.sync(() => s?.unregister())
        )
        const responses = buffer.stream
        if (substream === undefined || streams.bufferLimit === undefined) return responses
        // Each chunk taken may bring the buffers under the limit again: resume reading.
        return Stream.mapChunks(responses, (chunk) => {
          substream.maybeResume()
          return chunk
        })
      })
    )

  const requestProgress = (progressOptions: ProgressOptions = {}): Effect.Effect<void> =>
    Effect.sync(() => streams.requestProgress(watchMetadata(progressOptions)))

  return { watch, requestProgress } satisfies Watcher
}

/** The Watch API of the WatchStreams service in context. */
export const makeWatcher: Effect.Effect<Watcher, never, WatchStreams> = Effect.map(WatchStreams, watcherOf)
