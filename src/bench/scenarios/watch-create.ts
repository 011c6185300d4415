/**
 * watch-create: watches created per second on one stream — `total` WatchCreateRequests for distinct
 * keys ("watch-create/<i>"), encoded beforehand and written as fast as the stream takes them (in
 * 64 KiB batches), timed from the first write to the last `created` answer.
 */
import { Effect } from "effect"
import { connections } from "../connections.js"
import { phase } from "../phase.js"
import { utf8, watchCreateFrame } from "../requests.js"
import { rate, Tally, Timed } from "../result.js"
import { makeResult, type Scenario, watcherSet } from "../scenario.js"

export const watchCreate: Scenario = (ctx) =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, 1, ctx.breakage, s.stallTimeoutMs)
    const frames = Array.from({ length: s.total }, (_, i) => watchCreateFrame({ key: utf8(`watch-create/${i}`) }))
    const tally = new Tally()
    const set = yield* watcherSet(ctx, { streams: 1, perStream: s.total, create: (_, n) => frames[n]! }, tally)
    ctx.tracker.track("creating watchers", s.total, () => set.answered)
    const timed = new Timed()
    yield* phase<void>(
      { name: "creating watchers", stallMs: s.stallTimeoutMs, breakage: ctx.breakage, progress: () => set.answered },
      (control) => {
        set.notify = () => {
          if (set.answered === set.total) control.finish(undefined)
        }
        set.open(conns)
      }
    )
    timed.stop()
    return makeResult(ctx, {
      value: rate(set.created, timed.durationMs),
      unit: "watches/s",
      higherIsBetter: true,
      count: set.created,
      ...tally.fields,
      durationMs: timed.durationMs,
      clientCpuMs: timed.cpuMs
    })
  })
