/**
 * txn-put: as put, each request a Txn with no compares and one put in its success branch (etcd's
 * `benchmark txn-put --txn-ops 1`): `clients` requesters, `total` txns over `conns` connections,
 * keys random below keySpaceSize, one valSize value. Timed from the first request to the last
 * answer; latency per request.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { connections } from "../connections.js"
import { LatencyHistogram } from "../latency.js"
import { keyOf } from "../options.js"
import { ClosedLoop } from "../requesters.js"
import { framesByIndex, TXN, txnPutFrame, utf8 } from "../requests.js"
import { Tally } from "../result.js"
import { type Scenario, timedClosedLoop } from "../scenario.js"

export const txnPut: Scenario = (ctx) =>
  Effect.gen(function* () {
    const s = ctx.settings
    const conns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const value = randomBytes(s.valSize)
    const tally = new Tally()
    const latency = new LatencyHistogram()
    const frameOf = framesByIndex(s.keySpaceSize, (k) => txnPutFrame(utf8(keyOf(k, s.keySize)), value))
    const loop = new ClosedLoop(
      conns,
      s.clients,
      s.total,
      { path: TXN, frame: () => frameOf(Math.floor(Math.random() * s.keySpaceSize)) },
      tally,
      latency
    )
    return yield* timedClosedLoop(ctx, { phase: "txn-put", progress: "txns", unit: "txns/s" }, loop, tally, latency)
  })
