/** The result's two renderings, the latency histogram's summaries, and the progress bar's TTY rule. */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { PassThrough } from "node:stream"
import { type BenchResult, progressBar, renderJson, renderTable } from "../../src/bench/index.js"
import { LatencyHistogram } from "../../src/bench/latency.js"

const result: BenchResult = {
  scenario: "watch-latency",
  endpoints: ["127.0.0.1:2379"],
  params: { streams: 10, watchersPerStream: 10, putRate: 500, prevKv: false },
  value: 4.2,
  unit: "ms (p99)",
  higherIsBetter: false,
  count: 20000,
  errors: 2,
  firstError: "etcdserver: too many requests",
  durationMs: 4000,
  latencyMs: { p50: 0.8, p90: 2.1, p99: 4.2, max: 9.5, mean: 1.1 },
  clientCpuMs: 800
}

describe("bench report", () => {
  it("renders JSON that parses back to the result", () => {
    expect(JSON.parse(renderJson(result))).toEqual(result)
    expect(renderJson(result)).not.toContain("\n")
  })

  it("renders a table with the headline, errors, latency, client CPU and parameters", () => {
    const table = renderTable(result)
    expect(table).toContain("bench watch-latency → 127.0.0.1:2379")
    expect(table).toMatch(/ms \(p99\)\s+4\.2\n/)
    expect(table).toMatch(/errors\s+2 \(first: etcdserver: too many requests\)/)
    expect(table).toMatch(/latency \(ms\)\s+p50 0\.800 {2}p90 2\.10 {2}p99 4\.20 {2}max 9\.50 {2}mean 1\.10/)
    expect(table).toMatch(/client CPU\s+800 ms \(20 % of one core; 40\.00 µs per event\)/)
    expect(table).toMatch(/parameters\s+streams=10 watchersPerStream=10 putRate=500 prevKv=false/)
  })

  it("draws a progress bar only on a terminal", () => {
    const pipe = Object.assign(new PassThrough(), { isTTY: false }) as unknown as NodeJS.WriteStream
    expect(progressBar(pipe)).toBeUndefined()
    let drawn = ""
    const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 80 }) as unknown as NodeJS.WriteStream
    tty.on("data", (c: Buffer) => (drawn += c.toString()))
    const bar = progressBar(tty)!
    bar.onProgress({ done: 50, total: 200, phase: "events" })
    bar.clear()
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(drawn).toContain("25% events 50/200")
        expect(drawn.endsWith("\r\u001b[K")).toBe(true)
        resolve()
      })
    )
  })

  it.prop(
    "summarises latencies in order, within 1 % of the exact percentiles",
    [fc.array(fc.double({ min: 0, max: 5000, noNaN: true }), { minLength: 1, maxLength: 400 })],
    ([samples]) => {
      const h = new LatencyHistogram()
      for (const s of samples) h.record(s)
      const l = h.summary()!
      expect(l.p50).toBeLessThanOrEqual(l.p90)
      expect(l.p90).toBeLessThanOrEqual(l.p99)
      expect(l.p99).toBeLessThanOrEqual(l.max)
      const sorted = [...samples].sort((a, b) => a - b)
      expect(l.max).toBeCloseTo(sorted.at(-1)!, 9)
      expect(l.mean).toBeCloseTo(samples.reduce((a, b) => a + b, 0) / samples.length, 6)
      for (const [q, got] of [
        [0.5, l.p50],
        [0.9, l.p90],
        [0.99, l.p99]
      ] as const) {
        const exact = sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!
        // 1 µs buckets below 128 µs, then 128 per power of two (< 0.8 % wide)
        expect(Math.abs(got - exact)).toBeLessThanOrEqual(Math.max(0.001, exact * 0.008))
      }
    },
    { fastCheck: { numRuns: 300 } }
  )
})
