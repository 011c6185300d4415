/**
 * Prometheus' text exposition format, version 0.0.4 (what etcd's promhttp handler serves):
 * per family a `# HELP` and a `# TYPE` line, then its samples, `name{label="value",...} value`.
 *
 * Our own writer rather than a client library: the families are few and read at scrape time from
 * counters the server keeps anyway, so all a library would add is a global registry (two servers
 * in one process would share it) and a dependency. See docs/decisions.md ("Metrics and health").
 */
import type { Effect } from "effect"

export type MetricType = "counter" | "gauge" | "summary" | "histogram" | "untyped"

export type Labels = Readonly<Record<string, string>>

export interface Sample {
  /** appended to the family's name: "_bucket", "_sum", "_count"; absent for the family's own */
  readonly suffix?: "_bucket" | "_sum" | "_count"
  readonly labels?: Labels
  readonly value: number
}

export interface MetricFamily {
  readonly name: string
  readonly help: string
  readonly type: MetricType
  readonly samples: ReadonlyArray<Sample>
}

/** Reads a group of families at scrape time. */
export type Collector = Effect.Effect<ReadonlyArray<MetricFamily>>

/** The Content-Type of the 0.0.4 text format. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

const escapeHelp = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const escapeLabelValue = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

/** A sample value as the format spells it (Go's ParseFloat reads every form JS prints). */
export const formatValue = (v: number): string =>
  Number.isNaN(v) ? "NaN" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : String(v)

const formatLabels = (labels: Labels): string => {
  let out = ""
  for (const name in labels) {
    // names are ours, not user input: a bad one is a bug, caught by the tests' strict parser too
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new Error(`invalid label name ${JSON.stringify(name)}`)
    out += `${out === "" ? "" : ","}${name}="${escapeLabelValue(labels[name]!)}"`
  }
  return out === "" ? "" : `{${out}}`
}

/** The exposition of `families`, in order; names must be unique (one family per name). */
export const writeFamilies = (families: ReadonlyArray<MetricFamily>): string => {
  const lines: Array<string> = []
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw new Error(`invalid metric name ${JSON.stringify(f.name)}`)
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) {
      const labels = s.labels === undefined ? "" : formatLabels(s.labels)
      lines.push(`${f.name}${s.suffix ?? ""}${labels} ${formatValue(s.value)}`)
    }
  }
  lines.push("")
  return lines.join("\n")
}

/** A family of one unlabelled sample. */
export const single = (type: "counter" | "gauge", name: string, help: string, value: number): MetricFamily => ({
  name,
  help,
  type,
  samples: [{ value }]
})

export const gauge = (name: string, help: string, value: number): MetricFamily => single("gauge", name, help, value)

export const counter = (name: string, help: string, value: number): MetricFamily => single("counter", name, help, value)

/** An "info" gauge: value 1, the facts in its labels (etcd_server_version, nodejs_version_info). */
export const info = (name: string, help: string, labels: Labels): MetricFamily => ({
  name,
  help,
  type: "gauge",
  samples: [{ labels, value: 1 }]
})
