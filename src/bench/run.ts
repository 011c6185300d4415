/**
 * Running a scenario: options resolved (bad ones fail before anything connects), a progress poll
 * while it runs, and one Scope that closes every connection and stream however the run ends.
 */
import { Effect, type Scope } from "effect"
import { BenchError } from "./errors.js"
import { type BenchOptions, resolveSettings, type ScenarioName } from "./options.js"
import { ProgressTracker } from "./progress.js"
import type { BenchResult, Progress } from "./result.js"
import { makeContext, type Scenario } from "./scenario.js"
import { put } from "./scenarios/put.js"
import { range } from "./scenarios/range.js"
import { txnPut } from "./scenarios/txn-put.js"
import { watchCatchup } from "./scenarios/watch-catchup.js"
import { watchCreate } from "./scenarios/watch-create.js"
import { idleWatchers, watchIdle } from "./scenarios/watch-idle.js"
import { watchLatency } from "./scenarios/watch-latency.js"
import { watch } from "./scenarios/watch.js"

const scenarios: Record<ScenarioName, Scenario> = {
  put,
  "txn-put": txnPut,
  range,
  watch,
  "watch-latency": watchLatency,
  "watch-create": watchCreate,
  "watch-catchup": watchCatchup,
  "watch-idle": watchIdle
}

const PROGRESS_EVERY_MS = 100

/** Calls `onProgress` every 100 ms while the scope is open, and once more at its end. */
const pollProgress = (
  tracker: ProgressTracker,
  onProgress: (p: Progress) => void
): Effect.Effect<void, never, Scope.Scope> => {
  const report = () => {
    try {
      onProgress(tracker.snapshot())
    } catch {
      // a broken progress display must not break the measurement
    }
  }
  return Effect.asVoid(
    Effect.acquireRelease(
      Effect.sync(() => setInterval(report, PROGRESS_EVERY_MS)),
      (timer) =>
        Effect.sync(() => {
          clearInterval(timer)
          report()
        })
    )
  )
}

/** Runs a benchmark scenario against `options.endpoints` and measures it, reporting progress as it goes. */
export const run = (
  scenario: ScenarioName,
  options: BenchOptions,
  onProgress?: (p: Progress) => void
): Effect.Effect<BenchResult, BenchError> =>
  Effect.suspend(() => {
    const settings = resolveSettings(scenario, options)
    if (settings instanceof BenchError) return Effect.fail(settings)
    const tracker = new ProgressTracker()
    const ctx = makeContext(scenario, settings, tracker)
    return Effect.scoped(
      Effect.zipRight(
        onProgress === undefined ? Effect.void : pollProgress(tracker, onProgress),
        scenarios[scenario](ctx)
      )
    )
  })

/**
 * Idle watchers for memory measurement: opens `streams` Watch streams, creates `watchersPerStream`
 * watchers on each (distinct keys "idle/<stream>/<n>", from the current revision), waits for every
 * `created`, and keeps them open until the Scope closes. Returns how many were created.
 */
export const openIdleWatchers = (options: BenchOptions): Effect.Effect<number, BenchError, Scope.Scope> =>
  Effect.suspend(() => {
    const settings = resolveSettings("watch-idle", options)
    if (settings instanceof BenchError) return Effect.fail(settings)
    return Effect.map(idleWatchers(makeContext("watch-idle", settings, new ProgressTracker())), (idle) => idle.created)
  })
