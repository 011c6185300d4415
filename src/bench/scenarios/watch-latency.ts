/**
 * watch-latency: put → event latency of a fan-out at a fixed put rate (see fan-out.ts): each put
 * carries its send time, each event's latency is its receive time minus that, for every event of
 * every watcher. The headline is the p99 in ms (lower is better).
 */
import { Effect } from "effect"
import { fanOut } from "../fan-out.js"
import { makeResult, type Scenario } from "../scenario.js"

export const watchLatency: Scenario = (ctx) =>
  Effect.map(fanOut(ctx, { latency: true }), (run) => {
    const summary = run.latency?.summary()
    return makeResult(ctx, {
      value: summary?.p99 ?? 0,
      unit: "ms (p99)",
      higherIsBetter: false,
      count: run.events,
      ...run.tally.fields,
      durationMs: run.timed.durationMs,
      ...(summary === undefined ? {} : { latencyMs: summary }),
      clientCpuMs: run.timed.cpuMs
    })
  })
