/**
 * The apiserver's own metrics on /metrics (Prometheus text 0.0.4), with upstream's names and
 * labels: apiserver_request_total, apiserver_longrunning_requests, apiserver_watch_events_total.
 * Plain counters in maps: the watch path adds to a counter cell per chunk, no Effect per event.
 */
import { Metric, MetricState, Option } from "effect"

/** A counter or gauge cell, held by whoever updates it. */
export interface Cell {
  n: number
}

type Labels = Readonly<Record<string, string>>

const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const render = (labels: Labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escape(labels[k]!)}"`)
    .join(",")

class Family {
  private readonly cells = new Map<string, Cell>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge"
  ) {}
  cell(labels: Labels): Cell {
    const key = render(labels)
    let c = this.cells.get(key)
    if (c === undefined) this.cells.set(key, (c = { n: 0 }))
    return c
  }
  write(out: Array<string>): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`)
    for (const [k, c] of this.cells) out.push(`${this.name}{${k}} ${c.n}`)
  }
}

export interface RequestLabels {
  readonly verb: string
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly subresource: string
  /** "resource" (a named object), "namespace", "cluster", or "" for non-resource requests */
  readonly scope: string
}

export class ApiMetrics {
  readonly requestTotal = new Family(
    "apiserver_request_total",
    "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
    "counter"
  )
  readonly longrunning = new Family(
    "apiserver_longrunning_requests",
    "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
    "gauge"
  )
  readonly watchEvents = new Family(
    "apiserver_watch_events_total",
    "[ALPHA] Number of events sent in watch clients",
    "counter"
  )

  /** one request done: its code and the dry_run label ("All" under dryRun, else "") */
  request(l: RequestLabels, code: number, dryRun = ""): void {
    this.requestTotal.cell({ ...l, component: "apiserver", dry_run: dryRun, code: String(code) }).n++
  }

  longrunningCell(l: RequestLabels): Cell {
    return this.longrunning.cell({ ...l, component: "apiserver" })
  }

  watchEventsCell(group: string, version: string, resource: string): Cell {
    return this.watchEvents.cell({ group, version, resource })
  }

  text(): string {
    const out: Array<string> = []
    this.requestTotal.write(out)
    this.longrunning.write(out)
    this.watchEvents.write(out)
    writeCacherMetrics(out)
    return out.join("\n") + "\n"
  }
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')

/**
 * The watch cache's metrics (apiserver_watch_cache_*, apiserver_cache_list_*,
 * apiserver_terminated_watchers_total, and watch_cache_capacity*, which the apiserver names
 * without its namespace: Effect counters and gauges kept by the Cacher's parts),
 * from the Effect metric registry, in the text format.
 */
const writeCacherMetrics = (out: Array<string>): void => {
  const families = new Map<string, { help: string; type: string; lines: Array<string> }>()
  for (const pair of Metric.unsafeSnapshot()) {
    const key = pair.metricKey
    if (!key.name.startsWith("apiserver_") && !key.name.startsWith("watch_cache_")) continue
    const state = pair.metricState
    const type = MetricState.isCounterState(state) ? "counter" : MetricState.isGaugeState(state) ? "gauge" : undefined
    if (type === undefined) continue
    const value = MetricState.isCounterState(state)
      ? state.count
      : (state as MetricState.MetricState.Gauge<number>).value
    let family = families.get(key.name)
    if (family === undefined)
      families.set(key.name, (family = { help: Option.getOrElse(key.description, () => key.name), type, lines: [] }))
    const labels = key.tags.map((t) => `${t.key}="${escapeLabel(t.value)}"`).join(",")
    family.lines.push(`${key.name}${labels === "" ? "" : `{${labels}}`} ${String(value)}`)
  }
  for (const [name, f] of families) out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`, ...f.lines)
}
