/**
 * Metrics for a member: the gRPC call counters the server always keeps (cheap, see
 * grpc-metrics.ts), and the --listen-metrics-urls listener, whose modules (collectors, HTTP
 * stack) load only when a listener is asked for, so programs without one (the client commands
 * among them) do not pay for them at start-up.
 */
import { Effect, type Scope } from "effect"
import type { BackendShape } from "../../backend/backend.js"
import type { MvccStoreShape } from "../../mvcc/kv.js"
import type { WatchableStoreShape } from "../../watch/watchable-store.js"
import type { ListenAddress } from "../config.js"
import type { ServeError } from "../serve-error.js"
import type { GrpcServerMetrics } from "./grpc-metrics.js"

export { GrpcServerMetrics } from "./grpc-metrics.js"

export interface MetricsSources {
  readonly grpc: GrpcServerMetrics
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly backend: BackendShape
  /** the version Maintenance.Status reports */
  readonly version: string
  readonly memberId: bigint
}

/** Serves /metrics, /health, /livez and /readyz on `addrs` in the current scope; the bound URLs. */
export const startMetricsListener = (
  addrs: ReadonlyArray<ListenAddress>,
  sources: MetricsSources
): Effect.Effect<ReadonlyArray<string>, ServeError, Scope.Scope> =>
  Effect.flatMap(Effect.promise(() => import("./listener.js")), (listener) => listener.start(addrs, sources))
