/**
 * Medians, ratios and targets for bench:compare, and the numbers' text form. Pure functions.
 */
import type { ScenarioSpec, Target } from "./compare-scenarios.js"

/** The etcd releases bench:compare can run (3.4.23 from Debian, 3.6 and 3.7 from benchmarks/go). */
export const ETCDS = ["etcd-3.4", "etcd-3.6", "etcd-3.7"] as const
export type EtcdName = (typeof ETCDS)[number]
export const OURS = "etcd-effect"
export type SystemName = EtcdName | typeof OURS
export const SYSTEMS: ReadonlyArray<SystemName> = [...ETCDS, OURS]
export const isEtcd = (s: SystemName): s is EtcdName => s !== OURS

/** One measurement: one scenario, one system, one round, on a fresh server. */
export interface Sample {
  readonly round: number
  /** the headline figure; absent when the run failed */
  readonly value?: number
  readonly error?: string
  /** the timed phase (ms) */
  readonly durationMs?: number
  /** what else is worth keeping: event counts, RSS before/after, effective parameters */
  readonly detail?: Readonly<Record<string, unknown>>
}

export interface Summary {
  /** each system's median over its successful rounds */
  readonly medians: Readonly<Partial<Record<SystemName, number>>>
  /** the etcd with the better median (the one ours is compared with) */
  readonly bestEtcd?: EtcdName
  /** that etcd's median */
  readonly etcd?: number
  readonly ours?: number
  /** ours / the better etcd */
  readonly ratio?: number
  /** undefined: no target (informational) or nothing to judge */
  readonly met?: boolean
}

/** The median of the finite values (the mean of the middle two for an even count); undefined when none. */
export const median = (values: ReadonlyArray<number>): number | undefined => {
  const xs = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (xs.length === 0) return undefined
  const mid = xs.length >> 1
  return xs.length % 2 === 1 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2
}

/** etcd-effect / etcd; undefined when either is missing or etcd's is not positive. */
export const ratioOf = (ours: number | undefined, etcd: number | undefined): number | undefined =>
  ours === undefined || etcd === undefined || !(etcd > 0) || !Number.isFinite(ours) ? undefined : ours / etcd

/**
 * Whether a target is met: a ratio target by ours / the better etcd, an absolute one (e.g. idle
 * RSS ≤ 70 MB) by our own median.
 */
export const targetMet = (
  target: Target | undefined,
  ratio: number | undefined,
  ours?: number
): boolean | undefined => {
  if (target === undefined) return undefined
  const x = target.absolute !== undefined ? ours : ratio
  const bound = target.absolute ?? target.ratio
  if (x === undefined || bound === undefined) return undefined
  return target.op === ">=" ? x >= bound : x <= bound
}

export const valuesOf = (samples: ReadonlyArray<Sample>): Array<number> =>
  samples.flatMap((s) => (s.value !== undefined && s.error === undefined ? [s.value] : []))

/**
 * Medians over the successful rounds of each system; the better etcd (higher or lower median, as
 * the scenario reads); ours / that etcd; and whether it meets the target.
 */
export const summarize = (
  spec: Pick<ScenarioSpec, "target" | "higherIsBetter">,
  samples: Readonly<Partial<Record<SystemName, ReadonlyArray<Sample>>>>
): Summary => {
  const medians: Partial<Record<SystemName, number>> = {}
  for (const system of SYSTEMS) {
    const m = median(valuesOf(samples[system] ?? []))
    if (m !== undefined) medians[system] = m
  }
  let bestEtcd: EtcdName | undefined
  for (const e of ETCDS) {
    const m = medians[e]
    if (m === undefined) continue
    const best = bestEtcd === undefined ? undefined : medians[bestEtcd]!
    if (best === undefined || (spec.higherIsBetter ? m > best : m < best)) bestEtcd = e
  }
  const e = bestEtcd === undefined ? undefined : medians[bestEtcd]
  const o = medians[OURS]
  const ratio = ratioOf(o, e)
  const met = targetMet(spec.target, ratio, o)
  return {
    medians,
    ...(bestEtcd === undefined ? {} : { bestEtcd, etcd: e! }),
    ...(o === undefined ? {} : { ours: o }),
    ...(ratio === undefined ? {} : { ratio }),
    ...(met === undefined ? {} : { met })
  }
}

export const formatTarget = (target: Target | undefined, unit = ""): string => {
  if (target === undefined) return "none (informational)"
  const op = target.op === ">=" ? "≥" : "≤"
  return target.absolute !== undefined
    ? `${op} ${formatValue(target.absolute)}${unit === "" ? "" : ` ${unit}`} (ours)`
    : `${op} ${target.ratio}×`
}

export const formatMet = (met: boolean | undefined): string => (met === undefined ? "–" : met ? "✓" : "✗")

/** A headline figure: thousands separated, fewer decimals the larger it is. */
export const formatValue = (v: number | undefined): string => {
  if (v === undefined || !Number.isFinite(v)) return "–"
  const abs = Math.abs(v)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/** A short form for the per-round columns: 3.99M, 12.3k, 812, 4.71. */
export const formatCompact = (v: number | undefined): string => {
  if (v === undefined || !Number.isFinite(v)) return "–"
  const abs = Math.abs(v)
  const three = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))
  if (abs >= 1e6) return `${three(v / 1e6)}M`
  if (abs >= 1e4) return `${three(v / 1e3)}k`
  return abs >= 1000 ? v.toFixed(0) : three(v)
}

export const formatRatio = (r: number | undefined): string =>
  r === undefined ? "–" : r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)

/** Every round's value in round order; a failed round shows as "error". */
export const formatRounds = (samples: ReadonlyArray<Sample>): string =>
  samples.length === 0
    ? "–"
    : [...samples]
        .sort((a, b) => a.round - b.round)
        .map((s) => (s.error !== undefined || s.value === undefined ? "error" : formatCompact(s.value)))
        .join(", ")
