/**
 * bench:compare's outputs: the text table (stdout), the marked section of docs/benchmarks.md and
 * the SVG bar chart of the ratios. Pure functions of the outcomes; no I/O here.
 */
import type { Instrument, ScenarioSpec, Target } from "./compare-scenarios.js"
import {
  formatMet,
  formatRatio,
  formatRounds,
  formatTarget,
  formatValue,
  median,
  type Sample,
  type Summary,
  type SystemName
} from "./compare-stats.js"

export const BEGIN_MARKER = "<!-- bench:compare:begin -->"
export const END_MARKER = "<!-- bench:compare:end -->"

export interface ScenarioOutcome {
  readonly spec: Pick<ScenarioSpec, "id" | "title" | "unit" | "higherIsBetter" | "target">
  /** the client that drove the load ("bench" also for the RSS rows, which no client measures) */
  readonly instrument: Instrument
  /** the systems of the run, in column order (ours last) */
  readonly systems: ReadonlyArray<SystemName>
  /** the load, in words */
  readonly params: string
  readonly samples: Readonly<Partial<Record<SystemName, ReadonlyArray<Sample>>>>
  readonly summary: Summary
  /** the 1-minute load average's lowest and highest reading at the starts of its measurements */
  readonly load?: readonly [number, number]
}

export interface RunInfo {
  readonly date: Date
  readonly cpu: string
  readonly cores: number
  readonly node: string
  /** each system's version line ("3.6.16 (go1.26.8)", ours: "Node v20…") */
  readonly versions: Readonly<Partial<Record<SystemName, string>>>
  readonly systems: ReadonlyArray<SystemName>
  readonly instruments: ReadonlyArray<Instrument>
  /** load generator on CPU 0, server on CPU 1 */
  readonly pinned: boolean
  readonly loadBefore: ReadonlyArray<number>
  readonly loadAfter: ReadonlyArray<number>
  readonly command: string
  readonly rounds: number
  readonly quick: boolean
  readonly elapsedS: number
  /** our server's extra flags, e.g. --listen-metrics-urls, for the record */
  readonly notes?: ReadonlyArray<string>
}

const columns = (systems: ReadonlyArray<SystemName>) => [
  "scenario",
  "instrument",
  "load",
  "unit",
  ...systems.map((x) => `${x} (median)`),
  "ratio ours / better etcd",
  "target",
  "met",
  "load avg",
  ...systems.map((x) => `${x} rounds`)
]

/** Right-aligned columns: the medians, the ratio, the target, the verdict, the load. */
const rightAligned = (systems: ReadonlyArray<SystemName>) =>
  new Set(Array.from({ length: systems.length + 4 }, (_, i) => 4 + i))

const formatLoad = (l: readonly [number, number] | undefined) =>
  l === undefined
    ? "–"
    : l[0].toFixed(1) === l[1].toFixed(1)
      ? l[0].toFixed(1)
      : `${l[0].toFixed(1)}–${l[1].toFixed(1)}`

const row = (o: ScenarioOutcome): Array<string> => [
  o.spec.id,
  o.instrument,
  o.params,
  `${o.spec.unit} (${o.spec.higherIsBetter ? "higher" : "lower"} is better)`,
  ...o.systems.map((x) => formatValue(o.summary.medians[x]) + (x === o.summary.bestEtcd ? "*" : "")),
  formatRatio(o.summary.ratio),
  formatTarget(o.spec.target, o.spec.unit),
  formatMet(o.summary.met),
  formatLoad(o.load),
  ...o.systems.map((x) => formatRounds(o.samples[x] ?? []))
]

/** Every failed round, one line each: "watch (bench), etcd-effect, round 2: <why>". */
export const errorLines = (outcomes: ReadonlyArray<ScenarioOutcome>): Array<string> =>
  outcomes.flatMap((o) =>
    o.systems.flatMap((system) =>
      (o.samples[system] ?? []).flatMap((x) =>
        x.error === undefined
          ? []
          : [`${o.spec.id} (${o.instrument}), ${system}, round ${x.round}: ${oneLine(x.error)}`]
      )
    )
  )

