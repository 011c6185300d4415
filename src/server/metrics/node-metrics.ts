/**
 * The Node runtime's families as prom-client names them: heap and external memory, event-loop
 * delay, GC pauses, the version. Their two sources live as long as the metrics listener (the
 * collector is made in its scope):
 *
 * - perf_hooks' monitorEventLoopDelay: a histogram libuv fills from its own timer (no JS runs per
 *   sample); min/max/mean/p50/p90/p99 cover the time since the previous scrape (it is reset at
 *   each, as prom-client does). The histogram holds whole timer intervals, so the timer's own
 *   period is taken off: an idle loop reads 0, not 10 ms (prom-client reports the raw intervals).
 *   nodejs_eventloop_lag_seconds is one fresh measurement per scrape: how long a setImmediate
 *   takes to run.
 * - a PerformanceObserver of "gc" entries: one callback per batch of collections, into a histogram
 *   by kind (nodejs_gc_duration_seconds).
 */
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { Effect, type Scope } from "effect"
import { Histogram } from "./histogram.js"
import { type Collector, gauge, info, type MetricFamily } from "./prometheus.js"

/** monitorEventLoopDelay's timer period, in ms (prom-client's default). */
const RESOLUTION_MS = 10

/** prom-client's GC buckets, in seconds. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5]

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
}

/** How long a setImmediate callback waits for its turn now, in seconds. */
const immediateLag: Effect.Effect<number> = Effect.async<number>((resume) => {
  const start = process.hrtime.bigint()
  const handle = setImmediate(() => resume(Effect.succeed(Number(process.hrtime.bigint() - start) / 1e9)))
  return Effect.sync(() => clearImmediate(handle))
})

const versionLabels = (): Record<string, string> => {
  const [major = "", minor = "", patch = ""] = process.versions.node.split(".")
  return { version: process.version, major, minor, patch }
}

/** Starts the runtime's observers in the current scope; the collector reads (and resets) them. */
export const makeNodeCollector: Effect.Effect<Collector, never, Scope.Scope> = Effect.gen(function* () {
  const delay = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      h.enable()
      return h
    }),
    (h) => Effect.sync(() => h.disable())
  )
  const gc = new Histogram(GC_BUCKETS)
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          const detail = (entry as { readonly detail?: { readonly kind?: number } | null }).detail
          const kind = GC_KINDS[detail?.kind ?? -1] ?? "unknown"
          gc.observe({ kind }, kind, entry.duration / 1000)
        }
      })
      observer.observe({ entryTypes: ["gc"] })
      return observer
    }),
    (observer) => Effect.sync(() => observer.disconnect())
  )
  const version = versionLabels()

  return Effect.map(immediateLag, (lag): ReadonlyArray<MetricFamily> => {
    const mem = process.memoryUsage()
    // the histogram is in nanoseconds; with no sample yet its min/mean are placeholders
    const seen = delay.count > 0
    const s = (ns: number) => (seen ? Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000) : 0)
    const out: Array<MetricFamily> = [
      gauge("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.", mem.heapTotal),
      gauge("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.", mem.heapUsed),
      gauge("nodejs_external_memory_bytes", "Node.js external memory size in bytes.", mem.external),
      gauge("nodejs_eventloop_lag_seconds", "Lag of event loop in seconds.", lag),
      gauge("nodejs_eventloop_lag_min_seconds", "The minimum recorded event loop delay.", s(delay.min)),
      gauge("nodejs_eventloop_lag_max_seconds", "The maximum recorded event loop delay.", s(delay.max)),
      gauge("nodejs_eventloop_lag_mean_seconds", "The mean of the recorded event loop delays.", s(delay.mean)),
      gauge(
        "nodejs_eventloop_lag_stddev_seconds",
        "The standard deviation of the recorded event loop delays.",
        seen ? delay.stddev / 1e9 : 0
      ),
      ...[50, 90, 99].map((p) =>
        gauge(
          `nodejs_eventloop_lag_p${p}_seconds`,
          `The ${p}th percentile of the recorded event loop delays.`,
          s(delay.percentile(p))
        )
      ),
      {
        name: "nodejs_gc_duration_seconds",
        help: "Garbage collection duration by kind, one of major, minor, incremental or weakcb.",
        type: "histogram",
        samples: gc.samples()
      },
      info("nodejs_version_info", "Node.js version info.", version)
    ]
    delay.reset()
    return out
  })
})
