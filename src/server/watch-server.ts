/**
 * The Watch service: etcd's serverWatchStream (v3rpc/watch.go), one per gRPC stream.
 *
 * One fiber per stream — the call's own (client cancel, deadline or server shutdown interrupts it,
 * and closing its scope closes the mvcc WatchStream, cancelling its watchers). etcd's four
 * goroutines (recvLoop, sendLoop, the channel and ctrlStream between them, the progress ticker)
 * become parts of a `ServerWatchStream` (server-watch-stream.ts: the state they share):
 * - recv (watch-recv.ts, the requests in watch-requests.ts): a 'readable' callback that reads the
 *   requests buffered and handles them in order. Control responses are queued in the stream's
 *   frames and written once per turn of the event loop (etcd's ctrlStream, without a queue of its
 *   own); when the stream's buffer is full, recv stops reading until 'drain'.
 * - send (`sendLoop` below, its rules in watch-send.ts): the call's fiber takes the WatchStream's
 *   channel with `takeAll` (the pump, folded in), turns a batch into wire responses in one
 *   synchronous pass, and writes it with one wait for 'drain' per batch before it takes the next.
 *   So the channel (chanBufLen 128) stays the only buffer: a slow client fills it and its watchers
 *   become victims, as in etcd.
 * - ticker (only once a watcher asked for progress_notify): a timer every interval, with a jitter
 *   of up to a tenth of it drawn once per stream, that asks for the quiet watchers' progress.
 *
 * Supervision: a defect in recv, the channel take ("pump"), send or the ticker ends the stream
 * (Internal, one error log line) and cancels its watchers; see ServerWatchStream's `end`.
 */
import type * as grpc from "@grpc/grpc-js"
import { Cause, Deferred, Duration, Effect, FiberSet, type Scope } from "effect"
import { type EtcdError, Errors } from "../errors.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import type { WatchRequest, WatchResponseInit } from "../proto/messages.js"
import type { WatchServer } from "../proto/services.js"
import type { WatchableStoreShape } from "../watch/watchable-store.js"
import type { WatchStream } from "../watch/watch-stream.js"
import type { CallRunner } from "./grpc-bridge.js"
import type { AuthGuard } from "./auth-guard.js"
import { frameSink } from "./grpc-raw-writer.js"
import type { MakeHeader } from "./header.js"
import { defect, ServerWatchStream } from "./server-watch-stream.js"
import { GRPC_OVERHEAD_BYTES } from "./watch-fragments.js"
import { recv } from "./watch-recv.js"
import { StreamState } from "./watch-send.js"
import { TRACE_PUT_EVENT, traceStamp } from "../debug/put-event-trace.js"
import { DEFAULT_PROGRESS_NOTIFY_INTERVAL, MIN_PROGRESS_NOTIFY_INTERVAL } from "./config.js"

export { DEFAULT_PROGRESS_NOTIFY_INTERVAL, MIN_PROGRESS_NOTIFY_INTERVAL }
/** @internal exported for tests (they drive the send rules directly) */
export { StreamState }

/** The Watch service's limits: the request size fragments are cut at, and the progress notification period. */
export interface WatchServerConfig {
  /** --max-request-bytes; fragments are cut at this plus 512 KiB */
  readonly maxRequestBytes: number
  /** --experimental-watch-progress-notify-interval (at least 100 ms) */
  readonly progressNotifyInterval: Duration.DurationInput
}

export interface WatchServerDeps {
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly header: MakeHeader
  readonly config: WatchServerConfig
  /** auth: a create needs READ on its range (etcd's isWatchPermitted); absent: no auth */
  readonly guard?: AuthGuard | undefined
}

/** Clamps the configured interval to etcd's minimum. */
export const progressInterval = (d: Duration.DurationInput): Duration.Duration =>
  Duration.max(Duration.decode(d), MIN_PROGRESS_NOTIFY_INTERVAL)

export const makeWatchService = (runner: CallRunner, deps: WatchServerDeps): WatchServer => ({
  Watch: runner.bidi("Watch", (call) => serverWatchStream(call, deps))
})

/** One Watch stream; ends when the call's fiber is interrupted, or fails when it cannot go on. */
export const serverWatchStream = (
  call: grpc.ServerDuplexStream<WatchRequest, WatchResponseInit>,
  deps: WatchServerDeps
): Effect.Effect<void, EtcdError, Scope.Scope> =>
  Effect.gen(function* () {
    const ws: WatchStream = yield* deps.watchable.newWatchStream
    const state = new StreamState(ws, deps.store, deps.header, deps.config.maxRequestBytes + GRPC_OVERHEAD_BYTES)
    // what recv starts (a batch of requests that went async, a wait for 'drain') runs in the
    // stream's own FiberSet: interrupted with the stream's scope, never left behind it
    const runFork = yield* FiberSet.runtime(yield* FiberSet.make<unknown, never>())<never>()
    const sws = new ServerWatchStream(
      call,
      ws,
      state,
      deps.header,
      deps.guard,
      frameSink(call),
      yield* Deferred.make<never, EtcdError>(),
      runFork,
      Duration.toMillis(progressInterval(deps.config.progressNotifyInterval)),
      recv
    )
    const onRecv = sws.resume
    // a broken read ends the stream as canceled
    const onError = () => sws.end(Cause.fail(Errors.watchCanceled()))
    call.on("readable", onRecv)
    call.on("end", onRecv)
    call.on("close", onRecv)
    call.on("error", onError)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        call.removeListener("readable", onRecv)
        call.removeListener("end", onRecv)
        call.removeListener("close", onRecv)
        call.removeListener("error", onError)
        sws.release()
      })
    )
    onRecv()
    return yield* sendLoop(sws)
  })

/**
 * etcd's sendLoop on the call's own fiber: takes the watch channel and writes each batch, the
 * whole batch in a few large writes; waits for 'drain' once when the stream's buffer is full.
 */
const sendLoop = (s: ServerWatchStream): Effect.Effect<never, EtcdError> =>
  Effect.gen(function* () {
    const { ws, state, out, sink } = s
    const drain = Effect.raceFirst(sink.drain, Deferred.await(s.ended))
    while (true) {
      const [batch, done] = yield* Effect.catchAllDefect(ws.takeAll, (e) => Effect.failCause(defect("pump", e)))
      if (s.endCause !== undefined) return yield* Effect.failCause(s.endCause)
      // the watch stream was closed under us: the server is stopping
      if (done) return yield* Effect.fail(Errors.stopped())
      if (TRACE_PUT_EVENT) for (const r of batch) if (r.events.length > 0) traceStamp("taken", r.revision)
      try {
        state.onEvents(batch, out)
      } catch (e) {
        return yield* Effect.failCause(defect("send", e))
      }
      const full = out.count > 0 && sink.write(out)
      if (TRACE_PUT_EVENT) for (const r of batch) if (r.events.length > 0) traceStamp("written", r.revision)
      if (full) yield* drain
    }
  })
