/**
 * Metrics for a member: the gRPC call counters the server always keeps (cheap, see
 * grpc-metrics.ts), and the HTTP endpoints (client port and --listen-metrics-urls), whose modules
 * (collectors, HTTP stack) load when a server starts, so programs without one (the client
 * commands among them) do not pay for them at start-up.
 */
import { Effect, type Scope } from "effect"
import type { BackendShape } from "../../backend/backend.js"
import type { MvccStoreShape } from "../../mvcc/kv.js"
import type { WatchableStoreShape } from "../../watch/watchable-store.js"
import type { GrpcServerMetrics } from "./grpc-metrics.js"
import type { HttpEndpoints } from "./listener.js"

export { GrpcServerMetrics } from "./grpc-metrics.js"
export type { HttpEndpoints } from "./listener.js"

export interface MetricsSources {
  readonly grpc: GrpcServerMetrics
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly backend: BackendShape
  /** the version Maintenance.Status reports */
  readonly version: string
  readonly memberId: bigint
}

/**
 * The client port's handler of /metrics, /health, /livez, /readyz and /version, and the
 * --listen-metrics-urls listeners of the same endpoints (without /version), in the current scope.
 */
export const startHttpEndpoints = (sources: MetricsSources): Effect.Effect<HttpEndpoints, never, Scope.Scope> =>
  Effect.flatMap(Effect.promise(() => import("./listener.js")), (listener) => listener.start(sources))
