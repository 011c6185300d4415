/**
 * bench:compare's outputs (three systems, two instruments): the text table, the marked section of docs/benchmarks.md (rewritten in
 * place, idempotent, the rest of the file kept) and the SVG chart (well-formed XML, one bar per
 * scenario with a result, colours by target).
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import {
  BEGIN_MARKER,
  chartBars,
  END_MARKER,
  escapeXml,
  logTicks,
  latencyLines,
  renderSection,
  renderSvg,
  renderText,
  rewriteSection,
  type RunInfo,
  type ScenarioOutcome
} from "../../benchmarks/compare-render.js"
import { scenarios } from "../../benchmarks/compare-scenarios.js"
import { type Sample, summarize } from "../../benchmarks/compare-stats.js"

const spec = (id: string) => scenarios.find((s) => s.id === id)!
const systems = ["etcd-3.4", "etcd-3.6", "etcd-effect"] as const

const samplesOf = (vs: Array<number | undefined>): Array<Sample> =>
  vs.map((v, i) => (v === undefined ? { round: i + 1, error: "connection refused <&>" } : { round: i + 1, value: v }))

const outcome = (
  id: string,
  e34: Array<number | undefined>,
  e36: Array<number | undefined>,
  ours: Array<number | undefined>,
  instrument: "bench" | "etcd-tool" = "bench"
): ScenarioOutcome => {
  const s = spec(id)
  const samples = { "etcd-3.4": samplesOf(e34), "etcd-3.6": samplesOf(e36), "etcd-effect": samplesOf(ours) }
  return {
    spec: s,
    instrument,
    systems,
    params: s.describe(s.options),
    samples,
    summary: summarize(s, samples),
    load: [0.4, 0.6]
  }
}

const outcomes: Array<ScenarioOutcome> = [
  outcome("watch", [4e6, 4.2e6, 3.9e6], [3e6, 3.1e6, 2.9e6], [13e6, 13.1e6, 12.8e6]), // met: 3.25× etcd 3.4
  outcome("watch-latency-1000", [5, 5.5, 6], [4, 4.5, 5], [7, 8, 9]), // missed: lower is better, vs etcd 3.6
  outcome("watch-catchup", [770_000, 760_000, 780_000], [700_000, 710_000, 720_000], [800_000, 900_000, undefined]), // missed (< 2)
  outcome("watch-get", [1000, 1100, 1200], [900, 950, 1000], [2000, 2100, 2200], "etcd-tool"), // informational
  outcome("put", [undefined, undefined, undefined], [undefined], [4000, 4100, 4200]), // no ratio
  outcome("serve-idle", [40], [45], [60]) // absolute target, met
]

const info: RunInfo = {
  date: new Date("2026-11-23T10:00:00.123Z"),
  cpu: "Intel(R) Xeon(R) Processor @ 2.50GHz",
  cores: 2,
  node: "v20.20.2",
  versions: { "etcd-3.4": "3.4.23 (go1.19.8)", "etcd-3.6": "3.6.16 (go1.26.8)", "etcd-effect": "Node v20.20.2" },
  systems,
  instruments: ["bench", "etcd-tool"],
  pinned: false,
  loadBefore: [0.5, 0.7, 1],
  loadAfter: [1.9, 1.2, 1.1],
  command: "npm run bench:compare",
  rounds: 3,
  quick: false,
  elapsedS: 412.4
}

/**
 * A small well-formedness check: XML declaration, tags balanced and properly nested, attributes
 * quoted, no raw "<" or "&" outside tags and entities. Returns the element names in document order.
 */
