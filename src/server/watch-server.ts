/**
 * The Watch service: etcd's serverWatchStream (v3rpc/watch.go), one per gRPC stream.
 *
 * One fiber per stream — the call's own (client cancel, deadline or server shutdown interrupts it,
 * and closing its scope closes the mvcc WatchStream, cancelling its watchers). etcd's four
 * goroutines (recvLoop, sendLoop, the channel and ctrlStream between them, the progress ticker)
 * become:
 * - recv: a 'readable' callback that reads the requests buffered and handles them in order.
 *   Create → WatchStream.watch, then a created (or created+canceled) control response; cancel →
 *   WatchStream.cancel, then a canceled response (an unknown id gets none); progress →
 *   RequestProgressAll. Control responses are queued in the stream's frame writer and written
 *   once per turn of the event loop (etcd's ctrlStream, without a queue of its own); when the
 *   stream's buffer is full, recv stops reading until 'drain' (as a full ctrlStream blocks etcd's
 *   recvLoop). The end of the inbound side (client half-close) ends only
 *   the reading: the stream keeps serving until the client cancels it, as etcd's does.
 * - send: the call's fiber takes the WatchStream's channel with `takeAll` (the pump, folded in),
 *   turns a batch into wire responses in one synchronous pass, and writes it with one wait for
 *   'drain' per batch before it takes the next. So the channel (chanBufLen 128) stays the only
 *   buffer: a slow client fills it and its watchers become victims, as in etcd.
 * - ticker (only once a watcher asked for progress_notify): a timer every interval, with a jitter
 *   of up to a tenth of it drawn once per stream, that asks for the quiet watchers' progress.
 *
 * Supervision: a defect in recv, the channel take ("pump"), send or the ticker ends the stream
 * (Internal, one error log line) and cancels its watchers; see `end` below.
 *
 * Rules of the writes (etcd's server/etcdserver/api/v3rpc/watch.go, sendLoop): a response for an id whose created response is
 * not out yet waits in `pending` and is flushed right after it; after an id's cancel response
 * nothing more is sent for it (what is left of it is dropped); a response for watch id -1
 * (requested progress) is never held. prev_kv is looked up at send time: the key's KeyValue at
 * modRevision-1, for every event that is not a create.
 */
import type * as grpc from "@grpc/grpc-js"
import { Cause, type Chunk, Deferred, Duration, Effect, Exit, type Fiber, FiberId, FiberSet, type Scope } from "effect"
import { EtcdError, Errors } from "../errors.js"
import { isCreate } from "../mvcc/key-value.js"
import type { MvccStoreShape } from "../mvcc/kv.js"
import type { EventInit, WatchCreateRequest, WatchRequest, WatchResponseInit } from "../proto/messages.js"
import type { WatchServer } from "../proto/services.js"
import type { WatchableStoreShape } from "../watch/watchable-store.js"
import { WatchError } from "../watch/errors.js"
import { WatchIdSet } from "../watch/watch-id-map.js"
import type { WatchStream } from "../watch/watch-stream.js"
import { type FilterType, toWatchId, type WatchId, type WatchResponse } from "../watch/watcher.js"
import { serviceDefinition } from "../proto/load.js"
import { type CallRunner, takeBatch } from "./grpc-bridge.js"
import { statusText } from "../auth/errors.js"
import { type AuthGuard, authInfoOf, type CallWithMetadata, needsAuth } from "./auth-guard.js"
import { frameSink } from "./grpc-raw-writer.js"
import type { MakeHeader } from "./header.js"
import { eventToPb, toNumber } from "./kv-pb.js"
import { fragmentResponse, GRPC_OVERHEAD_BYTES } from "./watch-fragments.js"
import { FrameWriter, type PrevKvLookup, WatchResponseEncoder } from "./watch-wire.js"
import { TRACE_PUT_EVENT, traceStamp } from "../debug/put-event-trace.js"
import { DEFAULT_PROGRESS_NOTIFY_INTERVAL, MIN_PROGRESS_NOTIFY_INTERVAL } from "./config.js"

export { DEFAULT_PROGRESS_NOTIFY_INTERVAL, MIN_PROGRESS_NOTIFY_INTERVAL }

/** The id of a response that belongs to no single watcher (requested progress). */
const INVALID_WATCH_ID = -1

const COMPACTED_REASON = "etcdserver: mvcc: required revision has been compacted"

