/**
 * EtcdClient: the Effect-native etcd v3 client. One gRPC channel, and on it the KV, Lease,
 * Maintenance and Watch APIs. Built by `EtcdClient.layer(config)` from two services with layers of
 * their own: ClientConnection (the channel) and WatchStreams (the registry of gRPC watch streams
 * and their substreams, on that channel). The layer's scope owns both, so closing it ends every
 * watch stream, then closes the channel.
 *
 *   const program = Effect.gen(function*() {
 *     const etcd = yield* EtcdClient
 *     yield* etcd.kv.put("a", "1")
 *     yield* etcd.watch("a", { prefix: true }).pipe(Stream.take(1), Stream.runCollect)
 *   }).pipe(Effect.provide(EtcdClient.layer({ endpoints: ["127.0.0.1:2379"] })))
 */
import { type Config, type ConfigError, Context, Effect, Layer, Schedule, type Scope, type Stream } from "effect"
import type { EtcdError } from "../errors.js"
import { defaultWatchRetrySchedule, type EtcdClientConfig } from "./config.js"
import { ClientConnection } from "./connection.js"
import { type KV, makeKV } from "./kv.js"
import { type Lease, makeLease } from "./lease.js"
import { type Maintenance, makeMaintenance } from "./maintenance.js"
import type { WatchError } from "./watch-errors.js"
import type { WatchOptions } from "./watch-options.js"
import type { WatchResponse } from "./watch-response.js"
import { type ProgressOptions, watcherOf } from "./watch.js"
import { WatchStreams } from "./watch-streams.js"

/** The client's parts: KV, Lease, Maintenance, and watches as Streams over one gRPC channel. */
export interface EtcdClientShape {
  readonly kv: KV
  readonly lease: Lease
  readonly maintenance: Maintenance
  /** see Watcher.watch */
  readonly watch: (key: string | Uint8Array, options?: WatchOptions) => Stream.Stream<WatchResponse, WatchError>
  /** see Watcher.requestProgress */
  readonly requestProgress: (options?: ProgressOptions) => Effect.Effect<void>
}

/** A client's config (`EtcdClientConfig`) and its watches' buffer and retry settings. */
export interface EtcdClientOptions extends EtcdClientConfig {
  /**
   * Per-watch buffer bound: while any watch's consumer lags this many responses behind, the shared
   * gRPC stream stops reading (HTTP/2 flow control then slows the server, which queues the watch
   * as a victim and catches it up later). Undefined (default): unbounded buffers, as clientv3.
   */
  readonly watchBufferLimit?: number | undefined
}

/** Lease keep-alive streams retry faster than a lease can expire: 10 ms, doubling, at most 500 ms. */
const leaseRetrySchedule = Schedule.exponential("10 millis").pipe(Schedule.union(Schedule.spaced("500 millis")))

/** The client's parts, each built once: the channel, then the watch registry on it. */
const clientServices = (options: EtcdClientOptions): Layer.Layer<ClientConnection | WatchStreams, EtcdError> =>
  WatchStreams.layer({
    retrySchedule: options.watchRetrySchedule ?? defaultWatchRetrySchedule,
    bufferLimit: options.watchBufferLimit
  }).pipe(Layer.provideMerge(ClientConnection.layer(options)))

/** The EtcdClient service from its parts (resolved here, once; nothing is looked up per call). */
const fromServices: Effect.Effect<EtcdClientShape, never, ClientConnection | WatchStreams> = Effect.gen(function* () {
  const connection = yield* ClientConnection
  const watcher = watcherOf(yield* WatchStreams)
  // the client keeps the time of whoever built it (Testing.layer: the live clock), not its callers'
  const clock = yield* Effect.clock
  return {
    kv: makeKV(connection),
    lease: makeLease(connection, { retrySchedule: leaseRetrySchedule, clock }),
    maintenance: makeMaintenance(connection),
    watch: watcher.watch,
    requestProgress: watcher.requestProgress
  }
})

const layerOf = (options: EtcdClientOptions): Layer.Layer<EtcdClient, EtcdError> =>
  Layer.effect(EtcdClient, fromServices).pipe(Layer.provide(clientServices(options)))

/** A client owned by the current scope (the layer, built in place). */
export const make = (options: EtcdClientOptions): Effect.Effect<EtcdClientShape, EtcdError, Scope.Scope> =>
  Effect.map(Layer.build(layerOf(options)), (context) => Context.get(context, EtcdClient))

/** The etcd client service: build it with `EtcdClient.layer(options)` and use its KV, Lease, Maintenance and watch. */
export class EtcdClient extends Context.Tag("etcd-effect/client/EtcdClient")<EtcdClient, EtcdClientShape>() {
  /** A client from a config value. Fails with EtcdError when no endpoint answers within dialTimeout. */
  static readonly layer = (options: EtcdClientOptions): Layer.Layer<EtcdClient, EtcdError> => layerOf(options)

  /** A client from an Effect Config (e.g. `clientConfigFromEnv`, etcdctl's ETCDCTL_* variables). */
  static readonly layerConfig = (
    config: Config.Config<EtcdClientOptions>
  ): Layer.Layer<EtcdClient, EtcdError | ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(config, layerOf))
}