const checkXml = (xml: string): Array<string> => {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true)
  const body = xml.replace(/^<\?xml[^?]*\?>/, "")
  const stack: Array<string> = []
  const elements: Array<string> = []
  const token = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|<!--[\s\S]*?-->/y
  let i = 0
  while (i < body.length) {
    const lt = body.indexOf("<", i)
    const text = body.slice(i, lt < 0 ? body.length : lt)
    expect(text, `stray "&" in ${JSON.stringify(text)}`).not.toMatch(/&(?!(amp|lt|gt|quot|apos|#\d+);)/)
    if (lt < 0) break
    token.lastIndex = lt
    const m = token.exec(body)
    expect(m, `malformed tag at ${JSON.stringify(body.slice(lt, lt + 60))}`).not.toBeNull()
    const [all, close, name, attrs, selfClose] = m!
    if (name !== undefined) {
      for (const a of (attrs ?? "").matchAll(/([\w:.-]+)="([^"]*)"/g)) {
        expect(a[2], `attribute ${a[1]}`).not.toMatch(/&(?!(amp|lt|gt|quot|apos|#\d+);)/)
      }
      if (close === "/") expect(stack.pop(), `</${name}> closes the wrong element`).toBe(name)
      else {
        elements.push(name)
        if (selfClose !== "/") stack.push(name)
      }
    }
    i = lt + all.length
  }
  expect(stack).toEqual([])
  expect(elements[0]).toBe("svg")
  expect(elements.filter((e) => e === "svg")).toHaveLength(1)
  return elements
}

describe("text table", () => {
  it("one line per scenario and instrument: every system's median, the better etcd starred, ratio, target, verdict; errors listed", () => {
    const text = renderText(outcomes)
    const lines = text.split("\n")
    const watch = lines.find((l) => l.startsWith("watch "))!
    expect(watch).toContain("4,000,000*")
    expect(watch).toContain("3,000,000 ")
    expect(watch).toContain("13,000,000")
    expect(watch).toContain("3.25")
    expect(watch).toContain("≥ 3×")
    expect(watch).toContain("✓")
    expect(watch).toContain("4.00M, 4.20M, 3.90M")
    expect(watch).toContain("0.4–0.6")
    const latency = lines.find((l) => l.startsWith("watch-latency-1000 "))!
    expect(latency).toContain("4.50*")
    expect(latency).toContain("1.78")
    expect(latency).toContain("✗")
    expect(lines.find((l) => l.startsWith("watch-get "))).toMatch(/etcd-tool .*none \(informational\)/)
    expect(lines.find((l) => l.startsWith("serve-idle "))).toMatch(/≤ 70\.0 MB \(ours\) +✓/)
    expect(text).toContain("errors:")
    expect(text).toContain("put (bench), etcd-3.4, round 2: connection refused")
    const header = lines[0]!
    expect(header.indexOf("etcd-3.6 (median)")).toBeGreaterThan(header.indexOf("etcd-3.4 (median)"))
    expect(header.indexOf("etcd-effect (median)")).toBeGreaterThan(header.indexOf("etcd-3.6 (median)"))
  })
})

describe("docs/benchmarks.md section", () => {
  const section = renderSection(info, outcomes, "bench-compare.svg")

  it("holds the date, machine, load, command, table, chart and failures between the markers", () => {
    expect(section.startsWith(BEGIN_MARKER)).toBe(true)
    expect(section.endsWith(END_MARKER)).toBe(true)
    expect(section).toContain("2026-11-23T10:00:00Z")
    expect(section).toContain(
      "Intel(R) Xeon(R) Processor @ 2.50GHz, 2 cores, Node v20.20.2, etcd 3.4: 3.4.23 (go1.19.8), etcd 3.6: 3.6.16 (go1.26.8); unpinned"
    )
    expect(section).toContain("## etcd-effect vs etcd-3.4, etcd-3.6, side by side (bench:compare)")
    expect(section).toContain("0.50 / 0.70 / 1.00 before, 1.90 / 1.20 / 1.10 after")
    expect(section).toContain("```\nnpm run bench:compare\n```")
    expect(section).toContain("![ratio etcd-effect / the better etcd per scenario, log scale](bench-compare.svg)")
    expect(section).toContain("Targets met: **2 of 5**")
    expect(section).toContain("fsync")
    expect(section.match(/^\| watch \|/gm)).toHaveLength(1)
    expect(section).toContain("- put (bench), etcd-3.4, round 1: connection refused <&>")
    expect(renderSection({ ...info, pinned: true }, outcomes, "c.svg")).toContain(
      "pinned (load generator on CPU 0, server on CPU 1)"
    )
  })

  it("goes in before the first ## section when absent, keeping the rest of the file byte for byte", () => {
    const doc = "# Benchmarks\n\nIntro line.\n\n## mvcc\n\nold | table\n\n## watch\n\ntext\n"
    const once = rewriteSection(doc, section)
    expect(once.startsWith("# Benchmarks\n\nIntro line.\n\n" + BEGIN_MARKER)).toBe(true)
    expect(once.endsWith(END_MARKER + "\n\n## mvcc\n\nold | table\n\n## watch\n\ntext\n")).toBe(true)
  })

  it("replaces only the marked section, idempotently", () => {
    const doc = "# B\n\n## x\n"
    const first = rewriteSection(doc, section)
    expect(rewriteSection(first, section)).toBe(first)
    const other = renderSection({ ...info, date: new Date("2027-01-01T00:00:00Z") }, outcomes.slice(0, 1), "c.svg")
    const second = rewriteSection(first, other)
    expect(second).toBe(first.replace(section, other))
    expect(second).not.toContain("2026-11-23")
    expect(second.match(new RegExp(BEGIN_MARKER, "g"))).toHaveLength(1)
    expect(rewriteSection(second, section)).toBe(first)
  })

  it("works on the real docs/benchmarks.md without touching what is outside the markers", () => {
    const doc = fs.readFileSync("docs/benchmarks.md", "utf8")
    const out = rewriteSection(doc, section)
    const begin = out.indexOf(BEGIN_MARKER)
    const end = out.indexOf(END_MARKER) + END_MARKER.length
    const outside = out.slice(0, begin) + out.slice(end)
    const docBegin = doc.indexOf(BEGIN_MARKER)
    const docOutside =
      docBegin < 0 ? doc : doc.slice(0, docBegin) + doc.slice(doc.indexOf(END_MARKER) + END_MARKER.length)
    expect(outside.replace(/\n+/g, "\n")).toBe(docOutside.replace(/\n+/g, "\n"))
    expect(rewriteSection(out, section)).toBe(out)
  })
})

describe("latency percentiles", () => {
  const withLatency = (rounds: Array<[number, number] | undefined>): Array<Sample> =>
    rounds.map((r, i) =>
      r === undefined
        ? { round: i + 1, error: "timed out" }
        : { round: i + 1, value: r[1], detail: { latencyMs: { p50: r[0], p90: 0, p99: r[1], max: 0, mean: 0 } } }
    )
  it("gives each latency row's p50 and p99 per system as medians of the rounds that did not fail", () => {
    const s = spec("watch-latency-1000")
    const samples = {
      "etcd-3.4": withLatency([
        [1, 5],
        [2, 7],
        [3, 9]
      ]),
      "etcd-effect": withLatency([[0.5, 4], undefined, [1.5, 20]])
    }
    const lines = latencyLines([
      { spec: s, instrument: "bench", systems, params: "", samples, summary: summarize(s, samples) },
      outcome("put", [1, 2, 3], [1], [1, 2, 3])
    ])
    expect(lines).toEqual([
      "",
      "Latency, p50 and p99 (medians of the rounds):",
      "",
      "- watch-latency-1000 (bench): etcd-3.4 p50 2.00 ms, p99 7.00 ms; etcd-effect p50 1.00 ms, p99 12.0 ms"
    ])
    expect(latencyLines([outcome("put", [1], [1], [1])])).toEqual([])
  })
})

describe("SVG chart", () => {
  const svg = renderSvg(chartBars(outcomes), "title <with> & specials", "subtitle 'quoted'")

  it("is well-formed XML", () => {
    const elements = checkXml(svg)
    expect(elements).toContain("rect")
    expect(elements).toContain("text")
    expect(svg).toContain("title &lt;with&gt; &amp; specials")
  })

  const charted = outcomes.filter((o) => o.spec.id !== "serve-idle")
  it("has one row per scenario with a ratio target or none, one bar per such scenario with a ratio", () => {
    expect(svg.match(/<g class="bar-row">/g)).toHaveLength(charted.length)
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(charted.filter((o) => o.summary.ratio !== undefined).length)
    expect(svg).toContain("no result")
    expect(svg).not.toContain("idle server RSS")
  })

  it("colours bars green when met, red when missed, grey without target; a target mark per targeted bar", () => {
    const fills = [...svg.matchAll(/<rect class="bar"[^>]*fill="(#[0-9a-f]{6})"/g)].map((m) => m[1])
    expect(fills).toEqual(["#2e7d32", "#c62828", "#c62828", "#607d8b"])
    expect(svg.match(/<line class="target"/g)).toHaveLength(charted.filter((o) => o.spec.target !== undefined).length)
  })

  it("bars grow from parity: a ratio above 1 starts at x(1), one below ends there", () => {
    const bars = [...svg.matchAll(/<rect class="bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2])
    ])
    const parity = Number(/<line x1="([\d.]+)"[^>]*stroke-dasharray/.exec(svg)![1])
    expect(bars[0]![0]).toBeCloseTo(parity, 0) // watch 3.25: starts at parity
    expect(bars[1]![0]! + bars[1]![1]!).toBeGreaterThan(parity) // latency 1.78
    expect(Math.abs(bars[3]![0]! - parity)).toBeLessThan(0.2) // watch-get 1.91
  })

  it("log ticks and escaping", () => {
    expect(logTicks(0.1, 10)).toEqual([0.1, 0.2, 0.5, 1, 2, 5, 10])
    expect(escapeXml(`a<b>&"c'`)).toBe("a&lt;b&gt;&amp;&quot;c&apos;")
    // empty and extreme inputs still render valid XML
    checkXml(renderSvg([], "t", "s"))
    checkXml(
      renderSvg(
        [
          { label: "x", sublabel: "y", ratio: 1e-4, tooltip: "z" },
          { label: "x", sublabel: "y", ratio: 5e3, tooltip: "z" }
        ],
        "t",
        "s"
      )
    )
  })
})

describe("load warning", () => {
  it("appears when the 1-minute load average exceeded the cores, before or after", () => {
    expect(renderSection(info, outcomes, "c.svg")).not.toContain("Load average above")
    const busy = renderSection({ ...info, loadAfter: [3.5, 2, 1] }, outcomes, "c.svg")
    expect(busy).toContain("**Load average above the 2 cores (up to 3.5)")
  })
})
