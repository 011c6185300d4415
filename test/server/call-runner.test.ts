/**
 * The CallRunner's unary paths (grpc-bridge.ts), on fake calls: the fast path (the handler's Effect
 * ends without going async: answered in the same tick, nothing tracked) and the slow path (it
 * suspends, as a write's durability wait does: tracked in the unary FiberSet, linked to the
 * client's cancel and deadline, waited for and then interrupted by shutdown), and pending writes
 * (a PendingWrite from the store's write fast path: no fiber, answered from its callback, waited
 * for by shutdown's grace). Statuses, metrics and defect logging are the same on all three.
 */
import type * as grpc from "@grpc/grpc-js"
import { Deferred, Effect, Exit, Logger, Scope } from "effect"
import { EventEmitter } from "node:events"
import { describe, expect, it } from "vitest"
import { EtcdError, Errors, GrpcCode } from "../../src/errors.js"
import { PendingWrite } from "../../src/mvcc/pending-write.js"
import { type CallMetrics, type CallRunner, makeCallRunner } from "../../src/server/grpc-bridge.js"
import { MalformedRequest } from "../../src/server/unmarshal-check.js"

class FakeCall extends EventEmitter {
  cancelled = false
  constructor(
    readonly request: unknown,
    readonly deadline: number = Infinity
  ) {
    super()
  }
  getDeadline(): number {
    return this.deadline
  }
  /** the client resets the stream, as grpc-js reports it */
  cancel(): void {
    this.cancelled = true
    this.emit("cancelled")
  }
}

interface Answer {
  readonly error: Partial<grpc.StatusObject> | null
  readonly value?: unknown
}

const setup = async () => {
  const scope = Effect.runSync(Scope.make())
  const errors: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    if (logLevel._tag === "Error") errors.push(String(Array.isArray(message) ? message[0] : message))
  })
  const counted: Array<[string, number | "start"]> = []
  const metrics: CallMetrics = {
    method: (name) => ({
      onStart: () => counted.push([name, "start"]),
      onEnd: (code) => counted.push([name, code])
    })
  }
  const runner: CallRunner = await Effect.runPromise(
    Scope.extend(makeCallRunner(metrics), scope).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  )
  /** Runs one call; `answers` fills when (and if) the callback is called. */
  const invoke = <Res>(
    method: string,
    f: (req: unknown) => Effect.Effect<Res, EtcdError> | PendingWrite<Res, EtcdError>,
    call: FakeCall = new FakeCall("req")
  ) => {
    const answers: Array<Answer> = []
    const handler = runner.unary<unknown, Res>(method, (req) => f(req))
    handler(
      call as never,
      ((error: Partial<grpc.StatusObject> | null, value?: unknown) => answers.push({ error, value })) as never
    )
    return { call, answers }
  }
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  return { runner, errors, counted, invoke, close }
}

const until = async (p: () => boolean): Promise<void> => {
  while (!p()) await new Promise((r) => setTimeout(r, 5))
}

describe("CallRunner unary fast path (the handler ends without going async)", () => {
  it("a success is answered before the handler returns, and nothing stays in flight", async () => {
    const t = await setup()
    const { answers } = t.invoke("Range", (req) => Effect.succeed({ echo: req }))
    expect(answers).toEqual([{ error: null, value: { echo: "req" } }])
    expect(t.runner.inFlight()).toEqual({ unary: 0, streams: 0 })
    expect(t.counted).toEqual([
      ["Range", "start"],
      ["Range", GrpcCode.OK]
    ])
    await t.close()
  })

  it("an EtcdError is answered with its code and etcd's text; a defect with Internal and one log line", async () => {
    const t = await setup()
    const failed = t.invoke("Put", () => Effect.fail(Errors.tooManyOps()))
    expect(failed.answers).toEqual([
      { error: { code: GrpcCode.InvalidArgument, details: Errors.tooManyOps().message } }
    ])
    const thrown = t.invoke("Txn", () => {
      throw new Error("bug")
    })
    expect(thrown.answers).toEqual([
      { error: { code: GrpcCode.Internal, details: "etcd-effect: internal error: bug" } }
    ])
    await until(() => t.errors.length > 0)
    expect(t.errors).toEqual(["Txn: handler defect"])
    expect(t.counted.filter(([, c]) => c !== "start")).toEqual([
      ["Put", GrpcCode.InvalidArgument],
      ["Txn", GrpcCode.Internal]
    ])
    await t.close()
  })

  it("a handler that answers with a plain Exit (a read) is answered the same way, with no fiber", async () => {
    const t = await setup()
    const ok = t.invoke("Range", () => Exit.succeed("kv"))
    const refused = t.invoke("Range", () => Exit.fail(Errors.futureRev()))
    expect(ok.answers).toEqual([{ error: null, value: "kv" }])
    expect(refused.answers).toEqual([{ error: { code: Errors.futureRev().code, details: Errors.futureRev().message } }])
    expect(t.counted.filter(([, c]) => c !== "start")).toEqual([
      ["Range", GrpcCode.OK],
      ["Range", Errors.futureRev().code]
    ])
    await t.close()
  })

  it("a body etcd cannot decode is refused with Internal, the handler never runs", async () => {
    const t = await setup()
    let ran = false
    const { answers } = t.invoke(
      "Put",
      () => Effect.sync(() => (ran = true)),
      new FakeCall(new MalformedRequest("grpc: error unmarshalling request: unexpected EOF"))
    )
    expect(ran).toBe(false)
    expect(answers).toEqual([
      { error: { code: GrpcCode.Internal, details: "grpc: error unmarshalling request: unexpected EOF" } }
    ])
    await t.close()
  })
})