/** WatchResponse's created / canceled flags (fields 3 and 4), after its header and watch_id */
const CREATED_TAIL = Uint8Array.of(0x18, 1)
const CANCELED_TAIL = Uint8Array.of(0x20, 1)

const ZERO_KEY = new Uint8Array([0])
const FROM_KEY = new Uint8Array(0)

/**
 * etcd 3.4's isWatchPermitted: the stream's credential (resolved at each create) needs READ on the
 * requested range; a refusal is a created+canceled response whose cancel_reason is the gRPC status
 * text of the error ("rpc error: code = … desc = etcdserver: …"). The range is the one etcd's
 * watch server has rewritten by then: an empty key is "\0", and a range_end of "\0" (every key
 * from the key on) has become empty — so such a watch is checked as a read of its key alone.
 */
const watchDenied = (guard: AuthGuard | undefined, call: CallWithMetadata, c: WatchCreateRequest) => {
  if (guard === undefined || !needsAuth(guard, call)) return Effect.succeed(undefined)
  const key = c.key.length === 0 ? ZERO_KEY : c.key
  const end = c.range_end.length === 1 && c.range_end[0] === 0 ? FROM_KEY : c.range_end
  return authInfoOf(guard, call).pipe(
    Effect.flatMap((ai) => Effect.succeed(guard.store.isRangePermitted(ai, key, end))),
    Effect.merge,
    Effect.map((e) => (e === undefined ? undefined : statusText(e.grpc())))
  )
}

export interface WatchServerConfig {
  /** --max-request-bytes; fragments are cut at this plus 512 KiB */
  readonly maxRequestBytes: number
  /** --experimental-watch-progress-notify-interval (at least 100 ms) */
  readonly progressNotifyInterval: Duration.DurationInput
}

export interface WatchServerDeps {
  readonly watchable: WatchableStoreShape
  readonly store: MvccStoreShape
  readonly header: MakeHeader
  readonly config: WatchServerConfig
  /** auth: a create needs READ on its range (etcd's isWatchPermitted); absent: no auth */
  readonly guard?: AuthGuard | undefined
}

/** created: a watch announced; canceled: a cancel ack; failed: a create that failed (id -1). */
type CtrlKind = "created" | "canceled" | "failed"

/** proto-loader's WatchResponse encoder, for the rare responses built as objects. */
const serializeWatchResponse = (() => {
  const serialize = serviceDefinition("Watch")["Watch"]!.responseSerialize
  return (r: WatchResponseInit): Uint8Array => serialize(r)
})()

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Clamps the configured interval to etcd's minimum. */
export const progressInterval = (d: Duration.DurationInput): Duration.Duration =>
  Duration.max(Duration.decode(d), MIN_PROGRESS_NOTIFY_INTERVAL)

export const makeWatchService = (runner: CallRunner, deps: WatchServerDeps): WatchServer => ({
  Watch: runner.bidi("Watch", (call) => serverWatchStream(call, deps))
})

/**
 * @internal exported for tests.
 * The per-stream state that etcd guards with `sws.mu` (progress, fragment; prev_kv is the mvcc
 * watcher's own flag) plus the send loop's `ids` and `pending`. JS runs one fiber at a time and every access here is synchronous, so
 * no lock is needed.
 */
export class StreamState {
  /** watch id → true when no event response went out for it since the last tick */
  readonly progress = new Map<WatchId, boolean>()
  readonly fragment = new Set<WatchId>()
  /** ids whose created response has been sent and whose cancel response has not (an array slot each) */
  readonly announced = new WatchIdSet()
  /** responses waiting for their id's created response (encoded when they go out) */
  readonly pending = new Map<WatchId, Array<WatchResponse>>()
  readonly encoder: WatchResponseEncoder
  private readonly getAt: PrevKvLookup

  constructor(
    /**
     * The mvcc stream's own view of its watchers. It changes in the same synchronous step that
     * registers or cancels a watcher, so it is never behind the responses in the channel (flags
     * recorded here by the recv side after `watch` returns could be).
     */
    readonly watchers: Pick<WatchStream, "ids" | "prevKv">,
    readonly store: Pick<MvccStoreShape, "getAt">,
    readonly header: MakeHeader,
    readonly fragmentLimit: number,
    serialize: (r: WatchResponseInit) => Uint8Array = serializeWatchResponse
  ) {
    this.encoder = new WatchResponseEncoder(header, serialize)
    this.getAt = (key, rev) => this.store.getAt(key, rev)
  }

