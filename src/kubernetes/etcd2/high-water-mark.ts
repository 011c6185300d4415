/**
 * storage.HighWaterMark: the largest buffer length seen, raised atomically-enough (one thread here)
 * so that each new mark is reported once. The etcd2 watcher keeps one per buffer per watcher (the
 * log line, as the apiserver's V(1) message) and feeds the process-wide marks, exported as effect
 * Metric gauges.
 */
import { Effect, Metric } from "effect"

/** storage.HighWaterMark: the largest buffer length seen, each new high reported once. */
export class HighWaterMark {
  private mark = 0
  /** true when `current` is a new high (the caller reports it) */
  update(current: number): boolean {
    if (current <= this.mark) return false
    this.mark = current
    return true
  }
  get value(): number {
    return this.mark
  }
}

/** the incoming (etcd responses) and outgoing (watch events) marks of one watcher */
export interface WatcherMarks {
  readonly incoming: HighWaterMark
  readonly outgoing: HighWaterMark
}

export const makeWatcherMarks = (): WatcherMarks => ({ incoming: new HighWaterMark(), outgoing: new HighWaterMark() })

/** gauges: the highest mark any etcd2 watcher of this process reached */
export const incomingHighWaterMarkGauge = Metric.gauge("etcd2_watcher_incoming_high_water_mark", {
  description: "most etcd v2 responses ever queued in one etcd2 watcher's incoming buffer"
})
/** The highest outgoing (watch events) buffer length any etcd2 watcher of this process reached. */
export const outgoingHighWaterMarkGauge = Metric.gauge("etcd2_watcher_outgoing_high_water_mark", {
  description: "most watch events ever queued in one etcd2 watcher's outgoing buffer"
})

const processMarks: WatcherMarks = makeWatcherMarks()

/** Incoming mark rose to `n` in one watcher: log it and raise the process gauge if it is a new high. */
export const reportIncoming = (n: number): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.logDebug(`watch: ${n} objects queued in incoming channel.`),
    processMarks.incoming.update(n) ? Metric.set(incomingHighWaterMarkGauge, n) : Effect.void
  )

export const reportOutgoing = (kind: string, n: number): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.logDebug(`watch (${kind}): ${n} objects queued in outgoing channel.`),
    processMarks.outgoing.update(n) ? Metric.set(outgoingHighWaterMarkGauge, n) : Effect.void
  )
