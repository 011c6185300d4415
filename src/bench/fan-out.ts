/**
 * The fan-out both `watch` and `watch-latency` measure: streams × watchersPerStream watchers on ONE
 * key ("watch-key"), all created before the clock starts; then one putter on its own connection
 * writes putTotal puts to that key — pipelined, 64 in flight, when putRate is 0; at putRate per
 * second otherwise. The phase ends when every put was answered and every watcher has an event per
 * successful put (a put's answer may come after its events: no order between the two is assumed).
 *
 * With `latency`, each put's value starts with its send time (process.hrtime.bigint(), 8 bytes
 * big-endian) and every event's delivery latency is recorded, per event per watcher.
 */
import { Effect, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { connections } from "./connections.js"
import type { BenchError } from "./errors.js"
import { LatencyHistogram } from "./latency.js"
import { PacedLoop } from "./paced.js"
import { phase } from "./phase.js"
import { ClosedLoop, type UnaryLoad } from "./requesters.js"
import { PUT, putFrame, utf8, watchCreateFrame } from "./requests.js"
import { Tally, Timed } from "./result.js"
import { createWatchers, type RunContext, watcherSet } from "./scenario.js"
import type { WatchScanner } from "./watch-scan.js"

/** Puts in flight when putRate is 0: enough to keep etcd's batching full, few enough to be a real rate. */
export const PIPELINED_PUTS = 64

export const WATCH_KEY = "watch-key"

export interface FanOutRun {
  readonly events: number
  readonly expectedEvents: number
  readonly tally: Tally
  readonly timed: Timed
  readonly latency: LatencyHistogram | undefined
}

const TWO_32 = 4294967296

export const fanOut = (
  ctx: RunContext,
  options: { readonly latency: boolean }
): Effect.Effect<FanOutRun, BenchError, Scope.Scope> =>
  Effect.gen(function* () {
    const s = ctx.settings
    const watchConns = yield* connections(s.endpoints, s.conns, ctx.breakage, s.stallTimeoutMs)
    const putConns = yield* connections(s.endpoints, 1, ctx.breakage, s.stallTimeoutMs)
    const tally = new Tally()
    const key = utf8(WATCH_KEY)
    const create = watchCreateFrame({ key, prevKv: s.prevKv })
    const latency = options.latency ? new LatencyHistogram() : undefined
    const set = yield* watcherSet(
      ctx,
      {
        streams: s.streams,
        perStream: s.watchersPerStream,
        create: () => create,
        wantValues: options.latency,
        ...(latency === undefined
          ? {}
          : { onEvents: (scanner: WatchScanner, buf: Uint8Array) => recordLatencies(scanner, buf, latency, tally) })
      },
      tally
    )
    yield* createWatchers(ctx, set, watchConns, tally)

    const value = randomBytes(s.valSize)
    const fixed = putFrame(key, value)
    const load: UnaryLoad = options.latency
      ? {
          path: PUT,
          frame: () => {
            value.writeBigUInt64BE(process.hrtime.bigint(), 0)
            return putFrame(key, value) // copies value: the next put may rewrite it
          }
        }
      : { path: PUT, frame: () => fixed }
    const putter =
      s.putRate === 0
        ? new ClosedLoop(putConns, PIPELINED_PUTS, s.putTotal, load, tally)
        : new PacedLoop(putConns[0]!, s.putRate, s.putTotal, load, tally)
    ctx.tracker.track("events", set.total * s.putTotal, () => set.events)

    const timed = new Timed()
    yield* phase<void>(
      {
        name: "delivering events",
        stallMs: s.stallTimeoutMs,
        breakage: ctx.breakage,
        progress: () => set.events + putter.answered
      },
      (control) => {
        const check = () => {
          if (putter.done && set.events >= set.total * putter.ok) control.finish(undefined)
        }
        set.notify = check
        putter.start(check)
        return () => putter.stop()
      }
    )
    timed.stop()
    set.verify(putter.ok)
    return { events: set.events, expectedEvents: set.total * putter.ok, tally, timed, latency }
  })

/** One receive time per message; each event's send time is the first 8 bytes of its value. */
const recordLatencies = (scanner: WatchScanner, buf: Uint8Array, latency: LatencyHistogram, tally: Tally): void => {
  const now = Number(process.hrtime.bigint())
  for (let i = 0; i < scanner.events; i++) {
    const at = scanner.valueStarts[i]!
    if (at < 0 || scanner.valueLengths[i]! < 8) {
      tally.error("an event's value carries no send time")
      continue
    }
    const hi = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0
    const lo = ((buf[at + 4]! << 24) | (buf[at + 5]! << 16) | (buf[at + 6]! << 8) | buf[at + 7]!) >>> 0
    latency.record((now - (hi * TWO_32 + lo)) / 1e6)
  }
}
