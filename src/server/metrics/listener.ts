/**
 * A member's HTTP endpoints: the collectors of every family /metrics serves, the health counters,
 * the client port's request handler and the --listen-metrics-urls listeners. Loaded when the
 * server starts (index.ts), with the HTTP stack it needs.
 */
import { Effect, type Scope } from "effect"
import { HealthCounters } from "./health.js"
import { makeClientHandler, serveMetrics } from "./http.js"
import type { HttpEndpoints, MetricsSources } from "./sources.js"
import { mvccCollector } from "./mvcc-metrics.js"
import { makeNodeCollector } from "./node-metrics.js"
import { processCollector } from "./process-metrics.js"
import { serverCollector } from "./server-metrics.js"

export const start = (sources: MetricsSources): Effect.Effect<HttpEndpoints, never, Scope.Scope> =>
  Effect.gen(function* () {
    const health = new HealthCounters()
    const collectors = [
      serverCollector({ version: sources.version, memberId: sources.memberId, health }),
      mvccCollector(sources),
      sources.grpc.collect,
      processCollector,
      yield* makeNodeCollector
    ]
    const endpoints = { collectors, store: sources.store, health, alarms: sources.alarms }
    const handler = yield* makeClientHandler(endpoints, sources.version)
    return { handler, listen: (addrs, tls) => serveMetrics(addrs, endpoints, tls) }
  })
