/**
 * grpc-js ↔ Effect: every stream is a fiber in the server's FiberSet runtime; a unary call is one
 * only while it waits (the fast path: `unary` below), and a write answered from a PendingWrite
 * (mvcc/pending-write.ts) is never one: its answer comes from the store's durability callback.
 *
 * - Client cancel and deadline → the call's fiber is interrupted, which replaces Go's ctx.Done().
 *   grpc-js emits 'cancelled' when the client resets the stream, but not when the deadline passes:
 *   it answers DEADLINE_EXCEEDED on its own and lets the handler run on. So each call with a
 *   deadline also gets a timer (`grpc-timeout` read by grpc-js, `getDeadline()`) that interrupts
 *   its fiber when the deadline passes, as Go's context does. Nothing more is written to a
 *   cancelled call.
 * - Outcome → status: success → the response (unary) or `end()` (streams: OK after buffered writes
 *   are flushed); EtcdError → its gRPC code and etcd's exact text; a defect → Internal (logged);
 *   interruption that the client did not cause (shutdown) → Unavailable "etcdserver: server stopped",
 *   which clients treat as "try again / elsewhere".
 * - A handler never throws into grpc-js: everything runs inside `Effect.suspend`.
 * - Writes honour back-pressure: `writeAll` writes a batch and waits for 'drain' once when the
 *   stream's buffer is above its high-water mark.
 * - Shutdown (`CallRunner.shutdown`): new calls are refused, streams are interrupted at once, unary
 *   calls get a grace period to finish and are then interrupted too.
 * - Metrics (`CallMetrics`): each call is counted where it starts and where its status is decided
 *   (go-grpc-prometheus' started/handled); a call the client dropped counts as Canceled, one that
 *   ends past its deadline as DeadlineExceeded (what grpc-js has answered by then).
 */
import type * as grpc from "@grpc/grpc-js"
import { Cause, Duration, Effect, Exit, FiberId, FiberSet, type Fiber, Option, Runtime, type Scope } from "effect"
import { EtcdError, Errors, GrpcCode } from "../errors.js"
import { PendingWrite } from "../mvcc/pending-write.js"
import { type RpcTracing, tracedUnary } from "./rpc-span.js"
import { MalformedRequest } from "./unmarshal-check.js"

/** What a failed call ends with: grpc-js' status object shape. */
export interface CallStatus {
  readonly code: number
  readonly details: string
}

const stoppedStatus = (): CallStatus => {
  const e = Errors.stopped()
  return { code: e.code, details: e.message }
}

/** The status a call's failure cause maps to. */
export const causeToStatus = <E>(cause: Cause.Cause<E>): CallStatus => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    if (e instanceof EtcdError) return { code: e.code, details: e.message }
    return { code: GrpcCode.Unknown, details: describe(e) }
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    return { code: GrpcCode.Internal, details: `etcd-effect: internal error: ${describe(defect.value)}` }
  }
  return stoppedStatus()
}

const describe = (u: unknown): string =>
  typeof u === "object" && u !== null && "message" in u && typeof u.message === "string" ? u.message : String(u)

const serviceError = (s: CallStatus): Partial<grpc.StatusObject> => ({ code: s.code, details: s.details })

/** Logs defects (bugs) with the method name; expected failures are the caller's business. */
const logDefects =
  (method: string) =>
  <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.tapErrorCause(effect, (cause) =>
      Cause.isDie(cause) ? Effect.logError(`${method}: handler defect`, cause) : Effect.void
    )

/** The minimal surface of a grpc-js server call the bridge uses. */
interface CancellableCall {
  readonly cancelled: boolean
  once(event: "cancelled", listener: () => void): unknown
  removeListener(event: "cancelled", listener: () => void): unknown
  getDeadline?(): Date | number
}

/**
 * One method's call counters, resolved once when its handler is made. Both are called once per
 * call, synchronously, and must stay plain (an increment): they run on every rpc.
 */
export interface MethodMetrics {
  /** a call arrived */
  onStart(): void
  /** its status is decided (a GrpcCode), whether or not the client is still there to get it */
  onEnd(code: number): void
}