const oneLine = (s: string) => s.replace(/\s+/g, " ").trim().slice(0, 400)

/** Display width, counting the few wide-looking characters we print as one column. */
const width = (s: string) => [...s].length

/** A plain-text table with aligned columns (numbers right-aligned). */
export const renderText = (outcomes: ReadonlyArray<ScenarioOutcome>): string => {
  const systems = outcomes[0]?.systems ?? []
  const header = columns(systems)
  const right = rightAligned(systems)
  const rows = [header, ...outcomes.map(row)]
  const widths = header.map((_, c) => Math.max(...rows.map((r) => width(r[c]!))))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((cell, c) => {
        const pad = " ".repeat(widths[c]! - width(cell))
        return right.has(c) ? pad + cell : cell + pad
      })
      .join("  ")
      .trimEnd()
  const out = [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)]
  const errors = errorLines(outcomes)
  if (errors.length > 0) out.push("", "errors:", ...errors.map((e) => `  ${e}`))
  return out.join("\n") + "\n"
}

const mdCell = (s: string) => s.replace(/\|/g, "\\|")

export const renderMarkdownTable = (outcomes: ReadonlyArray<ScenarioOutcome>): string => {
  const systems = outcomes[0]?.systems ?? []
  const header = columns(systems)
  const right = rightAligned(systems)
  const head = `| ${header.join(" | ")} |`
  const sep = `|${header.map((_, c) => (right.has(c) ? "---:" : "---")).join("|")}|`
  const body = outcomes.map((o) => `| ${row(o).map(mdCell).join(" | ")} |`)
  return [head, sep, ...body].join("\n")
}

const load = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join(" / ")

/** A busy machine depresses and scatters every figure: say so next to them. */
export const loadWarning = (info: RunInfo): Array<string> => {
  const peak = Math.max(info.loadBefore[0] ?? 0, info.loadAfter[0] ?? 0)
  return peak > info.cores
    ? [
        "",
        `**Load average above the ${info.cores} cores (up to ${peak.toFixed(1)}): other jobs shared the machine during this run, so the figures are depressed and noisy; re-run on a quiet machine before reading the ratios closely.**`
      ]
    : []
}

/** The latency rows' p50 and p99 (medians over the rounds): the table's headline is the p99 alone. */
export const latencyLines = (outcomes: ReadonlyArray<ScenarioOutcome>): Array<string> => {
  const pick = (samples: ReadonlyArray<Sample>, q: "p50" | "p99") =>
    median(
      samples.flatMap((x) => {
        const l =
          x.error === undefined ? (x.detail?.["latencyMs"] as { p50: number; p99: number } | undefined) : undefined
        return l === undefined ? [] : [l[q]]
      })
    )
  const ms = (x: number | undefined) => (x === undefined ? "–" : `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`)
  const lines = outcomes.flatMap((o) => {
    const parts = o.systems.flatMap((x) => {
      const p50 = pick(o.samples[x] ?? [], "p50")
      return p50 === undefined ? [] : [`${x} p50 ${ms(p50)}, p99 ${ms(pick(o.samples[x] ?? [], "p99"))}`]
    })
    return parts.length === 0 ? [] : [`- ${o.spec.id} (${o.instrument}): ${parts.join("; ")}`]
  })
  return lines.length === 0 ? [] : ["", "Latency, p50 and p99 (medians of the rounds):", "", ...lines]
}

const versionLine = (info: RunInfo): string =>
  info.systems
    .filter((x) => x !== "etcd-effect")
    .map((x) => `${x.replace("etcd-", "etcd ")}: ${info.versions[x] ?? "?"}`)
    .join(", ")