  /** mvcc response → wire object (prev_kv looked up now, at send time); for fragmenting. */
  toWire(r: WatchResponse): WatchResponseInit {
    const o: Mutable<WatchResponseInit> = { header: this.header(r.revision) }
    if (r.watchId !== 0) o.watch_id = r.watchId
    if (r.compactRevision !== 0) {
      o.canceled = true
      o.compact_revision = r.compactRevision
    }
    const evs = r.events
    if (evs.length !== 0) {
      const out: Array<EventInit> = new Array(evs.length)
      if (this.watchers.prevKv(r.watchId)) {
        const getAt = this.store.getAt
        for (let i = 0; i < evs.length; i++) {
          const ev = evs[i]!
          out[i] = eventToPb(ev, isCreate(ev) ? undefined : getAt(ev.kv.key, ev.kv.modRevision - 1))
        }
      } else {
        for (let i = 0; i < evs.length; i++) out[i] = eventToPb(evs[i]!, undefined)
      }
      o.events = out
    }
    return o
  }

  /** One response encoded into `out` (prev_kv looked up now, at send time). */
  private send(r: WatchResponse, out: FrameWriter): void {
    this.encoder.response(out, r, this.watchers.prevKv(r.watchId) ? this.getAt : undefined)
  }

  /** One batch from the watch channel, appended to `out` in order. */
  onEvents(batch: Chunk.Chunk<WatchResponse>, out: FrameWriter): void {
    /** the live ids, read once per batch and only when needed (nothing changes within a batch) */
    let live: ReadonlySet<WatchId> | undefined
    for (const r of batch) {
      const id = r.watchId
      if (id !== INVALID_WATCH_ID && !this.announced.has(id)) {
        // Not announced yet: hold it for the created response. Not registered any more: it belongs
        // to a cancelled watcher, whose cancel response has gone or is about to go; drop it.
        live ??= new Set(this.watchers.ids())
        if (live.has(id)) {
          let held = this.pending.get(id)
          if (held === undefined) this.pending.set(id, (held = []))
          held.push(r)
        }
        continue
      }
      if (this.fragment.has(id)) {
        for (const piece of fragmentResponse(this.toWire(r), this.fragmentLimit)) this.encoder.object(out, piece)
      } else {
        this.send(r, out)
      }
      if (r.events.length > 0 && this.progress.get(id) === true) this.progress.set(id, false)
    }
  }

  /** A control response, appended to `out`, then etcd's id bookkeeping. */
  onCtrl(id: WatchId, kind: CtrlKind, response: WatchResponseInit, out: FrameWriter): void {
    this.encoder.object(out, response)
    this.afterCtrl(id, kind, out)
  }

  /** A created or canceled response framed by hand (header, watch_id, the flag: what proto-loader writes). */
  onCtrlFlag(id: WatchId, kind: "created" | "canceled", rev: number, out: FrameWriter): void {
    out.response(this.encoder.headerField(rev), id, kind === "created" ? CREATED_TAIL : CANCELED_TAIL)
    this.afterCtrl(id, kind, out)
  }

  private afterCtrl(id: WatchId, kind: CtrlKind, out: FrameWriter): void {
    if (kind === "canceled") {
      this.announced.delete(id)
      this.pending.delete(id)
    } else if (kind === "created") {
      this.announced.add(id)
      const held = this.pending.get(id)
      if (held !== undefined) {
        // flushed as they are, unfragmented (etcd sends pending responses with a plain Send)
        for (const r of held) this.send(r, out)
        this.pending.delete(id)
      }
    }
  }

  /** The progress ticker: ids to ask for a progress response; every flag is reset to true. */
  onTick(): Array<WatchId> {
    const ids: Array<WatchId> = []
    for (const [id, quiet] of this.progress) {
      if (quiet) ids.push(id)
      this.progress.set(id, true)
    }
    return ids
  }
}

