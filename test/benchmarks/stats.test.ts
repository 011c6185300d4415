/**
 * bench:compare's arithmetic: medians over successful rounds, the better etcd in the scenario's
 * direction, the ratio ours / that etcd, and whether it meets a target (a ratio, or an absolute
 * bound on our figure); the scenarios, their two instruments' loads, and the selection --only does.
 */
import { describe, expect, it } from "vitest"
import { runsOn, scenarios, selectScenarios } from "../../benchmarks/compare-scenarios.js"
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
  it("absolute targets judge our own figure, not the ratio", () => {
    expect(targetMet({ op: "<=", absolute: 70 }, 5, 69.9)).toBe(true)
    expect(targetMet({ op: "<=", absolute: 70 }, 0.1, 70.1)).toBe(false)
    expect(targetMet({ op: "<=", absolute: 70 }, 0.1, undefined)).toBeUndefined()
  })
  it("summarize: medians of the successful rounds only, against the one etcd", () => {
    const s = summarize(
      { target: { op: ">=", ratio: 1 }, higherIsBetter: true },
      {
        "etcd-3.4": [ok(1, 100), ok(2, 300), ok(3, 200)],
        "etcd-effect": [ok(1, 150), failed(2), { round: 3, value: 1e9, error: "3 errors" }]
      }
    )
    expect(s).toEqual({
      medians: { "etcd-3.4": 200, "etcd-effect": 150 },
      bestEtcd: "etcd-3.4",
      etcd: 200,
      ours: 150,
      ratio: 0.75,
      met: false
    })
  })
  it("summarize: the better etcd is the higher median for throughputs, the lower for latency", () => {
    const samples = {
      "etcd-3.4": [ok(1, 4), ok(2, 6)],
      "etcd-3.6": [ok(1, 8), ok(2, 10)],
      "etcd-effect": [ok(1, 2), ok(2, 3)]
    }
    const up = summarize({ target: { op: ">=", ratio: 2 }, higherIsBetter: true }, samples)
    expect([up.bestEtcd, up.etcd, up.ratio, up.met]).toEqual(["etcd-3.6", 9, 2.5 / 9, false])
    const down = summarize({ target: { op: "<=", ratio: 0.5 }, higherIsBetter: false }, samples)
    expect([down.bestEtcd, down.etcd, down.ratio, down.met]).toEqual(["etcd-3.4", 5, 0.5, true])
  })
  it("summarize: an etcd with no successful round is not the better one", () => {
    const s = summarize(
      { higherIsBetter: true },
      { "etcd-3.4": [ok(1, 2)], "etcd-3.6": [failed(1)], "etcd-effect": [ok(1, 4)] }
    )
    expect(s).toEqual({
      medians: { "etcd-3.4": 2, "etcd-effect": 4 },
      bestEtcd: "etcd-3.4",
      etcd: 2,
      ours: 4,
      ratio: 2
    })
  })
  it("summarize: all rounds of the etcds failed → no ratio, no verdict", () => {
    const s = summarize(
      { target: { op: ">=", ratio: 1 }, higherIsBetter: true },
      { "etcd-3.4": [failed(1)], "etcd-effect": [ok(1, 2)] }
    )
    expect(s).toEqual({ medians: { "etcd-effect": 2 }, ours: 2 })
  })
  it("summarize: an absolute target is judged without any etcd", () => {
    const s = summarize({ target: { op: "<=", absolute: 70 }, higherIsBetter: false }, { "etcd-effect": [ok(1, 65)] })
    expect(s.met).toBe(true)
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
  it("every issue-29 target is there with its direction", () => {
    const t = Object.fromEntries(scenarios.map((s) => [s.id, s.target]))
    expect(t["put"]).toEqual({ op: ">=", ratio: 1.5 })
    expect(t["txn-put"]).toEqual({ op: ">=", ratio: 2 })
    expect(t["range"]).toEqual({ op: ">=", ratio: 2 })
    expect(t["watch-latency-100"]).toEqual({ op: "<=", ratio: 0.5 })
    expect(t["watch-latency-1000"]).toEqual({ op: "<=", ratio: 0.5 })
    expect(t["watch"]).toEqual({ op: ">=", ratio: 3 })
    expect(t["serve-idle"]).toEqual({ op: "<=", absolute: 70 })
    // kept from issues 6 and 12
    expect(t["watch-create"]).toEqual({ op: ">=", ratio: 1 })
    expect(t["watch-catchup"]).toEqual({ op: ">=", ratio: 2 })
    expect(t["watch-idle"]).toEqual({ op: "<=", ratio: 1 })
    expect(t["watch-latency-cold"]).toBeUndefined()
    expect(t["watch-get"]).toBeUndefined()
    for (const s of scenarios) {
      if (s.target !== undefined) expect(s.higherIsBetter).toBe(s.target.op === ">=")
      // a "run" has at least one instrument; the RSS rows have none of their own
      if (s.kind === "run") expect(runsOn(s, "bench") || runsOn(s, "etcd-tool")).toBe(true)
      else expect([runsOn(s, "bench"), runsOn(s, "etcd-tool")]).toEqual([true, false])
      // every timed scenario but the cold one is measured after a warm-up of the same load
      if (s.kind === "run" && s.bench !== undefined) expect(s.warmUp !== undefined).toBe(s.id !== "watch-latency-cold")
    }
    const cold = scenarios.find((s) => s.id === "watch-latency-cold")!
    const warm = scenarios.find((s) => s.id === "watch-latency-1000")!
    expect([cold.bench, cold.options, cold.unit, cold.tool?.args]).toEqual([
      warm.bench,
      warm.options,
      warm.unit,
      warm.tool?.args
    ])
    expect(cold.tool?.warmUp).toBeUndefined()
  })
  it("the tool's loads match the bench's where both run them", () => {
    const spec = (id: string) => scenarios.find((s) => s.id === id)!
    const arg = (args: ReadonlyArray<string> | undefined, flag: string) => args?.[args.indexOf(flag) + 1]
    for (const id of ["put", "txn-put", "range"]) {
      const args = spec(id).tool?.args
      expect(arg(args, "--clients")).toBe(String(spec(id).options.clients))
      expect(arg(args, "--total")).toBe(String(spec(id).options.total))
    }
    for (const id of ["watch-latency-100", "watch-latency-1000"]) {
      const { tool, options } = spec(id)
      expect(arg(tool?.args, "--put-rate")).toBe(String(options.putRate))
      expect(arg(tool?.args, "--put-total")).toBe(String(options.putTotal))
      expect(arg(tool?.args, "--watchers-per-stream")).toBe(String(options.watchersPerStream))
    }
    expect(spec("range").tool?.seedKey).toBe("bench-range-key")
    expect(spec("range").tool?.args).toContain("bench-range-key")
  })
  it("--only selects in table order and rejects unknown names", () => {
    const picked = selectScenarios("put, watch")
    expect(typeof picked === "string" ? picked : picked.map((s) => s.id)).toEqual(["watch", "put"])
    expect(selectScenarios(undefined)).toBe(scenarios)
    expect(selectScenarios("put,nope")).toMatch(/unknown scenario nope/)
  })
})
