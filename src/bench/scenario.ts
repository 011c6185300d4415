/**
 * What every scenario shares: its run context, the result record, and the phases built from the
 * plain-JS load pieces (a closed loop of unary calls, a set of watchers) with their lifetimes in
 * the run's Scope.
 */
import { Effect, type Scope } from "effect"
import { BenchError } from "./errors.js"
import type { GrpcConnection } from "../h2/grpc-client.js"
import { reportedOptions, type ScenarioName, type Settings } from "./options.js"
import { Breakage, phase } from "./phase.js"
import type { ProgressTracker } from "./progress.js"
import { ClosedLoop, type UnaryLoad } from "./requesters.js"
import type { LatencyHistogram } from "./latency.js"
import { type BenchResult, rate, Tally, Timed } from "./result.js"
import { WatcherSet, type WatcherSetSpec } from "./watchers.js"

export interface RunContext {
  readonly scenario: ScenarioName
  readonly settings: Settings
  readonly breakage: Breakage
  readonly tracker: ProgressTracker
}

export type Scenario = (ctx: RunContext) => Effect.Effect<BenchResult, BenchError, Scope.Scope>

export const makeContext = (scenario: ScenarioName, settings: Settings, tracker: ProgressTracker): RunContext => ({
  scenario,
  settings,
  breakage: new Breakage(),
  tracker
})

/** The result record: scenario, endpoints and reported parameters filled in from the context. */
export const makeResult = (
  ctx: RunContext,
  fields: Omit<BenchResult, "scenario" | "endpoints" | "params">
): BenchResult => {
  const params: Record<string, number | string | boolean> = {}
  for (const name of reportedOptions[ctx.scenario]) params[name] = ctx.settings[name] as number | boolean
  return { scenario: ctx.scenario, endpoints: ctx.settings.endpoints, params, ...fields }
}

/** Runs a closed loop to its end as one phase. */
export const loopPhase = (ctx: RunContext, name: string, loop: ClosedLoop): Effect.Effect<void, BenchError> =>
  phase<void>(
    { name, stallMs: ctx.settings.stallTimeoutMs, breakage: ctx.breakage, progress: () => loop.answered },
    (control) => {
      loop.start(() => control.finish(undefined))
      return () => loop.stop()
    }
  )

/**
 * The timed part of a unary throughput scenario (put, range): runs the closed loop as one phase,
 * then the result — answered-OK calls per second, with the latency per call.
 */
export const timedClosedLoop = (
  ctx: RunContext,
  names: { readonly phase: string; readonly progress: string; readonly unit: string },
  loop: ClosedLoop,
  tally: Tally,
  latency: LatencyHistogram
): Effect.Effect<BenchResult, BenchError> =>
  Effect.suspend(() => {
    ctx.tracker.track(names.progress, loop.total, () => loop.answered)
    const timed = new Timed()
    return Effect.map(loopPhase(ctx, names.phase, loop), () => {
      timed.stop()
      const summary = latency.summary()
      return makeResult(ctx, {
        value: rate(loop.ok, timed.durationMs),
        unit: names.unit,
        higherIsBetter: true,
        count: loop.ok,
        ...tally.fields,
        durationMs: timed.durationMs,
        ...(summary === undefined ? {} : { latencyMs: summary }),
        clientCpuMs: timed.cpuMs
      })
    })
  })

/** Requests in flight while preloading (not timed): enough to keep any server's write batching busy. */
export const PRELOAD_IN_FLIGHT = 256

/**
 * Writes `n` requests before the timed phase; any failure fails the run (a measurement on a
 * half-loaded store would mean nothing).
 */
export const preload = (
  ctx: RunContext,
  conns: ReadonlyArray<GrpcConnection>,
  n: number,
  load: UnaryLoad
): Effect.Effect<void, BenchError> => {
  const tally = new Tally()
  const loop = new ClosedLoop(conns, PRELOAD_IN_FLIGHT, n, load, tally)
  ctx.tracker.track("preload", n, () => loop.answered)
  return loopPhase(ctx, "preload", loop).pipe(
    Effect.zipRight(
      Effect.suspend(() =>
        tally.errors === 0
          ? Effect.void
          : Effect.fail(
              new BenchError({ reason: `preload: ${tally.errors} of ${n} requests failed: ${tally.firstError}` })
            )
      )
    )
  )
}

/** A WatcherSet whose streams are reset when the scope closes. */
export const watcherSet = (
  ctx: RunContext,
  spec: WatcherSetSpec,
  tally: Tally
): Effect.Effect<WatcherSet, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new WatcherSet(spec, tally, ctx.breakage)),
    (set) => Effect.sync(() => set.close())
  )

/**
 * Opens the set's streams, writes every create and waits for every answer. Fails when some
 * create was refused: the scenario would not measure what it says.
 */
export const createWatchers = (
  ctx: RunContext,
  set: WatcherSet,
  conns: ReadonlyArray<GrpcConnection>,
  tally: Tally
): Effect.Effect<void, BenchError> => {
  ctx.tracker.track("creating watchers", set.total, () => set.answered)
  return phase<void>(
    {
      name: "creating watchers",
      stallMs: ctx.settings.stallTimeoutMs,
      breakage: ctx.breakage,
      progress: () => set.answered
    },
    (control) => {
      set.notify = () => {
        if (set.answered === set.total) control.finish(undefined)
      }
      set.open(conns)
    }
  ).pipe(
    Effect.zipRight(
      Effect.suspend(() =>
        set.created === set.total
          ? Effect.void
          : Effect.fail(
              new BenchError({
                reason: `only ${set.created} of ${set.total} watchers were created: ${tally.firstError ?? "?"}`
              })
            )
      )
    )
  )
}
