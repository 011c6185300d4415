/**
 * range: loads keySpaceSize keys first (not timed), then `clients` requesters each doing
 * single-key linearizable Ranges of random loaded keys, `total` in all. Each answer must carry
 * exactly one kv, or it counts as an error. Timed from the first Range to the last answer.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { connections } from "../connections.js"
import { LatencyHistogram } from "../latency.js"
import { keyOf } from "../options.js"
import { ClosedLoop } from "../requesters.js"
import { framesByIndex, PUT, putFrame, RANGE, rangeFrame, utf8 } from "../requests.js"
import { Tally } from "../result.js"
import { preload, type Scenario, timedClosedLoop } from "../scenario.js"
import { rangeKvCount } from "../unary-scan.js"

export const range: Scenario = (ctx) =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const value = randomBytes(s.valSize)
    yield* preload(ctx, conns, s.keySpaceSize, { path: PUT, frame: (i) => putFrame(utf8(keyOf(i, s.keySize)), value) })
    const tally = new Tally()
    const latency = new LatencyHistogram()
    const frameOf = framesByIndex(s.keySpaceSize, (k) => rangeFrame(utf8(keyOf(k, s.keySize))))
    const loop = new ClosedLoop(
      conns,
      s.clients,
      s.total,
      {
        path: RANGE,
        frame: () => frameOf(Math.floor(Math.random() * s.keySpaceSize)),
        check: (body) => {
          const kvs = rangeKvCount(body, 0, body.length)
          return kvs === 1 ? undefined : `range of a loaded key returned ${kvs} kvs`
        }
      },
      tally,
      latency
    )
    return yield* timedClosedLoop(ctx, { phase: "range", progress: "ranges", unit: "ranges/s" }, loop, tally, latency)
  })