/** The section between the markers (markers included). */
export const renderSection = (info: RunInfo, outcomes: ReadonlyArray<ScenarioOutcome>, svgFile: string): string => {
  const withTarget = outcomes.filter((o) => o.spec.target !== undefined)
  const met = withTarget.filter((o) => o.summary.met === true).length
  const errors = errorLines(outcomes)
  const etcds = info.systems.filter((x) => x !== "etcd-effect").join(", ")
  const lines = [
    BEGIN_MARKER,
    `## etcd-effect vs ${etcds}, side by side (bench:compare)`,
    "",
    "_This section is written by `npm run bench:compare` (between the bench:compare markers); re-run it rather than edit._",
    "",
    `Run of ${info.date.toISOString().replace(/\.\d+Z$/, "Z")} (${info.elapsedS.toFixed(0)} s${info.quick ? ", --quick: smoke sizes, not a measurement" : ""}). ` +
      `Machine: ${info.cpu}, ${info.cores} cores, Node ${info.node}, ${versionLine(info)}; ` +
      `${info.pinned ? "pinned (load generator on CPU 0, server on CPU 1); " : "unpinned; "}` +
      `load average (1/5/15 min) ${load(info.loadBefore)} before, ${load(info.loadAfter)} after.`,
    ...loadWarning(info),
    "",
    "```",
    info.command,
    "```",
    "",
    `Targets met: **${met} of ${withTarget.length}** rows (issue 29's targets, round 3; ${outcomes.length - withTarget.length} informational). ` +
      "A star marks the better etcd, the one the ratio divides by.",
    "",
    `![ratio etcd-effect / the better etcd per scenario, log scale](${svgFile})`,
    "",
    renderMarkdownTable(outcomes),
    ...latencyLines(outcomes),
    "",
    "How it is measured:",
    `- Every measurement starts a fresh server with an empty data dir under \`os.tmpdir()\` (all on the same filesystem), waits until it answers a Range, runs a shorter warm-up of the same load that is not recorded (not for the RSS rows, and not for \`watch-latency-cold\`, which times a fresh server's first seconds), runs the load, and stops it; only one server runs at a time. Each scenario runs ${info.rounds} round${info.rounds === 1 ? "" : "s"} per instrument; the systems' order rotates, so each goes first once in every ${info.systems.length} rounds. The table gives each system's median and every round's value, and the 1-minute load average at the measurements' starts.`,
    "- Same durability: etcd fsyncs its WAL before acknowledging a write, etcd-effect fdatasyncs its write-ahead log before acknowledging and commits LMDB with sync on (no `--unsafe-no-fsync`, no `noSync`).",
    "- etcd 3.4: Debian's `/usr/bin/etcd`; etcd 3.6/3.7: built from the Go module proxy by `benchmarks/go/build.sh`; one member on loopback, default flags (`--log-level error`). etcd-effect: `node dist/cli/main.js serve` on loopback" +
      (info.notes !== undefined && info.notes.length > 0 ? ` (${info.notes.join("; ")})` : "") +
      ".",
    "- Instruments: `bench` is `src/bench` (the `etcd-effect bench` command: gRPC over its own lean HTTP/2 client, decoding only what it counts) in the bench:compare process; `etcd-tool` is etcd's own `tools/benchmark` (clientv3 over grpc-go, `--precise`), a child process. etcd-tool's watch latency runs from the put's response to the event (an event that comes first counts 0), bench's from the put's send (its time is in the value) to the event." +
      (info.pinned
        ? " Pinned: the bench:compare process and the tool on CPU 0, the server on CPU 1 (`taskset`)."
        : " Unpinned: load generator and server share both cores."),
    "- RSS per idle watcher: VmRSS of the server process (from /proc/<pid>/status) after a warm-up watch stream and 1 s of quiet, then again 2 s after the idle watchers were all created; the growth divided by the watchers. Idle server RSS: VmRSS 3 s after the first answered Range, in MB of 10^6 bytes.",
    "- ratio = etcd-effect / the better etcd's median. Higher is better for throughputs (target ≥), lower for latency and memory (target ≤); an absolute target (idle RSS) is our own figure.",
    "",
    "Options: `npm run bench:compare -- [--rounds N] [--only watch,put,…] [--etcd 3.4,3.6[,3.7]] [--instrument bench,etcd-tool] [--pin] [--quick] [--write | --no-write] [--cpu-prof DIR] [--json FILE]`. " +
      "A full run (all scenarios, not `--quick`) rewrites this section and `docs/bench-compare.svg`; `--only` and `--quick` runs print only, unless `--write`. " +
      "`--cpu-prof DIR` runs our server under `node --cpu-prof` (one `<scenario>-<instrument>-round<N>.cpuprofile` per start). The command exits 0 even when rounds failed: they are listed here and on stdout."
  ]
  if (errors.length > 0) lines.push("", "Failed rounds (left out of the medians):", "", ...errors.map((e) => `- ${e}`))
  lines.push(END_MARKER)
  return lines.join("\n")
}

