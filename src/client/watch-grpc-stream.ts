/**
 * One gRPC Watch stream shared by every watch with the same metadata (clientv3's
 * `watchGRPCStream`): registration queue, dispatch by watch id, fragment reassembly, progress
 * broadcast, cancellation, and reconnect-and-resume.
 *
 * Structure: `run` is the stream's fiber (owned by the Watcher's FiberMap); it loops over
 * connection sessions with a Schedule backoff in between. Within a session, grpc-js callbacks call
 * `dispatch` synchronously: the per-response path has no fiber hop and no Effect, only plain
 * mutations of this object, and one hand-over per watch per event-loop turn to its consumer.
 * Registration and unregistration are synchronous too, so the state below is only touched on the
 * JS thread between awaits — the job clientv3's `run` goroutine and its channels do.
 *
 * Invariants:
 * - At most one create request is in flight: the head of `resuming`. Created responses are matched
 *   to it in FIFO order (the server answers creates in request order on one stream).
 * - A watch closed while its create is in flight stays as an `undefined` hole at the head, so the
 *   created response still lines up; its watch id is then canceled at once.
 * - On reconnect every live watch is re-created from its own `nextRev` (see WatcherStream).
 */
import type * as grpc from "@grpc/grpc-js"
import { Cause, Effect, Either, Exit, Schedule } from "effect"
import { GrpcCode } from "../errors.js"
import type { ClientConnectionShape } from "./connection.js"
import { fromServiceError } from "./connection.js"
import { openBidiCall, type RawBidiCall } from "./grpc-call.js"
import { decodeWatchResponse, encodeCancelRequest, encodeProgressRequest } from "./watch-codec.js"
import { EtcdError, fromCancelReason, type WatchError, watchCompacted, WatchNoLeader } from "./watch-errors.js"
import type { WatchSpec } from "./watch-options.js"
import type { WatchBuffer } from "./watch-buffer.js"
import type { WatchResponse, WireWatchResponse } from "./watch-response.js"
import { isProgressNotify } from "./watch-response.js"
import { WatcherStream } from "./watcher-stream.js"

const WATCH_PATH = "/etcdserverpb.Watch/Watch"
const NO_LEADER = "etcdserver: no leader"

/** How one connection session ended. */
type SessionOutcome =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Retry"; readonly error: EtcdError; readonly progressed: boolean }
  | { readonly _tag: "Fatal"; readonly error: WatchError }

type WatchCall = RawBidiCall

/**
 * clientv3's `isHaltErr` plus ErrNoLeader: Unavailable and Internal are transient; a require-leader
 * stream's "no leader" is final; everything else is final too. Canceled and OK are transient here:
 * we never cancel a live stream ourselves, so either means a proxy or a restarting server dropped it.
 */
const classify = (status: grpc.StatusObject, progressed: boolean): SessionOutcome => {
  switch (status.code) {
    case GrpcCode.Unavailable:
      if (status.details === NO_LEADER) return { _tag: "Fatal", error: new WatchNoLeader({ message: NO_LEADER }) }
      return { _tag: "Retry", error: fromServiceError(status), progressed }
    case GrpcCode.Internal:
    case GrpcCode.Canceled:
      return { _tag: "Retry", error: fromServiceError(status), progressed }
    case GrpcCode.OK:
      return {
        _tag: "Retry",
        error: new EtcdError({ code: GrpcCode.Unavailable, message: "etcdclient: watch stream ended by the server" }),
        progressed
      }
    default:
      return { _tag: "Fatal", error: fromServiceError(status) }
  }
}

export interface WatchGrpcStreamOptions {
  readonly connection: ClientConnectionShape
  readonly metadata: Readonly<Record<string, string>>
  readonly retrySchedule: Schedule.Schedule<unknown>
  /** pause reading the gRPC stream while any watch buffers this many responses; undefined = unbounded */
  readonly bufferLimit: number | undefined
  /** called once when the stream stops accepting watches */
  readonly onClosed: (stream: WatchGrpcStream) => void
}

export class WatchGrpcStream {
  /** established watches by watch id */
  private readonly substreams = new Map<number, WatcherStream>()
  /** watches waiting for their created response; the head's create is in flight */
  private resuming: Array<WatcherStream | undefined> = []
  private call: WatchCall | undefined
  /** partial responses of fragmented watch ids */
  private readonly fragments = new Map<number, WireWatchResponse>()
  /** ids we sent a cancel for on this connection (clientv3's cancelSet) */
  private readonly cancelSet = new Set<number>()
  private settle: ((outcome: SessionOutcome) => void) | undefined
  private progressed = false
  private progressWanted = false
  private paused = false
  /** watches with responses to hand over at the end of this event-loop turn */
  private readonly dirty = new Set<WatcherStream>()
  private flushScheduled = false
  /** no longer accepts watches: idle, failed or shut down */
  closed = false