/** Where the runner counts calls (metrics/grpc-metrics.ts); `noCallMetrics` counts nothing. */
export interface CallMetrics {
  readonly method: (name: string) => MethodMetrics
}

const uncounted: MethodMetrics = { onStart() {}, onEnd() {} }
export const noCallMetrics: CallMetrics = { method: () => uncounted }

const MAX_TIMER_MS = 2 ** 31 - 1

/** The call's deadline in epoch ms; Infinity when the client set none. */
const deadlineMs = (call: CancellableCall): number => {
  const deadline = call.getDeadline?.() ?? Infinity
  return deadline instanceof Date ? deadline.getTime() : deadline
}

const deadlinePassed = (call: CancellableCall): boolean => {
  const ms = deadlineMs(call)
  return ms !== Infinity && ms <= Date.now()
}

/**
 * The code a finished call counts as. Past its deadline grpc-js has already answered
 * DEADLINE_EXCEEDED on its own (without marking the call cancelled), whatever the handler ends
 * with; a call the client dropped counts as Canceled.
 */
const countedCode = (call: CancellableCall, code: number): number =>
  deadlinePassed(call) ? GrpcCode.DeadlineExceeded : call.cancelled ? GrpcCode.Canceled : code

/**
 * The server's call runner: two FiberSets (unary calls, streams) owned by the server's scope, and
 * the closing flag. Build it with `makeCallRunner` inside the server layer.
 */
export interface CallRunner {
  /** A unary handler for grpc-js. */
  readonly unary: <Req, Res>(
    method: string,
    f: (
      request: Req,
      call: grpc.ServerUnaryCall<Req, Res>
    ) => Effect.Effect<Res, EtcdError> | PendingWrite<Res, EtcdError>
  ) => grpc.handleUnaryCall<Req, Res>
  /** A bidi-streaming handler: `f` owns the call until its Effect ends (then OK, or the failure's status). */
  readonly bidi: <Req, Res>(
    method: string,
    f: (call: grpc.ServerDuplexStream<Req, Res>) => Effect.Effect<void, EtcdError, Scope.Scope>
  ) => grpc.handleBidiStreamingCall<Req, Res>
  /** A server-streaming handler. */
  readonly serverStream: <Req, Res>(
    method: string,
    f: (call: grpc.ServerWritableStream<Req, Res>) => Effect.Effect<void, EtcdError, Scope.Scope>
  ) => grpc.handleServerStreamingCall<Req, Res>
  /**
   * Graceful stop: refuse new calls, interrupt every stream (each ends with Unavailable), give
   * unary calls `grace` to finish (pending writes included), then interrupt what is left and
   * answer the pending writes still waiting with Unavailable.
   */
  readonly shutdown: (grace: Duration.DurationInput) => Effect.Effect<void>
  /** calls in flight (unary: fibers and pending writes; streams) */
  readonly inFlight: () => { readonly unary: number; readonly streams: number }
}

