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
  /** the bound --listen-metrics-urls, in order */
  readonly metricsUrls: ReadonlyArray<string>
}

export const start = (
  addrs: ReadonlyArray<ListenAddress>,
  sources: MetricsSources
): Effect.Effect<HttpEndpoints, ServeError, Scope.Scope> =>
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
    const metricsUrls = yield* serveMetrics(addrs, endpoints)
    return { handler, metricsUrls }
  })