/**
 * The document with the marked section replaced, or inserted before the first "## " heading (after
 * the title and its introduction) when the markers are absent. Everything else is kept as is.
 */
export const rewriteSection = (doc: string, section: string): string => {
  const begin = doc.indexOf(BEGIN_MARKER)
  const end = doc.indexOf(END_MARKER)
  if (begin >= 0 && end > begin) return doc.slice(0, begin) + section + doc.slice(end + END_MARKER.length)
  const heading = /^## /m.exec(doc)
  if (heading === null) return `${doc.replace(/\n*$/, "")}\n\n${section}\n`
  return `${doc.slice(0, heading.index)}${section}\n\n${doc.slice(heading.index)}`
}

// ---- SVG ------------------------------------------------------------------------------------------

export const escapeXml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;")

export interface ChartBar {
  readonly label: string
  readonly sublabel: string
  readonly ratio?: number
  readonly target?: Target
  readonly met?: boolean
  readonly tooltip: string
}

export const chartBars = (outcomes: ReadonlyArray<ScenarioOutcome>): Array<ChartBar> =>
  outcomes
    // an absolute target (idle RSS) has no ratio to draw
    .filter((o) => o.spec.target?.absolute === undefined)
    .map((o) => ({
      label: `${o.spec.title} (${o.instrument})`,
      sublabel: `${o.spec.unit}, ${o.spec.higherIsBetter ? "higher" : "lower"} is better · ${
        o.spec.target === undefined ? "no target" : `target ${formatTarget(o.spec.target)}`
      }`,
      ...(o.summary.ratio === undefined ? {} : { ratio: o.summary.ratio }),
      ...(o.spec.target === undefined ? {} : { target: o.spec.target }),
      ...(o.summary.met === undefined ? {} : { met: o.summary.met }),
      tooltip: `${o.spec.id} (${o.instrument}): ${o.summary.bestEtcd ?? "etcd"} ${formatValue(o.summary.etcd)}, etcd-effect ${formatValue(o.summary.ours)} ${o.spec.unit}`
    }))

const COLORS = { met: "#2e7d32", missed: "#c62828", info: "#607d8b", axis: "#555555", grid: "#dddddd" }

/** Tick values 1, 2, 5 × 10^k inside [lo, hi]. */
export const logTicks = (lo: number, hi: number): Array<number> => {
  const ticks: Array<number> = []
  for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** k
      if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push(Number(t.toPrecision(3)))
    }
  }
  return ticks
}

/**
 * A horizontal bar chart of the ratios on a log scale: each bar grows from parity (ratio 1) to the
 * ratio, green when its target is met, red when not, grey without a target; a black mark at each
 * bar's target. Hand-written SVG 1.1.
 */
