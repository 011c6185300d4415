/**
 * A Prometheus histogram with fixed buckets, per label set: `observe` is a few array increments,
 * `samples` renders the cumulative `_bucket{le}` counts, `_sum` and `_count` at scrape time.
 */
import { formatValue, type Labels, type Sample } from "./prometheus.js"

export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: Array<number>; sum: number; count: number }>()

  constructor(readonly buckets: ReadonlyArray<number>) {}

  observe(labels: Labels, key: string, value: number): void {
    let s = this.series.get(key)
    if (s === undefined) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }
      this.series.set(key, s)
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= this.buckets[i]!) {
        s.counts[i]!++
        break
      }
    }
    s.sum += value
    s.count++
  }

  samples(): Array<Sample> {
    const out: Array<Sample> = []
    for (const s of this.series.values()) {
      let cumulative = 0
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i]!
        out.push({ suffix: "_bucket", labels: { ...s.labels, le: formatValue(this.buckets[i]!) }, value: cumulative })
      }
      out.push({ suffix: "_bucket", labels: { ...s.labels, le: "+Inf" }, value: s.count })
      out.push({ suffix: "_sum", labels: s.labels, value: s.sum })
      out.push({ suffix: "_count", labels: s.labels, value: s.count })
    }
    return out
  }
}
