/**
 * A debug trace of the put → event path, to find where a slow event waited. Off unless the
 * server runs with ETCD_EFFECT_TRACE_PUT_EVENT=1: then every stage stamps its revision with
 * CLOCK_MONOTONIC, and every 5 s (and at exit) stderr gets each segment's p50/p99/max and the
 * slowest revisions' breakdown. When off, each call site costs one test of a constant.
 *
 * Stages, in path order (the files that stamp them):
 * - sent: the client's send time, when the put's value carries one (see `traceStaged`)
 * - staged: the write's revision is staged in the mvcc store (mvcc/kvstore-write.ts), in the tick the
 *   Put handler runs — "put received" as far as the server's code is concerned
 * - durable: the WAL group holding it was fdatasync'ed (backend/group-commit.ts; the group's end time)
 * - committed: the commit listener runs for it (mvcc/kvstore-commit.ts)
 * - offered: its first response is offered to a watch channel (watch/watch-stream.ts)
 * - taken: the last Watch stream's send loop to take it took it from its channel
 *   (server/watch-server.ts)
 * - written: the last send loop to write the frames holding it wrote them to its HTTP/2 stream
 *   (server/watch-server.ts)
 * The event loop's delay (perf_hooks.monitorEventLoopDelay) is reported alongside.
 */
import { monitorEventLoopDelay } from "node:perf_hooks"

export const TRACE_PUT_EVENT: boolean = process.env["ETCD_EFFECT_TRACE_PUT_EVENT"] === "1"

const STAGES = ["sent", "staged", "durable", "committed", "offered", "taken", "written"] as const
export type TraceStage = (typeof STAGES)[number]

const stamps = new Map<number, Array<number>>()
let lastDurable = 0
const loopDelay = TRACE_PUT_EVENT ? monitorEventLoopDelay({ resolution: 10 }) : undefined

/** CLOCK_MONOTONIC in ms: the clock `etcd-effect bench watch-latency` stamps its puts with */
const clock = (): number => Number(process.hrtime.bigint()) / 1e6

/**
 * A staged revision; when its first value starts with a send time (`etcd-effect bench
 * watch-latency` writes process.hrtime.bigint(), 8 bytes big-endian: the same clock on one
 * machine), that is its "sent" stamp.
 */
export const traceStaged = (rev: number, value: Uint8Array | undefined): void => {
  traceStamp("staged", rev)
  if (value === undefined || value.byteLength < 8) return
  const sent = Number(Buffer.from(value.buffer, value.byteOffset, 8).readBigUInt64BE(0)) / 1e6
  const now = clock()
  // anything else in the value's first bytes: not a time of the last minute
  if (sent <= now && sent > now - 60_000) stamps.get(rev)![0] = sent
}

/** Stamps `rev` at `stage` (the first stamp wins, but the last for taken and written). */
export const traceStamp = (stage: TraceStage, rev: number): void => {
  const now = clock()
  let s = stamps.get(rev)
  if (s === undefined) stamps.set(rev, (s = []))
  const i = STAGES.indexOf(stage)
  // offered: the first stream; taken and written: the last stream (the one a p99 waits for)
  if (s[i] === undefined || i >= 5) s[i] = now
  // a revision's durability is its WAL group's end, which precedes its commit
  if (stage === "committed" && s[2] === undefined && lastDurable > 0) s[2] = lastDurable
}

const walGroups: Array<number> = []
const applies: Array<[number, number]> = []

/** The end of a WAL group started at `startedAt` (the revisions in it are not known to the backend). */
export const traceDurable = (startedAt: number): void => {
  lastDurable = clock()
  walGroups.push(lastDurable - startedAt)
}

/** An LMDB apply (write txn + sync commit, off the main thread) from `startedAt` to now. */
export const traceApply = (startedAt: number): void => {
  applies.push([startedAt, clock()])
}

export const traceNow = (): number => clock()

const pct = (xs: Array<number>, p: number): number => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!

const report = (): void => {
  const done: Array<[number, Array<number>]> = []
  for (const [rev, s] of stamps) if (s[6] !== undefined && s[1] !== undefined) done.push([rev, s])
  if (done.length === 0) return
  const lines: Array<string> = [`put→event trace: ${done.length} revisions written`]
  for (let i = 1; i < STAGES.length; i++) {
    const d = done
      .filter(([, s]) => s[i] !== undefined && s[i - 1] !== undefined)
      .map(([, s]) => s[i]! - s[i - 1]!)
      .sort((a, b) => a - b)
    if (d.length === 0) continue
    lines.push(
      `  ${STAGES[i - 1]}→${STAGES[i]}: p50 ${pct(d, 50).toFixed(2)} p99 ${pct(d, 99).toFixed(2)} max ${d.at(-1)!.toFixed(2)} ms`
    )
  }
  const total = done.map(([rev, s]) => [rev, s[6]! - (s[0] ?? s[1]!), s] as const).sort((a, b) => b[1] - a[1])
  const t = total.map((x) => x[1]).sort((a, b) => a - b)
  lines.push(
    `  ${done[0]![1][0] === undefined ? "staged" : "sent"}→written: p50 ${pct(t, 50).toFixed(2)} p99 ${pct(t, 99).toFixed(2)} max ${t.at(-1)!.toFixed(2)} ms`
  )
  for (const [rev, ms, s] of total.slice(0, 5)) {
    const parts = STAGES.slice(1).map((name, j) =>
      s[j + 1] === undefined || s[j] === undefined ? `${name} ?` : `${name} +${(s[j + 1]! - s[j]!).toFixed(1)}`
    )
    lines.push(`  slowest rev ${rev}: ${ms.toFixed(1)} ms = ${parts.join(", ")}`)
  }
  if (walGroups.length > 0) {
    const g = walGroups.sort((a, b) => a - b)
    lines.push(
      `  WAL group write+fdatasync: ${g.length} groups, p50 ${pct(g, 50).toFixed(2)} p99 ${pct(g, 99).toFixed(2)} max ${g.at(-1)!.toFixed(2)} ms`
    )
    walGroups.length = 0
  }
  if (applies.length > 0) {
    const a = applies.map(([s, e]) => e - s).sort((x, y) => x - y)
    const slow = total.slice(0, Math.max(1, Math.ceil(total.length / 100)))
    const overlapped = slow.filter(([, , s]) => applies.some(([as, ae]) => as < s[2]! && ae > s[1]!)).length
    lines.push(
      `  LMDB applies: ${a.length}, p50 ${pct(a, 50).toFixed(2)} p99 ${pct(a, 99).toFixed(2)} max ${a.at(-1)!.toFixed(2)} ms; ` +
        `the slowest 1% of revisions overlapping one while they waited for durability: ${overlapped} of ${slow.length}`
    )
    applies.length = 0
  }
  if (loopDelay !== undefined) {
    lines.push(
      `  event loop delay: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} max ${(loopDelay.max / 1e6).toFixed(1)} ms`
    )
    loopDelay.reset()
  }
  process.stderr.write(lines.join("\n") + "\n")
  for (const [rev] of done) stamps.delete(rev)
}

if (TRACE_PUT_EVENT) {
  loopDelay!.enable()
  setInterval(report, 5000).unref()
  process.on("exit", report)
}
