/**
 * put: `clients` requesters, each sending its next PutRequest when the previous one was answered,
 * `total` puts in all, spread over `conns` connections. Keys are random indexes below keySpaceSize,
 * zero-padded to keySize bytes; every value is the same valSize random bytes (as etcd's tool).
 * Timed from the first request to the last answer; latency per request.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { connections } from "../connections.js"
import { LatencyHistogram } from "../latency.js"
import { keyOf } from "../options.js"
import { ClosedLoop } from "../requesters.js"
import { framesByIndex, PUT, putFrame, utf8 } from "../requests.js"
import { Tally } from "../result.js"
import { type Scenario, timedClosedLoop } from "../scenario.js"

export const put: Scenario = (ctx) =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const value = randomBytes(s.valSize)
    const tally = new Tally()
    const latency = new LatencyHistogram()
    const frameOf = framesByIndex(s.keySpaceSize, (k) => putFrame(utf8(keyOf(k, s.keySize)), value))
    const loop = new ClosedLoop(
      conns,
      s.clients,
      s.total,
      {
        path: PUT,
        frame: () => frameOf(Math.floor(Math.random() * s.keySpaceSize))
      },
      tally,
      latency
    )
    return yield* timedClosedLoop(ctx, { phase: "put", progress: "puts", unit: "puts/s" }, loop, tally, latency)
  })
