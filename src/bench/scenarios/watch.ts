/**
 * watch: events/s of a fan-out — streams × watchersPerStream watchers on one key, putTotal puts
 * (see fan-out.ts). Timed from the first put sent until the last expected event arrived; exactly
 * watchers × successful puts events must arrive, in increasing revision order per watcher.
 */
import { Effect } from "effect"
import { fanOut } from "../fan-out.js"
import { rate } from "../result.js"
import { makeResult, type Scenario } from "../scenario.js"

export const watch: Scenario = (ctx) =>
  Effect.map(fanOut(ctx, { latency: false }), (run) =>
    makeResult(ctx, {
      value: rate(run.events, run.timed.durationMs),
      unit: "events/s",
      higherIsBetter: true,
      count: run.events,
      ...run.tally.fields,
      durationMs: run.timed.durationMs,
      clientCpuMs: run.timed.cpuMs
    })
  )