  constructor(private readonly options: WatchGrpcStreamOptions) {}

  // ---- watches come and go (synchronous) ----

  register(spec: WatchSpec, buffer: WatchBuffer<WatchResponse, WatchError>): WatcherStream {
    const ws = new WatcherStream(spec, buffer, (w) => this.markPending(w))
    this.resuming.push(ws)
    // Head of the queue: nothing else in flight, register it now (else on the next created).
    if (this.resuming.length === 1 && this.call !== undefined) this.call.write(ws.createRequest())
    return ws
  }

  /** The consumer is done with `ws`: stop delivering and cancel it on the server. */
  unregister(ws: WatcherStream): void {
    ws.finish()
    if (ws.id !== -1 && this.substreams.get(ws.id) === ws) {
      this.substreams.delete(ws.id)
      if (this.liveCount() > 0) this.sendCancel(ws.id)
    } else {
      const at = this.resuming.indexOf(ws)
      if (at >= 0) this.resuming[at] = undefined
    }
    // The last watch gone: end the stream (closing it cancels every server-side watcher at once).
    if (this.liveCount() === 0) this.becomeIdle()
    else this.maybeResume()
  }

  /** clientv3 RequestProgress: sent at once if connected, else right after reconnecting. */
  requestProgress(): void {
    if (this.call !== undefined) this.call.write(encodeProgressRequest())
    else this.progressWanted = true
  }

  private liveCount(): number {
    let n = this.substreams.size
    for (const ws of this.resuming) if (ws !== undefined) n++
    return n
  }

  private becomeIdle(): void {
    if (this.closed) return
    this.closed = true
    this.options.onClosed(this)
    this.settle?.({ _tag: "Idle" })
  }

  private sendCancel(id: number): void {
    this.cancelSet.add(id)
    this.call?.write(encodeCancelRequest(id))
  }

  /** Drops holes at the head of the queue; the new head (if any) is the next to register. */
  private nextResume(): WatcherStream | undefined {
    while (this.resuming.length > 0) {
      const head = this.resuming[0]
      if (head !== undefined) return head
      this.resuming.shift()
    }
    return undefined
  }

  // ---- delivery and flow control ----

  private markPending(ws: WatcherStream): void {
    this.dirty.add(ws)
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(this.flush)
  }

  /** End of the event-loop turn: hand every watch its batch; pause reading if one is too far behind. */
  private readonly flush = (): void => {
    this.flushScheduled = false
    const limit = this.options.bufferLimit
    for (const ws of this.dirty) {
      ws.flush()
      if (limit !== undefined && !this.paused && this.call !== undefined && ws.buffered() >= limit) {
        this.paused = true
        this.call.pause()
      }
    }
    this.dirty.clear()
  }

  /** After a consumer took from its buffer: resume reading once every buffer is below half the limit. */
  maybeResume(): void {
    const limit = this.options.bufferLimit
    if (!this.paused || limit === undefined) return
    for (const ws of this.substreams.values()) if (ws.buffered() >= limit / 2) return
    this.paused = false
    this.call?.resume()
  }

  // ---- responses (synchronous, per gRPC message) ----

  private dispatch(resp: WireWatchResponse): void {
    if (resp.created) return this.onCreated(resp)
    if (resp.canceled) return this.onCanceled(resp)
    if (resp.watchId === -1) {
      // A requested progress notification covers every watch registered on this stream.
      if (isProgressNotify(resp)) for (const ws of this.substreams.values()) ws.deliver(resp)
      return
    }
    let whole = resp
    const partial = this.fragments.get(resp.watchId)
    if (partial !== undefined) {
      for (const e of resp.events) partial.events.push(e)
      if (resp.fragment) return
      this.fragments.delete(resp.watchId)
      partial.fragment = false
      whole = partial
    } else if (resp.fragment) {
      this.fragments.set(resp.watchId, resp)
      return
    }
    const ws = this.substreams.get(whole.watchId)
    if (ws !== undefined) ws.deliver(whole)
    else if (!this.cancelSet.has(whole.watchId)) this.sendCancel(whole.watchId) // unknown id: not ours
  }

  private onCreated(resp: WireWatchResponse): void {
    const head = this.resuming.shift()
    if (head === undefined) {
      // Its watch was closed while the create was in flight: cancel what the server made.
      if (resp.watchId !== -1 && !resp.canceled) this.sendCancel(resp.watchId)
    } else if (resp.watchId === -1 || resp.canceled) {
      head.finish(fromCancelReason(resp.cancelReason))
      if (this.liveCount() === 0) this.becomeIdle()
    } else {
      head.id = resp.watchId
      this.substreams.set(resp.watchId, head)
      head.created(resp)
    }
    const next = this.nextResume()
    if (next !== undefined) this.call?.write(next.createRequest())
  }

