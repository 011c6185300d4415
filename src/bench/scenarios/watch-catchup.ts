/**
 * watch-catchup: events/s replaying history. First `history` puts (pipelined, not timed) to keys
 * "catchup/<i % keySpaceSize>"; then streams × watchersPerStream watchers on the prefix
 * "catchup/" from the first put's revision. Timed from the creates until every watcher received
 * all `history` events, each in increasing revision order.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { connections } from "../connections.js"
import { phase } from "../phase.js"
import { PUT, prefixEnd, putFrame, utf8, watchCreateFrame } from "../requests.js"
import { rate, Tally, Timed } from "../result.js"
import { makeResult, preload, type Scenario, watcherSet } from "../scenario.js"
import { responseRevision } from "../unary-scan.js"

const PREFIX = "catchup/"

export const watchCatchup: Scenario = (ctx) =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const value = randomBytes(s.valSize)
    const keys = Array.from({ length: Math.min(s.keySpaceSize, s.history) }, (_, i) => utf8(`${PREFIX}${i}`))
    let first = Infinity
    yield* preload(ctx, conns, s.history, {
      path: PUT,
      frame: (i) => putFrame(keys[i % keys.length]!, value),
      check: (body) => {
        const revision = responseRevision(body, 0, body.length)
        if (revision === 0) return "put answer without a revision"
        if (revision < first) first = revision
        return undefined
      }
    })
    const prefix = utf8(PREFIX)
    const create = watchCreateFrame({ key: prefix, rangeEnd: prefixEnd(prefix), startRevision: first })
    const tally = new Tally()
    const set = yield* watcherSet(
      ctx,
      { streams: s.streams, perStream: s.watchersPerStream, create: () => create },
      tally
    )
    const expected = set.total * s.history
    ctx.tracker.track("events", expected, () => set.events)
    const timed = new Timed()
    yield* phase<void>(
      {
        name: "catching up",
        stallMs: s.stallTimeoutMs,
        breakage: ctx.breakage,
        progress: () => set.events + set.answered
      },
      (control) => {
        set.notify = () => {
          if (set.answered < set.total) return
          if (set.created < set.total)
            control.fail(`only ${set.created} of ${set.total} watchers were created: ${tally.firstError ?? "?"}`)
          else if (set.events >= expected) control.finish(undefined)
        }
        set.open(conns)
      }
    )
    timed.stop()
    set.verify(s.history)
    return makeResult(ctx, {
      value: rate(set.events, timed.durationMs),
      unit: "events/s",
      higherIsBetter: true,
      count: set.events,
      ...tally.fields,
      durationMs: timed.durationMs,
      clientCpuMs: timed.cpuMs
    })
  })