export const makeCallRunner = (
  metrics: CallMetrics = noCallMetrics,
  /** a server span per unary call (rpc-span.ts); undefined (off): handlers are not wrapped */
  tracing?: RpcTracing | undefined
): Effect.Effect<CallRunner, never, Scope.Scope> =>
  Effect.gen(function* () {
    const unarySet = yield* FiberSet.make<unknown, unknown>()
    const streamSet = yield* FiberSet.make<unknown, unknown>()
    // The runner that starts every unary call's fiber on the server's runtime (and logDefect's log
    // line): started synchronously so a handler that never suspends is answered in the same tick
    // (unsafePoll below); one that goes async is added to unarySet, which the server's scope
    // interrupts at shutdown. Streams start from streamSet's own runtime.
    // eslint-disable-next-line no-restricted-properties -- starts each unary call (then owned by unarySet when async) and logDefect's line
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    /** Logs a unary handler's defect (a bug) with the method name, on the server's runtime (its logger). */
    const logDefect = (method: string, cause: Cause.Cause<unknown>): void => {
      runFork(Effect.logError(`${method}: handler defect`, cause))
    }
    const runStream = yield* FiberSet.runtime(streamSet)<never>()
    let closing = false
    /**
     * Unary calls answered from a PendingWrite (a write waiting for durability without a fiber):
     * each entry answers its call once, from the write's outcome or from shutdown past its grace.
     */
    const pendingWrites = new Set<(exit: Exit.Exit<unknown, EtcdError>) => void>()
    /** shutdown waiting for pendingWrites to empty */
    let drained: Array<() => void> = []
    const settlePending = (
      entry: (exit: Exit.Exit<unknown, EtcdError>) => void,
      exit: Exit.Exit<unknown, EtcdError>
    ) => {
      if (!pendingWrites.delete(entry)) return // answered by shutdown already
      entry(exit)
      if (pendingWrites.size === 0 && drained.length > 0) {
        const ws = drained
        drained = []
        for (const w of ws) w()
      }
    }
    const awaitNoPendingWrites: Effect.Effect<void> = Effect.async<void>((resume) => {
      if (pendingWrites.size === 0) return resume(Effect.void)
      const w = () => resume(Effect.void)
      drained.push(w)
      return Effect.sync(() => {
        drained = drained.filter((x) => x !== w)
      })
    })

    /** Interrupts the fiber when the client cancels or the call's deadline passes. */
    const linkCancel = (call: CancellableCall, fiber: Fiber.RuntimeFiber<unknown, unknown>): (() => void) => {
      const onCancel = () => fiber.unsafeInterruptAsFork(FiberId.none)
      call.once("cancelled", onCancel)
      const left = deadlineMs(call) - Date.now()
      // setTimeout takes at most 2^31-1 ms (~24.8 days); a later deadline is as good as none
      const timer = left < MAX_TIMER_MS ? setTimeout(onCancel, Math.max(0, left)) : undefined
      return () => {
        call.removeListener("cancelled", onCancel)
        if (timer !== undefined) clearTimeout(timer)
      }
    }

    /**
     * The unary fast path: the handler's Effect starts at once on the server's runtime and, when it
     * ends without going async (reads, failed checks), is answered in the same tick — no FiberSet
     * entry, no 'cancelled' listener, no deadline timer, no observer. Only a call that suspends
     * (a write's durability wait) is tracked as the slow path: it joins the unary FiberSet (so
     * shutdown's grace and interruption apply) and gets its cancel/deadline link. A call that
     * finished synchronously cannot have been interrupted: the checks at the end (dropped, past its
     * deadline) are the same either way.
     */
    const unary: CallRunner["unary"] = (method, f) => {
      const handler = untracedUnary(method, f)
      return tracing === undefined ? handler : tracedUnary(tracing, method, handler)
    }

    const untracedUnary: CallRunner["unary"] = (method, f) => {
      const m = metrics.method(method)
      return (call, callback) => {
        m.onStart()
        if (closing) {
          m.onEnd(GrpcCode.Unavailable)
          return callback(serviceError(stoppedStatus()))
        }
        if ((call.request as unknown) instanceof MalformedRequest) {
          // etcd's refusal of a body it cannot decode (unmarshal-check.ts)
          m.onEnd(GrpcCode.Internal)
          return callback({ code: GrpcCode.Internal, details: (call.request as unknown as MalformedRequest).message })
        }
        const answer = (exit: Exit.Exit<unknown, EtcdError>): void => {
          const status = Exit.isSuccess(exit) ? undefined : causeToStatus(exit.cause)
          if (status !== undefined && Cause.isDie((exit as Exit.Failure<unknown, EtcdError>).cause)) {
            logDefect(method, (exit as Exit.Failure<unknown, EtcdError>).cause)
          }
          m.onEnd(countedCode(call, status === undefined ? GrpcCode.OK : status.code))
          // dropped by the client, or past its deadline (grpc-js has answered DEADLINE_EXCEEDED)
          if (call.cancelled || deadlinePassed(call)) return
          if (status === undefined) callback(null, (exit as Exit.Success<any, EtcdError>).value)
          else callback(serviceError(status))
        }
        let effect: Effect.Effect<unknown, EtcdError> | PendingWrite<unknown, EtcdError>
        try {
          effect = f(call.request, call)
        } catch (e) {
          effect = Exit.die(e)
        }
        if (effect instanceof PendingWrite) {
          // a write staged now, answered once durable: no fiber, no link (the write goes on even
          // if the call is dropped; `answer` then drops the answer and counts the call as such)
          const known = effect.poll()
          if (known !== undefined) return answer(known)
          const entry = (exit: Exit.Exit<unknown, EtcdError>): void => {
            try {
              answer(exit)
            } catch {
              // the transport is already gone: nothing left to tell the client
            }
          }
          pendingWrites.add(entry)
          effect.onDone((exit) => settlePending(entry, exit))
          return
        }
        // a handler that answered with a plain Exit (a read): no fiber at all
        if (Exit.isExit(effect)) return answer(effect as Exit.Exit<unknown, EtcdError>)
        const fiber = runFork(effect)
        const done = fiber.unsafePoll()
        if (done !== null) return answer(done)
        // slow path: the handler went async
        FiberSet.unsafeAdd(unarySet, fiber)
        const unlink = linkCancel(call, fiber)
        fiber.addObserver((exit) => {
          unlink()
          answer(exit)
        })
      }
    }

    const endStream = (
      call: CancellableCall & { end(): unknown; emit(event: "error", status: unknown): boolean },
      exit: Exit.Exit<void, EtcdError>,
      m: MethodMetrics
    ): void => {
      const status = Exit.isSuccess(exit) ? undefined : causeToStatus(exit.cause)
      m.onEnd(countedCode(call, status === undefined ? GrpcCode.OK : status.code))
      if (call.cancelled || deadlinePassed(call)) return
      try {
        if (status === undefined) call.end()
        else call.emit("error", { ...serviceError(status), metadata: undefined })
      } catch {
        // the transport is already gone: nothing left to tell the client
      }
    }

    const stream = <C extends CancellableCall & { end(): unknown; emit(event: "error", status: unknown): boolean }>(
      method: string,
      f: (call: C) => Effect.Effect<void, EtcdError, Scope.Scope>
    ) => {
      const m = metrics.method(method)
      return (call: C): void => {
        m.onStart()
        if (closing) {
          endStream(call, Exit.fail(Errors.stopped()), m)
          return
        }
        if (call.cancelled) return m.onEnd(countedCode(call, GrpcCode.Canceled))
        const fiber = runStream(logDefects(method)(Effect.scoped(Effect.suspend(() => f(call)))))
        const unlink = linkCancel(call, fiber)
        fiber.addObserver((exit) => {
          unlink()
          endStream(call, exit, m)
        })
      }
    }

    const shutdown = (grace: Duration.DurationInput): Effect.Effect<void> =>
      Effect.gen(function* () {
        closing = true
        yield* FiberSet.clear(streamSet)
        yield* Effect.zip(FiberSet.awaitEmpty(unarySet), awaitNoPendingWrites, { concurrent: true }).pipe(
          Effect.timeoutOption(Duration.decode(grace))
        )
        // Past the grace: a pending write still waiting is answered now, as an interrupted call
        // (Unavailable "etcdserver: server stopped"); its write goes on and the store commits it.
        for (const entry of Array.from(pendingWrites)) settlePending(entry, Exit.interrupt(FiberId.none))
        yield* FiberSet.clear(unarySet)
      })

    const count = (set: Iterable<unknown>): number => {
      let n = 0
      for (const _ of set) n++
      return n
    }

    return {
      unary,
      bidi: (method, f) => stream(method, f),
      serverStream: (method, f) => stream(method, f),
      shutdown,
      inFlight: () => ({ unary: count(unarySet) + pendingWrites.size, streams: count(streamSet) })
    } satisfies CallRunner
  })

