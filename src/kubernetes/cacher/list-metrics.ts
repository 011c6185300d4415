/**
 * The watch cache's LIST counters (cacher/metrics/metrics.go: `listCacheCount`,
 * `listCacheNumFetched`, `listCacheNumReturned` and `RecordListCacheMetrics`), tagged once per
 * Cacher with its resource prefix.
 */
import { Effect, Metric } from "effect"

const listTotal = Metric.counter("apiserver_cache_list_total", {
  description: "Number of LIST requests served from watch cache"
})
const listFetched = Metric.counter("apiserver_cache_list_fetched_objects_total", {
  description: "Number of objects read from watch cache in the course of serving a LIST request"
})
const listReturned = Metric.counter("apiserver_cache_list_returned_objects_total", {
  description: "Number of objects returned for a LIST request from watch cache"
})

/** One Cacher's LIST counters. */
export interface ListMetrics {
  readonly total: Metric.Metric.Counter<number>
  readonly fetched: Metric.Metric.Counter<number>
  readonly returned: Metric.Metric.Counter<number>
}

/** The counters tagged with the Cacher's resource prefix (and no index). */
export const listMetricsFor = (prefix: string): ListMetrics => {
  const listTags = <T extends Metric.Metric.Counter<number>>(m: T) =>
    m.pipe(Metric.tagged("resource_prefix", prefix), Metric.tagged("index", ""))
  return { total: listTags(listTotal), fetched: listTags(listFetched), returned: listTags(listReturned) }
}

/** RecordListCacheMetrics: one LIST served, the objects it read and those it returned. */
export const recordListCacheMetrics = (m: ListMetrics, fetched: number, returned: number): Effect.Effect<void> =>
  Effect.all(
    [Metric.increment(m.total), Metric.incrementBy(m.fetched, fetched), Metric.incrementBy(m.returned, returned)],
    {
      discard: true
    }
  )