  private onCanceled(resp: WireWatchResponse): void {
    this.fragments.delete(resp.watchId)
    const ws = this.substreams.get(resp.watchId)
    if (ws === undefined) {
      this.cancelSet.delete(resp.watchId) // the answer to our own cancel
      return
    }
    this.substreams.delete(resp.watchId)
    if (resp.compactRevision !== 0n) {
      ws.finish(watchCompacted(resp.compactRevision, resp.header))
      // etcd keeps a compacted watcher registered until the client cancels it.
      if (this.liveCount() > 0) this.sendCancel(resp.watchId)
    } else {
      ws.finish(fromCancelReason(resp.cancelReason))
    }
    if (this.liveCount() === 0) this.becomeIdle()
  }

  // ---- connection sessions ----

  /** Opens a Watch call, re-registers every live watch on it, and waits for it to end. */
  private session(): Effect.Effect<SessionOutcome> {
    return Effect.async<SessionOutcome>((resume) => {
      if (this.closed || this.liveCount() === 0) return resume(Effect.succeed({ _tag: "Idle" }))
      const { connection, metadata } = this.options
      let settled = false
      const settle = (outcome: SessionOutcome) => {
        if (settled) return
        settled = true
        if (this.call === call) this.call = undefined
        this.settle = undefined
        call.cancel()
        resume(Effect.succeed(outcome))
      }
      const call: WatchCall = openBidiCall(connection.client, WATCH_PATH, connection.metadata(metadata), {
        onMessage: (bytes) => {
          if (settled) return
          this.progressed = true
          let resp: WireWatchResponse
          try {
            resp = decodeWatchResponse(bytes)
          } catch (error) {
            // As grpc-js does for a message it cannot parse: fail the call (and reconnect).
            return settle({
              _tag: "Retry",
              error: new EtcdError({
                code: GrpcCode.Internal,
                message: `Response message parsing error: ${String(error)}`
              }),
              progressed: this.progressed
            })
          }
          try {
            this.dispatch(resp)
          } catch (defect) {
            settled = true
            this.call = undefined
            this.settle = undefined
            call.cancel()
            resume(Effect.die(defect))
          }
        },
        onStatus: (status) => settle(classify(status, this.progressed))
      })
      this.settle = settle
      this.call = call
      this.progressed = false
      this.paused = false
      this.fragments.clear()
      this.cancelSet.clear()
      // Every live watch re-registers, the pending ones first, each from its own next revision.
      const live: Array<WatcherStream> = []
      for (const ws of this.resuming) if (ws !== undefined && !ws.closed) live.push(ws)
      for (const ws of this.substreams.values()) {
        ws.id = -1
        live.push(ws)
      }
      this.substreams.clear()
      this.resuming = live
      const head = this.nextResume()
      if (head !== undefined) call.write(head.createRequest())
      if (this.progressWanted) {
        this.progressWanted = false
        call.write(encodeProgressRequest())
      }
      return Effect.sync(() => settle({ _tag: "Idle" }))
    })
  }

  /** The stream's fiber: sessions until idle or a final error, with the retry schedule in between. */
  readonly run: Effect.Effect<void> = Effect.gen(this, function* () {
    const driver = yield* Schedule.driver(this.options.retrySchedule)
    while (true) {
      const outcome = yield* this.session()
      if (outcome._tag === "Idle") return
      if (outcome._tag === "Fatal") return this.failAll(outcome.error)
      if (outcome.progressed) yield* driver.reset
      const next = yield* Effect.either(driver.next(undefined))
      if (Either.isLeft(next)) return this.failAll(outcome.error) // the schedule gave up
    }
  }).pipe(Effect.onExit((exit) => Effect.sync(() => this.shutdown(exit))))

  private failAll(error: WatchError): void {
    this.closeWith(Exit.fail(error))
  }

  private shutdown(exit: Exit.Exit<void>): void {
    // Interrupted (client closed) or idle: watches end normally. A defect is passed on.
    this.closeWith(Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause) ? exit : Exit.void)
  }

  private closeWith(exit: Exit.Exit<void, WatchError>): void {
    if (!this.closed) {
      this.closed = true
      this.options.onClosed(this)
    }
    const call = this.call
    this.call = undefined
    call?.cancel()
    for (const ws of this.substreams.values()) this.finishWith(ws, exit)
    for (const ws of this.resuming) if (ws !== undefined) this.finishWith(ws, exit)
    this.substreams.clear()
    this.resuming = []
  }

  private finishWith(ws: WatcherStream, exit: Exit.Exit<void, WatchError>): void {
    ws.finishWith(exit)
  }
}