// ---------------------------------------------------------------------------------------------
// reading and writing streams

/** The readable side of a grpc-js server stream (objectMode: one decoded message per read). */
export interface MessageSource<A> {
  read(): A | null
  readonly readableEnded: boolean
  readonly destroyed: boolean
  on(event: "readable", f: () => void): unknown
  once(event: "end" | "close", f: () => void): unknown
  once(event: "error", f: (e: unknown) => void): unknown
  removeListener(event: string, f: (...args: Array<any>) => void): unknown
}

/** A stream error reported by grpc-js while reading (e.g. an undecodable message). */
/** grpc-go's stream Recv words the same refusal differently from a unary call's decode */
const streamRefusal = (unary: string): string =>
  unary.replace(/^grpc: error unmarshalling request: /, "grpc: failed to unmarshal the received message ")

/** a refused message read after others, kept for the next read of its stream */
const malformedAhead = new WeakMap<object, MalformedRequest>()

export class StreamReadError {
  readonly _tag = "StreamReadError"
  constructor(readonly cause: unknown) {}
}

/**
 * Takes every message buffered now (a batch, never empty), synchronously: `null` at the end of the
 * inbound side (half-close, or the call torn down), `undefined` when nothing is buffered yet (wait
 * for 'readable'), an EtcdError (grpc-go's Recv refusal) for a message etcd could not decode — a
 * refused message read after others ends the batch and is answered on the next take.
 */