/** A fiber of a watch stream stopped on a defect; the defect is its `cause`. */
export class WatchStreamDefect extends Error {
  constructor(
    readonly fiber: string,
    cause: unknown
  ) {
    super(`watch stream ${fiber} fiber: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = "WatchStreamDefect"
  }
}

/** The key range of a create request (etcd's v3rpc/watch.go, recvLoop). */
const normaliseRange = (c: WatchCreateRequest): { key: Uint8Array; end: Uint8Array | undefined } => {
  const key = c.key.byteLength === 0 ? ZERO_KEY : c.key
  const raw = c.range_end
  if (raw.byteLength === 0) return { key, end: undefined }
  if (raw.byteLength === 1 && raw[0] === 0) return { key, end: FROM_KEY }
  return { key, end: raw }
}

/** The watchable store's request for a create request starting at `startRev` (≥ 0). */
const storeWatchRequest = (c: WatchCreateRequest, startRev: number): Parameters<WatchStream["watch"]>[0] => {
  const { key, end } = normaliseRange(c)
  return {
    id: toWatchId(c.watch_id),
    key,
    end,
    startRev,
    filters: c.filters as ReadonlyArray<FilterType>,
    prevKv: c.prev_kv
  }
}

/** One Watch stream; ends when the call's fiber is interrupted, or fails when it cannot go on. */
export const serverWatchStream = (
  call: grpc.ServerDuplexStream<WatchRequest, WatchResponseInit>,
  deps: WatchServerDeps
): Effect.Effect<void, EtcdError, Scope.Scope> =>
  Effect.gen(function* () {
    const { header, store } = deps
    const ws: WatchStream = yield* deps.watchable.newWatchStream
    const state = new StreamState(ws, store, header, deps.config.maxRequestBytes + GRPC_OVERHEAD_BYTES)
    // what recv starts (a batch of requests that went async, a wait for 'drain') runs in the
    // stream's own FiberSet: interrupted with the stream's scope, never left behind it
    const runFork = yield* FiberSet.runtime(yield* FiberSet.make<unknown, never>())<never>()
    const interval = Duration.toMillis(progressInterval(deps.config.progressNotifyInterval))
    const sink = frameSink(call)
    const out = new FrameWriter()
    /** the stream's end, decided outside the send loop (recv, ticker): wakes a send loop waiting for 'drain' */
    const ended = yield* Deferred.make<never, EtcdError>()
    let endCause: Cause.Cause<EtcdError> | undefined

    /**
     * Supervision: a failure or defect of recv or the ticker (callbacks, not fibers) ends the stream
     * through `end`: the mvcc WatchStream is closed at once (its watchers leave the store and its
     * channel ends, so the send loop stops) and the call's fiber fails with the cause — for a defect
     * a WatchStreamDefect, so the bridge logs it once at error level and answers Internal (a defect's
     * status, as grpc-go's recovery interceptor answers a handler panic; clientv3 treats Internal as
     * transient and resumes its watches on a new stream). A defect of the send loop (or of the
     * channel take, "pump") fails the call's fiber the same way.
     */
    const end = (cause: Cause.Cause<EtcdError>): void => {
      if (endCause !== undefined) return
      // what was answered before the end goes out before it, as etcd's sendLoop sends it
      if (flushing !== undefined) flush()
      endCause = cause
      Deferred.unsafeDone(ended, Exit.failCause(cause))
      ws.unsafeClose()
    }
    const defect = (part: string, cause: unknown): Cause.Cause<never> => Cause.die(new WatchStreamDefect(part, cause))

    // ---- control responses: queued by recv, written once per turn (the send loop's only other writer)
    /** reasons recv waits (a request's Effect went async, the stream's buffer is full) */
    let recvHolds = 0
    const hold = (wait: Effect.Effect<unknown>): void => {
      recvHolds++
      runFork(wait).addObserver(() => {
        recvHolds--
        recv()
      })
    }

    /** queued behind whatever the send loop left in `out`; recv writes them once per batch it read */
    const ctrl = (id: WatchId, kind: CtrlKind, response: WatchResponseInit): Effect.Effect<void> =>
      Effect.sync(() => state.onCtrl(id, kind, response, out))
    /**
     * Once per turn of the event loop, so the responses to requests read in one turn (one per
     * 'readable' when a client writes each on its own) go out in one write. Like etcd's ctrlStream
     * filling up, recv stops reading until the client takes what was sent.
     */
    let flushing: ReturnType<typeof setImmediate> | undefined
    const flush = (): void => {
      flushing = undefined
      if (endCause === undefined && out.count > 0 && sink.write(out)) hold(sink.drain)
    }
    const flushCtrl = (): void => {
      if (flushing === undefined && out.count > 0) flushing = setImmediate(flush)
    }

    // ---- progress ticker: a timer, started once a watcher asks for progress_notify ----------
    let ticker: ReturnType<typeof setTimeout> | undefined
    const startTicker = (): void => {
      if (ticker !== undefined) return
      const jitter = Math.floor(Math.random() * Math.max(1, Math.floor(interval / 10)))
      const tick = () => {
        try {
          for (const id of state.onTick()) ws.unsafeRequestProgress(id)
          ticker = setTimeout(tick, interval + jitter)
        } catch (e) {
          end(defect("ticker", e))
        }
      }
      ticker = setTimeout(tick, interval + jitter)
    }

    /** etcd's answer to a create it refuses: created and canceled at once, with the reason */
    const createFailed = (reason: string): WatchResponseInit => ({
      header: header(ws.rev()),
      watch_id: INVALID_WATCH_ID,
      created: true,
      canceled: true,
      cancel_reason: reason
    })

    /** the stream's per-watcher options, once the watcher is registered */
    const onCreated = (id: WatchId, c: WatchCreateRequest): void => {
      if (c.progress_notify) state.progress.set(id, true)
      if (c.fragment) state.fragment.add(id)
      if (c.progress_notify) startTicker()
    }

    const create = (c: WatchCreateRequest): Effect.Effect<void> =>
      Effect.flatMap(watchDenied(deps.guard, call, c), (denied) => {
        if (denied !== undefined) {
          return ctrl(INVALID_WATCH_ID, "failed", createFailed(denied))
        }
        const startRev = toNumber(c.start_revision)
        if (startRev < 0) {
          return ctrl(INVALID_WATCH_ID, "failed", createFailed(COMPACTED_REASON))
        }
        return ws.watch(storeWatchRequest(c, startRev)).pipe(
          Effect.matchEffect({
            onFailure: (e) => ctrl(INVALID_WATCH_ID, "failed", createFailed(e.message)),
            onSuccess: (id) => {
              onCreated(id, c)
              const response: Mutable<WatchResponseInit> = { header: header(ws.rev()), created: true }
              if (id !== 0) response.watch_id = id
              return ctrl(id, "created", response)
            }
          })
        )
      })

    const cancel = (rawId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const id = toWatchId(rawId)
        return ws.cancel(id).pipe(
          Effect.matchEffect({
            // an unknown id gets no response ("mvcc: watcher does not exist" is swallowed)
            onFailure: () => Effect.void,
            onSuccess: () => {
              state.progress.delete(id)
              state.fragment.delete(id)
              const response: Mutable<WatchResponseInit> = { header: header(ws.rev()), canceled: true }
              if (id !== 0) response.watch_id = id
              return ctrl(id, "canceled", response)
            }
          })
        )
      })

    /**
     * A create or cancel handled as plain calls, when no credential has to be resolved (no auth)
     * and the stream offers them: the same steps as `create` and `cancel`, without an Effect per
     * request. False: the request goes the Effect way.
     */
    const handleNow = (req: WatchRequest): boolean => {
      if (req.request_union === "create_request") {
        const c = req.create_request
        if (c == null || ws.unsafeWatch === undefined) return false
        if (deps.guard !== undefined && needsAuth(deps.guard, call)) return false
        const startRev = toNumber(c.start_revision)
        if (startRev < 0) return false
        let id: WatchId
        try {
          id = ws.unsafeWatch(storeWatchRequest(c, startRev))
        } catch (e) {
          if (!(e instanceof WatchError)) throw e
          state.onCtrl(INVALID_WATCH_ID, "failed", createFailed(e.message), out)
          return true
        }
        onCreated(id, c)
        state.onCtrlFlag(id, "created", ws.rev(), out)
        return true
      }
      if (req.request_union === "cancel_request") {
        const c = req.cancel_request
        if (c == null || ws.unsafeCancel === undefined) return false
        const id = toWatchId(c.watch_id)
        // an unknown id gets no response ("mvcc: watcher does not exist" is swallowed)
        if (!ws.unsafeCancel(id)) return true
        state.progress.delete(id)
        state.fragment.delete(id)
        state.onCtrlFlag(id, "canceled", ws.rev(), out)
        return true
      }
      return false
    }

    const handle = (req: WatchRequest): Effect.Effect<void> => {
      switch (req.request_union) {
        case "create_request":
          return req.create_request == null ? Effect.void : create(req.create_request)
        case "cancel_request":
          return req.cancel_request == null ? Effect.void : cancel(req.cancel_request.watch_id)
        case "progress_request":
          // etcd ≥ 3.5.13: answered (watch id -1, through the watch channel, so after every event
          // already queued) only when every watcher of the stream is synced; otherwise dropped.
          return req.progress_request == null ? Effect.void : Effect.asVoid(ws.requestProgressAll)
        default:
          // an empty or unknown request type is ignored; the stream stays open
          return Effect.void
      }
    }

    // ---- recv: a 'readable' callback, requests handled in order -----------------------------
    let backlog: Array<WatchRequest> = []
    let next = 0
    let inboundEnded = false
    /** a request whose Effect went async; interrupted if the stream ends first */
    let waiting: Fiber.RuntimeFiber<void> | undefined
    /** false when the request's Effect failed (the stream is ending) */
    const handled = (exit: Exit.Exit<void>): boolean => {
      if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return true
      end(defect("recv", Cause.squash(exit.cause)))
      return false
    }
    /**
     * Reads and handles requests until none is buffered. Each batch's Effect runs at once and is
     * synchronous in practice; a request that goes async holds the next ones (and the reading: the
     * client is throttled by HTTP/2 flow control) until it is done. The end of the inbound side
     * (client half-close) ends only the reading: the stream keeps serving until the client
     * cancels it, as etcd's does.
     */
    const recv = (): void => {
      try {
        read()
        flushCtrl()
      } catch (e) {
        end(defect("recv", e))
      }
    }
    const read = (): void => {
      while (recvHolds === 0 && endCause === undefined) {
        // what needs no Effect is handled at once, in order
        while (next < backlog.length && handleNow(backlog[next]!)) next++
        if (next < backlog.length) {
          // one fiber for the rest of the batch read, not one per request (a create is a few µs of work)
          const requests = next === 0 ? backlog : backlog.slice(next)
          next = backlog.length
          const fiber = runFork(Effect.forEach(requests, handle, { discard: true }))
          const exit = fiber.unsafePoll()
          if (exit !== null) {
            if (!handled(exit)) return
            continue
          }
          recvHolds++
          waiting = fiber
          fiber.addObserver((exit) => {
            waiting = undefined
            recvHolds--
            if (handled(exit)) recv()
          })
          return
        }
        if (inboundEnded) return
        const batch = takeBatch(call)
        if (batch === undefined) return
        if (batch === null) {
          inboundEnded = true
          return
        }
        // a request etcd cannot decode ends the stream with grpc-go's INTERNAL status
        if (batch instanceof EtcdError) return end(Cause.fail(batch))
        backlog = batch
        next = 0
      }
    }
    // a broken read ends the stream as canceled
    const onError = () => end(Cause.fail(Errors.watchCanceled()))
    call.on("readable", recv)
    call.on("end", recv)
    call.on("close", recv)
    call.on("error", onError)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        call.removeListener("readable", recv)
        call.removeListener("end", recv)
        call.removeListener("close", recv)
        call.removeListener("error", onError)
        if (ticker !== undefined) clearTimeout(ticker)
        ticker = undefined
        if (flushing !== undefined) clearImmediate(flushing)
        waiting?.unsafeInterruptAsFork(FiberId.none)
      })
    )
    recv()

    // ---- send: the call's own fiber takes the watch channel and writes each batch ------------
    const drain = Effect.raceFirst(sink.drain, Deferred.await(ended))
    while (true) {
      const [batch, done] = yield* Effect.catchAllDefect(ws.takeAll, (e) => Effect.failCause(defect("pump", e)))
      if (endCause !== undefined) return yield* Effect.failCause(endCause)
      // the watch stream was closed under us: the server is stopping
      if (done) return yield* Effect.fail(Errors.stopped())
      if (TRACE_PUT_EVENT) for (const r of batch) if (r.events.length > 0) traceStamp("taken", r.revision)
      try {
        state.onEvents(batch, out)
      } catch (e) {
        return yield* Effect.failCause(defect("send", e))
      }
      // the whole batch in a few large writes; wait for 'drain' once when the stream's buffer is full
      const full = out.count > 0 && sink.write(out)
      if (TRACE_PUT_EVENT) for (const r of batch) if (r.events.length > 0) traceStamp("written", r.revision)
      if (full) yield* drain
    }
  })