describe("CallRunner unary slow path (the handler waits, as for durability)", () => {
  it("is tracked while it waits and answered when the wait ends", async () => {
    const t = await setup()
    const durable = Effect.runSync(Deferred.make<void>())
    const { answers } = t.invoke("Put", () => Effect.as(Deferred.await(durable), "put"))
    expect(answers).toEqual([])
    expect(t.runner.inFlight().unary).toBe(1)
    Effect.runSync(Deferred.succeed(durable, undefined))
    await until(() => answers.length > 0)
    expect(answers).toEqual([{ error: null, value: "put" }])
    expect(t.runner.inFlight().unary).toBe(0)
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.OK])
    await t.close()
  })

  it("a client cancel interrupts the wait; nothing is written to the call; it counts as Canceled", async () => {
    const t = await setup()
    let interrupted = false
    const { call, answers } = t.invoke("Put", () =>
      Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
    )
    call.cancel()
    await until(() => interrupted && t.runner.inFlight().unary === 0)
    expect(answers).toEqual([])
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.Canceled])
    await t.close()
  })

  it("a deadline passing during an interruptible wait interrupts it; counted DeadlineExceeded, not answered", async () => {
    const t = await setup()
    let interrupted = false
    const { answers } = t.invoke(
      "Range",
      () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))),
      new FakeCall("req", Date.now() + 30)
    )
    await until(() => interrupted && t.runner.inFlight().unary === 0)
    expect(answers).toEqual([])
    expect(t.counted.at(-1)).toEqual(["Range", GrpcCode.DeadlineExceeded])
    await t.close()
  })

  it("a deadline passing during the durability wait (uninterruptible): the write completes, counted DeadlineExceeded, not answered", async () => {
    const t = await setup()
    const durable = Effect.runSync(Deferred.make<void>())
    let completed = false
    const call = new FakeCall("req", Date.now() + 30)
    const { answers } = t.invoke(
      "Put",
      () => Effect.uninterruptible(Effect.tap(Deferred.await(durable), () => (completed = true))),
      call
    )
    await until(() => Date.now() > call.deadline + 20)
    // the interruption waits for the uninterruptible region: the call is still in flight
    expect(t.runner.inFlight().unary).toBe(1)
    Effect.runSync(Deferred.succeed(durable, undefined))
    await until(() => t.runner.inFlight().unary === 0)
    expect(completed).toBe(true)
    expect(answers).toEqual([])
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.DeadlineExceeded])
    await t.close()
  })

  it("shutdown during the durability wait: new calls are refused, the waiting one finishes within the grace", async () => {
    const t = await setup()
    const durable = Effect.runSync(Deferred.make<void>())
    const waiting = t.invoke("Put", () => Effect.uninterruptible(Effect.as(Deferred.await(durable), "put")))
    const stopped = Effect.runPromise(t.runner.shutdown("10 seconds"))
    const refused = t.invoke("Range", () => Effect.succeed("never"))
    expect(refused.answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: Errors.stopped().message } }])
    expect(waiting.answers).toEqual([])
    Effect.runSync(Deferred.succeed(durable, undefined))
    await stopped
    expect(waiting.answers).toEqual([{ error: null, value: "put" }])
    expect(t.counted.filter(([, c]) => c !== "start")).toEqual([
      ["Range", GrpcCode.Unavailable],
      ["Put", GrpcCode.OK]
    ])
    await t.close()
  })

  it("shutdown past the grace interrupts a waiting call: it ends with Unavailable 'etcdserver: server stopped'", async () => {
    const t = await setup()
    const waiting = t.invoke("Put", () => Effect.never)
    const fast = t.invoke("Range", () => Effect.succeed("r"))
    expect(fast.answers).toEqual([{ error: null, value: "r" }])
    await Effect.runPromise(t.runner.shutdown("20 millis"))
    expect(waiting.answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: Errors.stopped().message } }])
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.Unavailable])
    expect(t.runner.inFlight().unary).toBe(0)
    await t.close()
  })

  it("a failure after the wait keeps its status", async () => {
    const t = await setup()
    const { answers } = t.invoke("Put", () =>
      Effect.zipRight(Effect.yieldNow(), Effect.fail(new EtcdError({ code: GrpcCode.Unavailable, message: "x" })))
    )
    await until(() => answers.length > 0)
    expect(answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: "x" } }])
    await t.close()
  })
})