export const takeBatch = <A>(source: MessageSource<A>): Array<A> | null | undefined | EtcdError => {
  const refused = malformedAhead.get(source)
  if (refused !== undefined) return refusalError(refused)
  let out: Array<A> | undefined
  for (;;) {
    const m = source.read()
    if (m === null) break
    if ((m as unknown) instanceof MalformedRequest) {
      if (out === undefined) return refusalError(m as unknown as MalformedRequest)
      malformedAhead.set(source, m as unknown as MalformedRequest)
      break
    }
    ;(out ??= []).push(m)
  }
  if (out !== undefined) return out
  if (source.readableEnded || source.destroyed) return null
  return undefined
}

const refusalError = (r: MalformedRequest): EtcdError =>
  new EtcdError({ code: GrpcCode.Internal, message: streamRefusal(r.message) })

/**
 * Waits for the next messages and takes every one buffered (a batch, never empty), or `null` at the
 * end of the inbound side: half-close, or the call torn down. Pull-based: not reading leaves the
 * client throttled by HTTP/2 flow control.
 */
export const readBatch = <A>(source: MessageSource<A>): Effect.Effect<Array<A> | null, StreamReadError | EtcdError> =>
  Effect.async<Array<A> | null, StreamReadError | EtcdError>((resume) => {
    const answer = (r: Array<A> | null | EtcdError) => (r instanceof EtcdError ? Effect.fail(r) : Effect.succeed(r))
    const first = takeBatch(source)
    if (first !== undefined) {
      resume(answer(first))
      return
    }
    const cleanup = () => {
      source.removeListener("readable", onReadable)
      source.removeListener("end", onEnd)
      source.removeListener("close", onEnd)
      source.removeListener("error", onError)
    }
    const onReadable = () => {
      const r = takeBatch(source)
      if (r === undefined) return
      cleanup()
      resume(answer(r))
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(null))
    }
    const onError = (e: unknown) => {
      cleanup()
      resume(Effect.fail(new StreamReadError(e)))
    }
    source.on("readable", onReadable)
    source.once("end", onEnd)
    source.once("close", onEnd)
    source.once("error", onError)
    return Effect.sync(cleanup)
  })

/** The writable side of a grpc-js server stream. */
export interface MessageSink<A> {
  write(message: A): boolean
  readonly writableNeedDrain: boolean
  once(event: "drain", f: () => void): unknown
  removeListener(event: "drain", f: () => void): unknown
}

/**
 * Writes the messages in order and, if the stream's buffer went above its high-water mark, waits
 * for 'drain' before returning: the caller's loop cannot run ahead of the client by more than one
 * batch. A call torn down never drains; its fiber is interrupted by the cancellation instead.
 */
export const writeAll = <A>(sink: MessageSink<A>, messages: ReadonlyArray<A>): Effect.Effect<void> =>
  Effect.suspend(() => {
    for (let i = 0; i < messages.length; i++) sink.write(messages[i]!)
    if (!sink.writableNeedDrain) return Effect.void
    return Effect.async<void>((resume) => {
      const onDrain = () => resume(Effect.void)
      sink.once("drain", onDrain)
      return Effect.sync(() => sink.removeListener("drain", onDrain))
    })
  })
