/**
 * A member's HTTP endpoints: the collectors of every family /metrics serves, the health counters,
 * the client port's request handler and the --listen-metrics-urls listeners. Loaded when the
 * server starts (index.ts), with the HTTP stack it needs.
 */
import { Effect, type Scope } from "effect"
import type * as Http from "node:http"
import type { ListenAddress } from "../config.js"
import type { ServeError } from "../serve-error.js"
import { HealthCounters } from "./health.js"
import { makeClientHandler, serveMetrics } from "./http.js"
import type { MetricsSources } from "./index.js"
import { mvccCollector } from "./mvcc-metrics.js"
import { makeNodeCollector } from "./node-metrics.js"
import { processCollector } from "./process-metrics.js"
import { serverCollector } from "./server-metrics.js"

export interface HttpEndpoints {
  /** /metrics, /health, /livez, /readyz and /version for the client port's HTTP/1 side */
  readonly handler: (req: Http.IncomingMessage, res: Http.ServerResponse) => void
  /**
   * Serves the endpoints (without /version) on the --listen-metrics-urls addresses in the current
   * scope; the bound URLs, in order. The server calls it once the client URLs are bound: a
   * /readyz that answered before clients can connect would lie.
   */
  readonly listen: (addrs: ReadonlyArray<ListenAddress>) => Effect.Effect<ReadonlyArray<string>, ServeError, Scope.Scope>
}

export const start = (sources: MetricsSources): Effect.Effect<HttpEndpoints, never, Scope.Scope> =>
  Effect.gen(function*() {
    const health = new HealthCounters()
    const collectors = [
      serverCollector({ version: sources.version, memberId: sources.memberId, health }),
      mvccCollector(sources),
      sources.grpc.collect,
      processCollector,
      yield* makeNodeCollector
    ]
    const endpoints = { collectors, store: sources.store, health }
    const handler = yield* makeClientHandler(endpoints, sources.version)
    return { handler, listen: (addrs) => serveMetrics(addrs, endpoints) }
  })