describe("CallRunner pending writes (the store's write fast path: no fiber, answered from a callback)", () => {
  it("is in flight until the write completes, then answered; counted once", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    const { answers } = t.invoke("Put", () => w)
    expect(answers).toEqual([])
    expect(t.runner.inFlight()).toEqual({ unary: 1, streams: 0 })
    w.complete(Exit.succeed("put"))
    // answered in the completing callback itself: no fiber to resume
    expect(answers).toEqual([{ error: null, value: "put" }])
    expect(t.runner.inFlight().unary).toBe(0)
    expect(t.counted).toEqual([
      ["Put", "start"],
      ["Put", GrpcCode.OK]
    ])
    await t.close()
  })

  it("a write already complete is answered at once", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    w.complete(Exit.succeed("put"))
    const { answers } = t.invoke("Put", () => w)
    expect(answers).toEqual([{ error: null, value: "put" }])
    expect(t.runner.inFlight().unary).toBe(0)
    await t.close()
  })

  it("a failure keeps its status (the store stopped: Unavailable 'etcdserver: server stopped'); a defect is Internal and logged", async () => {
    const t = await setup()
    const failed = new PendingWrite<string, EtcdError>()
    const died = new PendingWrite<string, EtcdError>()
    const a = t.invoke("Put", () => failed)
    const d = t.invoke("Txn", () => died)
    failed.complete(Exit.fail(Errors.stopped()))
    died.complete(Exit.die(new Error("listener bug")))
    expect(a.answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: Errors.stopped().message } }])
    expect(d.answers).toEqual([
      { error: { code: GrpcCode.Internal, details: "etcd-effect: internal error: listener bug" } }
    ])
    await until(() => t.errors.length > 0)
    expect(t.errors).toEqual(["Txn: handler defect"])
    await t.close()
  })

  it("a client cancel: the write goes on, nothing is written to the call, it counts as Canceled", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    const { call, answers } = t.invoke("Put", () => w)
    call.cancel()
    w.complete(Exit.succeed("put"))
    expect(answers).toEqual([])
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.Canceled])
    expect(t.runner.inFlight().unary).toBe(0)
    await t.close()
  })

  it("a deadline passing during the wait: not answered (the transport answers DEADLINE_EXCEEDED), counted DeadlineExceeded", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    const call = new FakeCall("req", Date.now() + 20)
    const { answers } = t.invoke("Put", () => w, call)
    await until(() => Date.now() > call.deadline + 5)
    w.complete(Exit.succeed("put"))
    expect(answers).toEqual([])
    expect(t.counted.at(-1)).toEqual(["Put", GrpcCode.DeadlineExceeded])
    await t.close()
  })

  it("shutdown's grace waits for a pending write; new calls are refused meanwhile", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    const waiting = t.invoke("Put", () => w)
    let stopped = false
    const stopping = Effect.runPromise(t.runner.shutdown("10 seconds")).then(() => (stopped = true))
    const refused = t.invoke("Put", () => Effect.succeed("never"))
    expect(refused.answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: Errors.stopped().message } }])
    await new Promise((r) => setTimeout(r, 30))
    expect(stopped).toBe(false)
    w.complete(Exit.succeed("put"))
    await stopping
    expect(waiting.answers).toEqual([{ error: null, value: "put" }])
    await t.close()
  })

  it("shutdown past the grace answers a pending write with Unavailable at once; its later outcome is dropped", async () => {
    const t = await setup()
    const w = new PendingWrite<string, EtcdError>()
    const waiting = t.invoke("Put", () => w)
    await Effect.runPromise(t.runner.shutdown("20 millis"))
    expect(waiting.answers).toEqual([{ error: { code: GrpcCode.Unavailable, details: Errors.stopped().message } }])
    expect(t.runner.inFlight().unary).toBe(0)
    w.complete(Exit.succeed("put"))
    expect(waiting.answers).toHaveLength(1)
    expect(t.counted.filter(([, c]) => c !== "start")).toEqual([["Put", GrpcCode.Unavailable]])
    await t.close()
  })
})
