/**
 * watch-idle: opens streams × watchersPerStream idle watchers on distinct keys
 * ("idle/<stream>/<n>"), reports how many were created and how long creating them took, and closes
 * them. (bench:compare keeps them open with `openIdleWatchers` to read the server's memory.)
 */
import { Effect, type Scope } from "effect"
import { connections } from "../connections.js"
import type { BenchError } from "../errors.js"
import { utf8, watchCreateFrame } from "../requests.js"
import { Tally, Timed } from "../result.js"
import { createWatchers, makeResult, type RunContext, type Scenario, watcherSet } from "../scenario.js"

export interface IdleWatchers {
  readonly created: number
  readonly tally: Tally
  readonly timed: Timed
}

/** Creates the idle watchers; they stay until the scope closes. */
export const idleWatchers = (ctx: RunContext): Effect.Effect<IdleWatchers, BenchError, Scope.Scope> =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const frames = Array.from({ length: s.streams }, (_, stream) =>
      Array.from({ length: s.watchersPerStream }, (_, n) => watchCreateFrame({ key: utf8(`idle/${stream}/${n}`) }))
    )
    const tally = new Tally()
    const set = yield* watcherSet(
      ctx,
      { streams: s.streams, perStream: s.watchersPerStream, create: (stream, n) => frames[stream]![n]! },
      tally
    )
    const timed = new Timed()
    yield* createWatchers(ctx, set, conns, tally)
    timed.stop()
    return { created: set.created, tally, timed }
  })

export const watchIdle: Scenario = (ctx) =>
  Effect.map(idleWatchers(ctx), (idle) =>
    makeResult(ctx, {
      value: idle.created,
      unit: "watchers",
      higherIsBetter: true,
      count: idle.created,
      ...idle.tally.fields,
      durationMs: idle.timed.durationMs,
      clientCpuMs: idle.timed.cpuMs
    })
  )