export const renderSvg = (bars: ReadonlyArray<ChartBar>, title: string, subtitle: string): string => {
  const W = 960
  const labelW = 330
  const x0 = labelW + 10
  const plotW = 470
  const valueX = x0 + plotW + 16
  const rowH = 40
  const top = 78
  const barH = 18
  const H = top + bars.length * rowH + 70
  const finite = bars.flatMap((b) => [
    ...(b.ratio !== undefined && b.ratio > 0 ? [b.ratio] : []),
    ...(b.target?.ratio !== undefined ? [b.target.ratio] : [])
  ])
  const lo = 10 ** Math.floor(Math.log10(Math.min(0.1, ...finite.map((r) => r / 1.2))))
  const hi = 10 ** Math.ceil(Math.log10(Math.max(10, ...finite.map((r) => r * 1.2))))
  const x = (r: number) => x0 + ((Math.log10(r) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW
  const f = (v: number) => v.toFixed(1)
  const out: Array<string> = []
  out.push(
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="16" y="26" font-size="17" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="16" y="46" fill="${COLORS.axis}">${escapeXml(subtitle)}</text>`
  )
  const axisY = top + bars.length * rowH
  for (const t of logTicks(lo, hi)) {
    const tx = f(x(t))
    out.push(
      `<line x1="${tx}" y1="${top - 8}" x2="${tx}" y2="${axisY}" stroke="${COLORS.grid}" stroke-width="1"/>`,
      `<text x="${tx}" y="${axisY + 16}" text-anchor="middle" fill="${COLORS.axis}">${escapeXml(`${t}×`)}</text>`
    )
  }
  out.push(
    `<line x1="${x0}" y1="${axisY}" x2="${x0 + plotW}" y2="${axisY}" stroke="${COLORS.axis}" stroke-width="1"/>`,
    `<line x1="${f(x(1))}" y1="${top - 12}" x2="${f(x(1))}" y2="${axisY}" stroke="${COLORS.axis}" stroke-width="1" stroke-dasharray="4 3"/>`,
    `<text x="${f(x(1))}" y="${top - 16}" text-anchor="middle" fill="${COLORS.axis}" font-size="11">parity with the better etcd</text>`,
    `<text x="${x0 + plotW / 2}" y="${axisY + 36}" text-anchor="middle" fill="${COLORS.axis}">ratio etcd-effect / the better etcd (log scale)</text>`
  )
  bars.forEach((b, i) => {
    const y = top + i * rowH
    const barY = y + (rowH - barH) / 2
    const color = b.target === undefined ? COLORS.info : b.met === true ? COLORS.met : COLORS.missed
    out.push(`<g class="bar-row">`, `<title>${escapeXml(b.tooltip)}</title>`)
    out.push(
      `<text x="${labelW}" y="${f(y + 17)}" text-anchor="end" font-weight="bold">${escapeXml(b.label)}</text>`,
      `<text x="${labelW}" y="${f(y + 32)}" text-anchor="end" fill="${COLORS.axis}" font-size="11">${escapeXml(b.sublabel)}</text>`
    )
    if (b.ratio !== undefined && b.ratio > 0) {
      const r = Math.min(Math.max(b.ratio, lo), hi)
      const [a, c] = [x(1), x(r)].sort((p, q) => p - q) as [number, number]
      out.push(
        `<rect class="bar" x="${f(a)}" y="${f(barY)}" width="${f(Math.max(c - a, 2))}" height="${barH}" fill="${color}"/>`
      )
      const mark = b.met === undefined ? "" : b.met ? " ✓" : " ✗"
      out.push(
        `<text x="${valueX}" y="${f(barY + 14)}" fill="${color}" font-weight="bold">${escapeXml(`${formatRatio(b.ratio)}×${mark}`)}</text>`
      )
    } else {
      out.push(`<text x="${valueX}" y="${f(barY + 14)}" fill="${COLORS.missed}">no result</text>`)
    }
    if (b.target?.ratio !== undefined) {
      const tx = f(x(b.target.ratio))
      out.push(
        `<line class="target" x1="${tx}" y1="${f(barY - 5)}" x2="${tx}" y2="${f(barY + barH + 5)}" stroke="#000000" stroke-width="3"/>`
      )
    }
    out.push(`</g>`)
  })
  const ly = H - 14
  out.push(
    `<rect x="16" y="${ly - 10}" width="12" height="12" fill="${COLORS.met}"/>`,
    `<text x="34" y="${ly}">target met</text>`,
    `<rect x="124" y="${ly - 10}" width="12" height="12" fill="${COLORS.missed}"/>`,
    `<text x="142" y="${ly}">target missed</text>`,
    `<rect x="254" y="${ly - 10}" width="12" height="12" fill="${COLORS.info}"/>`,
    `<text x="272" y="${ly}">no target (informational)</text>`,
    `<line x1="452" y1="${ly - 11}" x2="452" y2="${ly + 3}" stroke="#000000" stroke-width="3"/>`,
    `<text x="462" y="${ly}">target</text>`,
    `</svg>`
  )
  return out.join("\n") + "\n"
}
