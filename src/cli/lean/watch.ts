/**
 * `watch` on the lean path: one Watch stream on the load generator's HTTP/2 client, printed by the
 * full program's printer (commands/watch-output.ts), resuming across lost connections as the
 * client does (watcher-stream.ts: from the last event's revision + 1, a progress notification's
 * revision + 1, or a start-at-0 watch's created revision; clientv3's backoff, 1 ms ×1.25 up to
 * 100 ms, for ever).
 *
 * A server that ends the call with a transient status (a graceful stop's Unavailable "etcdserver:
 * server stopped") is a lost connection too. Whatever is not a plain event stream — the watch
 * refused or canceled (compaction, permissions), a fragment, the server ending the call with any
 * other status — is handed to the full program: the command line again with `--rev` set to where
 * this one stopped, so it prints from there exactly what the full program prints (etcdctl's cancel
 * messages, exit code 1).
 */
import type { GrpcConnection } from "../../h2/grpc-client.js"
import { keyRange } from "../../client/key-range.js"
import { grpcMessage } from "../../h2/grpc-message-prefix.js"
import { decodeWatchResponse, encodeCreateRequest } from "../../client/watch-codec.js"
import { isProgressNotify, type WireWatchResponse } from "../../client/watch-response.js"
import { printResponse } from "../commands/watch-output.js"
import type { LeanCommand } from "./argv.js"
import { connect } from "./connect.js"
import { fail } from "./unary.js"

const WATCH_PATH = "/etcdserverpb.Watch/Watch"
const NO_LEADER = "etcdserver: no leader"

/**
 * How a call's end is taken, as the client takes it (watch-grpc-stream.ts, clientv3's `isHaltErr`):
 * the connection breaking, Unavailable (a server stopping: "etcdserver: server stopped"), Internal,
 * Canceled and OK are transient, so the watch resumes; anything else (and a require-leader stream's
 * "no leader") is the full program's to report.
 */
const ended = (code: number, message: string): Outcome => {
  switch (code) {
    case 14: // Unavailable
      return message === NO_LEADER ? "handover" : "lost"
    case 0: // OK
    case 1: // Canceled
    case 13: // Internal
      return "lost"
    default:
      return "handover"
  }
}

type Watch = Extract<LeanCommand, { _tag: "watch" }>

/** How a session on one connection ended. */
type Outcome = "lost" | "handover" | "stopped"

/**
 * Runs the watch until SIGINT / SIGTERM: undefined. Or the command line the full program must run
 * (the first connection failed, or a handover).
 */
export const runWatch = async (c: Watch): Promise<ReadonlyArray<string> | undefined> => {
  const print = printResponse(c.global.settings)
  const a = c.args
  const range = keyRange(a.key, { prefix: a.prefix, rangeEnd: a.rangeEnd })
  let nextRev = a.revision
  let deliveredRev = a.revision > 0n ? a.revision - 1n : 0n
  let stopped = false
  let current: GrpcConnection | undefined
  let wake: (() => void) | undefined
  const stop = () => {
    stopped = true
    current?.close()
    wake?.()
  }
  // kept until exit once stopped: a second signal while closing must not kill the process either
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  const detach = () => {
    process.removeListener("SIGINT", stop)
    process.removeListener("SIGTERM", stop)
  }
  const handover = (): ReadonlyArray<string> => {
    detach()
    return nextRev > 0n ? [`--rev=${nextRev}`, ...c.withoutRev] : c.withoutRev
  }

  const onResponse = (resp: WireWatchResponse, watchId: { id: number }): Outcome | undefined => {
    if (resp.created) {
      if (resp.watchId === -1 || resp.canceled) return "handover"
      watchId.id = resp.watchId
      if (nextRev === 0n) nextRev = resp.header.revision
      return undefined
    }
    if (resp.canceled || resp.fragment || resp.compactRevision !== 0n) return "handover"
    if (resp.watchId !== watchId.id) return undefined
    let events = resp.events
    if (events.length > 0) {
      if (events[0]!.kv.modRevision <= deliveredRev) {
        const after = deliveredRev
        events = events.filter((e) => e.kv.modRevision > after)
        if (events.length === 0) return undefined
      }
      const last = events[events.length - 1]!.kv.modRevision
      deliveredRev = last
      if (last + 1n > nextRev) nextRev = last + 1n
      print({ header: resp.header, events, created: false, progressNotify: false })
      return undefined
    }
    if (!isProgressNotify(resp)) return undefined
    if (resp.header.revision + 1n > nextRev) nextRev = resp.header.revision + 1n
    print({ header: resp.header, events, created: false, progressNotify: true })
    return undefined
  }

  const session = (connection: GrpcConnection): Promise<Outcome> =>
    new Promise((resolve) => {
      let settled = false
      const settle = (outcome: Outcome) => {
        if (settled) return
        settled = true
        wake = undefined
        connection.close()
        resolve(outcome)
      }
      wake = () => settle("stopped")
      const watchId = { id: -1 }
      const stream = connection.bidi(WATCH_PATH, {
        onMessage: (buf, start, end) => {
          if (settled) return
          let outcome: Outcome | undefined
          try {
            // a copy: keys and values are views of it, and the read buffer is reused
            outcome = onResponse(decodeWatchResponse(buf.slice(start, end)), watchId)
          } catch {
            outcome = "lost" // as the client does with a message it cannot parse: reconnect
          }
          if (outcome !== undefined) settle(outcome)
        },
        // the connection's own failure (refused, reset, GOAWAY) reaches the call as UNAVAILABLE
        // "<path>: <reason>" (h2/grpc-client.ts); a status the server ended the call with is
        // taken as the client takes it
        onClose: (code, message) => settle(ended(code, message))
      })
      stream.write(
        grpcMessage(
          encodeCreateRequest({
            key: range.key,
            rangeEnd: range.rangeEnd,
            startRevision: nextRev,
            progressNotify: a.progressNotify,
            filters: [],
            prevKv: a.prevKv,
            fragment: false
          })
        )
      )
    })

  const first = await connect(c.global.endpoint, c.global.settings.dialTimeoutMs)
  if (first === undefined) return handover()
  if (first === "timeout") {
    detach()
    fail("context deadline exceeded")
    return undefined
  }
  if (stopped) {
    first.close()
    return undefined
  }
  let connection: GrpcConnection | undefined = first
  let delay = 1
  while (!stopped) {
    if (connection !== undefined) {
      current = connection
      const outcome = await session(connection)
      current = undefined
      if (outcome === "handover") return handover()
      if (outcome === "stopped") break
      delay = 1
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay)
      wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    wake = undefined
    delay = Math.min(delay * 1.25, 100)
    if (stopped) break
    const next = await connect(c.global.endpoint, 5000)
    connection = typeof next === "object" ? next : undefined
    if (stopped) connection?.close()
  }
  return undefined
}
