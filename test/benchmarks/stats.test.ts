/**
 * bench:compare's arithmetic: medians over successful rounds, the ratio ours / etcd, and whether
 * it meets a target in the scenario's direction; the scenario selection --only does.
 */
import { describe, expect, it } from "vitest"
import { scenarios, selectScenarios } from "../../benchmarks/compare-scenarios.js"
import {
  formatCompact,
  formatRounds,
  formatValue,
  median,
  ratioOf,
  type Sample,
  summarize,
  targetMet
} from "../../benchmarks/compare-stats.js"

const ok = (round: number, value: number): Sample => ({ round, value })
const failed = (round: number): Sample => ({ round, error: "boom" })

describe("median", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([7])).toBe(7)
    expect(median([])).toBeUndefined()
  })
  it("ignores non-finite values and does not reorder its input", () => {
    const xs = [5, Number.NaN, 1, Number.POSITIVE_INFINITY, 3]
    expect(median(xs)).toBe(3)
    expect(xs[0]).toBe(5)
  })
})

describe("ratio and target", () => {
  it("ratio is ours / etcd, undefined without both or with etcd at 0", () => {
    expect(ratioOf(6, 3)).toBe(2)
    expect(ratioOf(undefined, 3)).toBeUndefined()
    expect(ratioOf(3, undefined)).toBeUndefined()
    expect(ratioOf(3, 0)).toBeUndefined()
  })
  it("≥ targets are met at or above, ≤ targets at or below", () => {
    expect(targetMet({ op: ">=", ratio: 1 }, 1)).toBe(true)
    expect(targetMet({ op: ">=", ratio: 2 }, 1.99)).toBe(false)
    expect(targetMet({ op: "<=", ratio: 1 }, 0.5)).toBe(true)
    expect(targetMet({ op: "<=", ratio: 1 }, 1.01)).toBe(false)
    expect(targetMet(undefined, 5)).toBeUndefined()
    expect(targetMet({ op: ">=", ratio: 1 }, undefined)).toBeUndefined()
  })
  it("summarize: medians of the successful rounds only", () => {
    const s = summarize(
      { target: { op: ">=", ratio: 1 } },
      [ok(1, 100), ok(2, 300), ok(3, 200)],
      [ok(1, 150), failed(2), { round: 3, value: 1e9, error: "3 errors" }]
    )
    expect(s).toEqual({ etcd: 200, ours: 150, ratio: 0.75, met: false })
  })
  it("summarize: lower is better", () => {
    const s = summarize({ target: { op: "<=", ratio: 1 } }, [ok(1, 5), ok(2, 6)], [ok(1, 2), ok(2, 3)])
    expect(s.ratio).toBeCloseTo(2.5 / 5.5)
    expect(s.met).toBe(true)
  })
  it("summarize: all rounds of one system failed → no ratio, no verdict", () => {
    const s = summarize({ target: { op: ">=", ratio: 1 } }, [failed(1)], [ok(1, 2)])
    expect(s).toEqual({ ours: 2 })
  })
  it("summarize: informational (no target) has a ratio but no verdict", () => {
    expect(summarize({}, [ok(1, 2)], [ok(1, 4)])).toEqual({ etcd: 2, ours: 4, ratio: 2 })
  })
})

describe("formatting", () => {
  it("values and compact values", () => {
    expect(formatValue(4_012_345.6)).toBe("4,012,346")
    expect(formatValue(12.345)).toBe("12.3")
    expect(formatValue(4.711)).toBe("4.71")
    expect(formatValue(undefined)).toBe("–")
    expect(formatCompact(3_990_000)).toBe("3.99M")
    expect(formatCompact(12_345)).toBe("12.3k")
    expect(formatCompact(4_321)).toBe("4321")
    expect(formatCompact(812.4)).toBe("812")
  })
  it("rounds in round order, failures shown", () => {
    expect(formatRounds([ok(2, 20), failed(3), ok(1, 10)])).toBe("10.0, 20.0, error")
  })
})

describe("scenarios", () => {
  it("every issue-6 target is there with its direction", () => {
    const t = Object.fromEntries(scenarios.map((s) => [s.id, s.target]))
    expect(t["watch"]).toEqual({ op: ">=", ratio: 1 })
    expect(t["watch-latency"]).toEqual({ op: "<=", ratio: 1 })
    expect(t["watch-create"]).toEqual({ op: ">=", ratio: 1 })
    expect(t["watch-catchup"]).toEqual({ op: ">=", ratio: 2 })
    expect(t["put"]).toEqual({ op: ">=", ratio: 1 })
    expect(t["watch-idle"]).toEqual({ op: "<=", ratio: 1 })
    expect(t["range"]).toBeUndefined()
    expect(t["watch-latency-cold"]).toBeUndefined()
    for (const s of scenarios) {
      if (s.target !== undefined) expect(s.higherIsBetter).toBe(s.target.op === ">=")
      expect(s.kind === "run").toBe(s.bench !== undefined)
      // every timed scenario but the cold one is measured after a warm-up of the same load
      if (s.kind === "run") expect(s.warmUp !== undefined).toBe(s.id !== "watch-latency-cold")
    }
    const cold = scenarios.find((s) => s.id === "watch-latency-cold")!
    const warm = scenarios.find((s) => s.id === "watch-latency")!
    expect([cold.bench, cold.options, cold.unit]).toEqual([warm.bench, warm.options, warm.unit])
  })
  it("--only selects in table order and rejects unknown names", () => {
    const picked = selectScenarios("put, watch")
    expect(typeof picked === "string" ? picked : picked.map((s) => s.id)).toEqual(["watch", "put"])
    expect(selectScenarios(undefined)).toBe(scenarios)
    expect(selectScenarios("put,nope")).toMatch(/unknown scenario nope/)
  })
})
