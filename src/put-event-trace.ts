/**
 * A debug trace of the put → event path, to find where a slow event waited. Off unless the
 * server runs with ETCD_EFFECT_TRACE_PUT_EVENT=1: then every stage stamps its revision with
 * `performance.now()`, and every 5 s (and at exit) stderr gets each segment's p50/p99/max and the
 * slowest revisions' breakdown. When off, each call site costs one test of a constant.
 *
 * Stages, in path order (the files that stamp them):
 * - staged: the write's revision is staged in the mvcc store (mvcc/kvstore.ts), in the tick the
 *   Put handler runs — "put received" as far as the server's code is concerned
 * - durable: the WAL group holding it was fdatasync'ed (backend/lmdb.ts; the group's end time)
 * - committed: the commit listener runs for it (mvcc/kvstore.ts)
 * - offered: its first response is offered to a watch channel (watch/watch-stream.ts)
 * - taken: a Watch stream's send loop took it from the channel (server/watch-server.ts)
 * - written: that loop wrote the frames holding it to the HTTP/2 stream (server/watch-server.ts)
 * The event loop's delay (perf_hooks.monitorEventLoopDelay) is reported alongside.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks"

export const TRACE_PUT_EVENT: boolean = process.env["ETCD_EFFECT_TRACE_PUT_EVENT"] === "1"

const STAGES = ["staged", "durable", "committed", "offered", "taken", "written"] as const
export type TraceStage = (typeof STAGES)[number]

const stamps = new Map<number, Array<number>>()
let lastDurable = 0
const loopDelay = TRACE_PUT_EVENT ? monitorEventLoopDelay({ resolution: 10 }) : undefined

/** Stamps `rev` at `stage` (the first stamp of a stage wins). */
export const traceStamp = (stage: TraceStage, rev: number): void => {
  const now = performance.now()
  let s = stamps.get(rev)
  if (s === undefined) stamps.set(rev, (s = []))
  const i = STAGES.indexOf(stage)
  if (s[i] === undefined) s[i] = now
  // a revision's durability is its WAL group's end, which precedes its commit
  if (stage === "committed" && s[1] === undefined && lastDurable > 0) s[1] = lastDurable
}

/** The end of a WAL group (the revisions in it are not known to the backend). */
export const traceDurable = (): void => {
  lastDurable = performance.now()
}

const pct = (xs: Array<number>, p: number): number => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!

const report = (): void => {
  const done: Array<[number, Array<number>]> = []
  for (const [rev, s] of stamps) if (s[5] !== undefined && s[0] !== undefined) done.push([rev, s])
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
  const total = done.map(([rev, s]) => [rev, s[5]! - s[0]!, s] as const).sort((a, b) => b[1] - a[1])
  const t = total.map((x) => x[1]).sort((a, b) => a - b)
  lines.push(
    `  staged→written: p50 ${pct(t, 50).toFixed(2)} p99 ${pct(t, 99).toFixed(2)} max ${t.at(-1)!.toFixed(2)} ms`
  )
  for (const [rev, ms, s] of total.slice(0, 5)) {
    const parts = STAGES.slice(1).map((name, j) =>
      s[j + 1] === undefined || s[j] === undefined ? `${name} ?` : `${name} +${(s[j + 1]! - s[j]!).toFixed(1)}`
    )
    lines.push(`  slowest rev ${rev}: ${ms.toFixed(1)} ms = ${parts.join(", ")}`)
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
