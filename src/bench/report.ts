/**
 * A BenchResult for people (a two-column table) and for programs (JSON), and the progress bar
 * (stderr, only on a terminal: a pipe or a log file gets no carriage-return noise).
 */
import type { BenchResult, Progress } from "./result.js"

const number = (n: number): string =>
  Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : Number(n.toPrecision(3)).toString()

/** what `count` counts, for "µs per …" */
const countedThing: Record<BenchResult["scenario"], string> = {
  put: "put",
  "txn-put": "txn",
  range: "range",
  watch: "event",
  "watch-latency": "event",
  "watch-create": "watch",
  "watch-catchup": "event",
  "watch-idle": "watcher"
}

const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(3))

/** A result as a two-column table for people: the headline figure, count, errors, duration and latency percentiles. */
export const renderTable = (r: BenchResult): string => {
  const rows: Array<[string, string]> = [
    [r.unit, number(r.value)],
    ["count", number(r.count)],
    ["errors", r.errors === 0 ? "0" : `${r.errors} (first: ${r.firstError ?? "?"})`],
    ["duration", `${ms(r.durationMs)} ms`]
  ]
  if (r.latencyMs !== undefined) {
    const l = r.latencyMs
    rows.push([
      "latency (ms)",
      `p50 ${ms(l.p50)}  p90 ${ms(l.p90)}  p99 ${ms(l.p99)}  max ${ms(l.max)}  mean ${ms(l.mean)}`
    ])
  }
  if (r.clientCpuMs !== undefined) {
    const share = r.durationMs > 0 ? ` (${Math.round((100 * r.clientCpuMs) / r.durationMs)} % of one core` : " ("
    const per = r.count > 0 ? `; ${ms((1000 * r.clientCpuMs) / r.count)} µs per ${countedThing[r.scenario]})` : ")"
    rows.push(["client CPU", `${ms(r.clientCpuMs)} ms${share}${per}`])
  }
  rows.push([
    "parameters",
    Object.entries(r.params)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")
  ])
  const width = Math.max(...rows.map(([k]) => k.length))
  const title = `bench ${r.scenario} → ${r.endpoints.join(",")}`
  const lines = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
  return [title, `  ${"─".repeat(Math.max(title.length - 2, 20))}`, ...lines].join("\n") + "\n"
}

/** A result as one line of JSON, for programs. */
export const renderJson = (r: BenchResult): string => JSON.stringify(r)

/**
 * A progress callback drawing a bar on `out`, or undefined when `out` is not a terminal. `clear`
 * erases the bar (call it before printing the result).
 */
export const progressBar = (
  out: NodeJS.WriteStream = process.stderr
):
  | {
      /** redraws the bar for this progress */
      readonly onProgress: (p: Progress) => void
      /** erases the bar */
      readonly clear: () => void
    }
  | undefined => {
  if (out.isTTY !== true) return undefined
  let drawn = false
  return {
    onProgress: (p) => {
      const columns = out.columns ?? 80
      const label = `${p.phase ?? ""} ${p.done}/${p.total}`
      const room = Math.max(10, Math.min(50, columns - label.length - 10))
      const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 0
      const filled = Math.round(fraction * room)
      out.write(`\r[${"#".repeat(filled)}${"-".repeat(room - filled)}] ${Math.floor(fraction * 100)}% ${label}\u001b[K`)
      drawn = true
    },
    clear: () => {
      if (drawn) out.write("\r\u001b[K")
      drawn = false
    }
  }
}
