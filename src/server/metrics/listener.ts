/**
 * A member's metrics listener: the collectors of every family it serves, over the HTTP server.
 * Loaded only when a listener is asked for (index.ts), with the HTTP stack it needs.
 */
import { Effect, type Scope } from "effect"
import type { ListenAddress } from "../config.js"
import type { ServeError } from "../serve-error.js"
import { HealthCounters } from "./health.js"
import { serveMetrics } from "./http.js"
import type { MetricsSources } from "./index.js"
import { mvccCollector } from "./mvcc-metrics.js"
import { makeNodeCollector } from "./node-metrics.js"
import { processCollector } from "./process-metrics.js"
import { serverCollector } from "./server-metrics.js"

export const start = (
  addrs: ReadonlyArray<ListenAddress>,
  sources: MetricsSources
): Effect.Effect<ReadonlyArray<string>, ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const health = new HealthCounters()
    const collectors = [
      serverCollector({ version: sources.version, memberId: sources.memberId, health }),
      mvccCollector(sources),
      sources.grpc.collect,
      processCollector,
      yield* makeNodeCollector
    ]
    return yield* serveMetrics(addrs, { collectors, store: sources.store, health })
  })
