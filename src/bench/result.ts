/** What a run reports, and the error tally every scenario keeps. */
import type { LatencySummary } from "./latency.js"
import type { ScenarioName } from "./options.js"

/** What a benchmark measured: its headline figure with unit, counts, errors, timing, latency and the client's CPU. */
export interface BenchResult {
  readonly scenario: ScenarioName
  readonly endpoints: ReadonlyArray<string>
  /** every effective option of the scenario */
  readonly params: Readonly<Record<string, number | string | boolean>>
  /**
   * The headline figure: put/range ops/s; watch, watch-catchup events/s; watch-create watches/s;
   * watch-latency p99 ms; watch-idle watchers created.
   */
  readonly value: number
  /** "puts/s" | "ranges/s" | "events/s" | "watches/s" | "ms (p99)" | "watchers" */
  readonly unit: string
  readonly higherIsBetter: boolean
  /** operations or events counted (successful ones) */
  readonly count: number
  readonly errors: number
  readonly firstError?: string
  /** the timed phase only (not set-up or preload) */
  readonly durationMs: number
  readonly latencyMs?: LatencySummary
  /**
   * CPU time (user + system) this process spent during the timed phase. Against a server in
   * another process it is the bench client's own cost: compare it with durationMs to see whether
   * the client could have been the bottleneck.
   */
  readonly clientCpuMs?: number
}

/** How far a benchmark's phase has come, reported to `run`'s `onProgress`. */
export interface Progress {
  readonly done: number
  readonly total: number
  /** what is being counted: "preload", "creating watchers", "events", ... */
  readonly phase?: string
}

/** Errors seen by a scenario: how many, and the first one's message. */
export class Tally {
  errors = 0
  firstError: string | undefined

  error(message: string): void {
    this.errors++
    this.firstError ??= message
  }

  /** `firstError` as an optional field */
  get fields(): { readonly errors: number; readonly firstError?: string } {
    return this.firstError === undefined
      ? { errors: this.errors }
      : { errors: this.errors, firstError: this.firstError }
  }
}

/** A stopwatch for the timed phase: wall time and this process's CPU. */
export class Timed {
  private readonly wall0 = performance.now()
  private readonly cpu0 = process.cpuUsage()
  durationMs = 0
  cpuMs = 0

  stop(): this {
    this.durationMs = performance.now() - this.wall0
    const cpu = process.cpuUsage(this.cpu0)
    this.cpuMs = (cpu.user + cpu.system) / 1000
    return this
  }
}

/** per second, over a duration in ms (0 when nothing was timed) */
export const rate = (count: number, durationMs: number): number => (durationMs > 0 ? (count * 1000) / durationMs : 0)
