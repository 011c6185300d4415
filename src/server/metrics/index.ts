/**
 * Metrics for a member: the gRPC call counters the server always keeps (cheap, see
 * grpc-metrics.ts), and the HTTP endpoints (client port and --listen-metrics-urls), whose modules
 * (collectors, HTTP stack) load when a server starts, so programs without one (the client
 * commands among them) do not pay for them at start-up.
 */
import { Effect, type Scope } from "effect"
import type { HttpEndpoints, MetricsSources } from "./sources.js"

export { GrpcServerMetrics } from "./grpc-metrics.js"

export type { HttpEndpoints, MetricsSources } from "./sources.js"

/**
 * The client port's handler of /metrics, /health, /livez, /readyz and /version, and the
 * --listen-metrics-urls listeners of the same endpoints (without /version), in the current scope.
 */
export const startHttpEndpoints = (sources: MetricsSources): Effect.Effect<HttpEndpoints, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.promise(() => import("./listener.js")),
    (listener) => listener.start(sources)
  )
