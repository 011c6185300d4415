/**
 * Latencies in a log-linear histogram (HdrHistogram's idea): 1 µs buckets below 128 µs, then 128
 * buckets per power of two, so a percentile is within 0.8 % — in fixed memory whether a run records
 * a thousand samples or a hundred million (watch-latency records one per event per watcher).
 * Mean and max are exact.
 */
export interface LatencySummary {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  readonly mean: number
}

const SUB = 128
const SUB_BITS = 7
const MAX_EXPONENT = 62

export class LatencyHistogram {
  private readonly counts = new Float64Array(SUB + (MAX_EXPONENT - SUB_BITS + 1) * SUB)
  count = 0
  private sumUs = 0
  private maxUs = 0

  /** Records one latency in milliseconds. */
  record(ms: number): void {
    const us = ms > 0 ? ms * 1000 : 0
    this.count++
    this.sumUs += us
    if (us > this.maxUs) this.maxUs = us
    this.counts[indexOf(us)]!++
  }

  /** Percentiles in milliseconds (each a bucket's middle, never above the exact max); undefined when empty. */
  summary(): LatencySummary | undefined {
    if (this.count === 0) return undefined
    const ranks = [0.5, 0.9, 0.99].map((q) => Math.max(1, Math.ceil(q * this.count)))
    const found: Array<number> = []
    let seen = 0
    for (let i = 0; i < this.counts.length && found.length < ranks.length; i++) {
      seen += this.counts[i]!
      while (found.length < ranks.length && seen >= ranks[found.length]!) found.push(Math.min(middleOf(i), this.maxUs))
    }
    const ms = (us: number) => us / 1000
    return {
      p50: ms(found[0]!),
      p90: ms(found[1]!),
      p99: ms(found[2]!),
      max: ms(this.maxUs),
      mean: ms(this.sumUs / this.count)
    }
  }
}

const indexOf = (us: number): number => {
  if (us < SUB) return Math.floor(us)
  let exponent = Math.floor(Math.log2(us))
  // log2 may round across a power of two: settle it exactly.
  if (2 ** exponent > us) exponent--
  else if (2 ** (exponent + 1) <= us) exponent++
  if (exponent > MAX_EXPONENT) return SUB + (MAX_EXPONENT - SUB_BITS + 1) * SUB - 1
  const width = 2 ** (exponent - SUB_BITS)
  return SUB + (exponent - SUB_BITS) * SUB + (Math.floor(us / width) - SUB)
}

const middleOf = (index: number): number => {
  if (index < SUB) return index + 0.5
  const exponent = Math.floor((index - SUB) / SUB) + SUB_BITS
  const width = 2 ** (exponent - SUB_BITS)
  const sub = ((index - SUB) % SUB) + SUB
  return (sub + 0.5) * width
}
